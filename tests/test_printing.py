"""Tensor printing: repr must equal PyTorch's character for character.

Each case builds the same tensor in cthtorch and in torch from one numpy array
and compares repr(). Print options are set identically in both and reset after
every test.
"""
import math

import numpy as np
import pytest

import oracle
import cthtorch as ct

torch = oracle.require_torch()

FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]


@pytest.fixture(autouse=True)
def _reset_print_options():
    yield
    for lib in (ct, torch):
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)


def both(arr, dtype, requires_grad=False):
    """(cthtorch tensor, torch tensor) holding numpy `arr` converted to `dtype`."""
    arr = np.array(arr, order="C")   # (np.ascontiguousarray would make 0-d arrays 1-d)
    assert arr.ndim == np.ndim(arr)
    out = []
    for lib in (ct, torch):
        t = lib.from_numpy(arr.copy()).to(getattr(lib, dtype))
        if requires_grad:
            t.requires_grad_()
        out.append(t)
    return out


def assert_same_repr(arr, dtype):
    a, b = both(arr, dtype)
    assert repr(a) == repr(b)


def set_both(**kw):
    ct.set_printoptions(**kw)
    torch.set_printoptions(**kw)


# ---------------------------------------------------------------- value sets

_rng = np.random.default_rng(1234)

FLOAT_VALUES = {
    "small_ints": np.array([[1., 2.], [3., 4.]]),
    "randn": _rng.standard_normal((3, 4)),
    "mixed_sign": np.array([-1.5, 0.25, 3.125, -10.0]),
    "huge": np.array([1.0e10, 2.5e9, -3.0e10]),
    "huge_ints": np.array([1.0e9, 2.0, 3.0]),
    "big_ratio": np.array([0.01, 5.0, 123.456]),
    "big_ratio_ints": np.array([1., 2000., 3.]),
    "tiny": np.array([1.0e-6, 2.5e-5, 3.0e-7]),
    "just_below_1e-4": np.array([9.0e-5, 0.5]),
    "around_1e8": np.array([99999999.0, 1.5]),
    "nan_inf": np.array([1.5, np.nan, np.inf, -np.inf]),
    "only_nan_inf": np.array([np.nan, np.inf, -np.inf]),
    "int_with_nan": np.array([1.0, np.nan, 3.0]),
    "zeros": np.zeros((2, 3)),
    "neg_zero": np.array([-0.0, 0.0, 1.0]),
    "neg_zero_frac": np.array([-0.0, 0.5]),
    "rounding": np.array([0.99995, 1.00004, 2.5e-4]),
    "sci_nan": np.array([1.0e-8, np.nan, 1.0]),
    "wide_values": np.array([123456.789, 0.001, -7.0]),
}

INT_VALUES = {
    "small": np.array([[1, -2, 3], [4, 5, -6]]),
    "range": np.arange(-50, 50, 7),
    "zeros": np.zeros((2, 2)),
    "mixed_width": np.array([1, 100, -1000, 7]),
}

SHAPES = [(), (1,), (5,), (2, 3), (2, 3, 4), (2, 2, 2, 2), (1, 1, 1)]


def _fill(shape, values):
    n = int(np.prod(shape)) if shape else 1
    flat = np.resize(values.ravel(), n)
    return flat.reshape(shape)


# ---------------------------------------------------------------- the table

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_VALUES))
def test_float_values(dtype, name):
    assert_same_repr(FLOAT_VALUES[name].astype(np.float64), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["randn", "small_ints", "nan_inf", "tiny"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float_shapes(dtype, name, shape):
    assert_same_repr(_fill(shape, FLOAT_VALUES[name]), dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_VALUES))
def test_int_values(dtype, name):
    vals = INT_VALUES[name]
    if dtype == "uint8":
        vals = np.abs(vals)
    assert_same_repr(vals.astype(np.int64), dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_int_bool_shapes(dtype, shape):
    vals = np.arange(1, 40) % 7 if dtype != "bool" else np.array([True, False, False])
    assert_same_repr(_fill(shape, vals), dtype)


def test_int64_extremes():
    info = np.iinfo(np.int64)
    assert_same_repr(np.array([info.min, 0, info.max]), "int64")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4), (0, 0)], ids=str)
def test_empty(dtype, shape):
    assert_same_repr(np.zeros(shape), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "bool"])
@pytest.mark.parametrize("shape", [(1001,), (2000,), (40, 30), (12, 10, 10), (5, 6, 7, 8), (1, 1001), (1001, 1)],
                         ids=str)
def test_summarised(dtype, shape):
    vals = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 3.0
    if dtype == "bool":
        vals = (vals.astype(np.int64) % 3) == 0
    elif dtype != "float32" and dtype != "float16":
        vals = np.floor(vals)
    assert_same_repr(vals, dtype)


def test_summarised_widths_come_from_shown_values_only():
    # the hidden middle holds a huge value; it must not change the format
    vals = np.ones(2000)
    vals[1000] = 1.0e12
    vals[:3] = [0.5, 1.25, 2.0]
    assert_same_repr(vals, "float32")


@pytest.mark.parametrize("n", [7, 8, 9, 12, 13, 20, 60])
@pytest.mark.parametrize("scale", [1.0, 1000.0, 1.0e-6])
def test_long_rows_wrap(n, scale):
    vals = _rng.standard_normal(n) * scale
    assert_same_repr(vals, "float32")
    assert_same_repr(np.stack([vals, -vals]), "float64")
    assert_same_repr(np.arange(n * 5) * 1000003, "int64")


# ---------------------------------------------------------------- print options

OPTION_SETS = [
    dict(precision=2),
    dict(precision=8),
    dict(precision=0),
    dict(threshold=5),
    dict(threshold=0),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=0),
    dict(linewidth=40),
    dict(linewidth=10),
    dict(linewidth=200),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
]

OPTION_TENSORS = {
    "matrix": (np.arange(1, 21, dtype=np.float64).reshape(4, 5) / 7, "float32"),
    "ints": (np.arange(24).reshape(2, 3, 4) * 37, "int64"),
    "huge": (np.array([1.0e10, 1.0, 2.0]), "float64"),
    "tiny": (np.array([1.0e-6, 0.5]), "float32"),
    "whole": (np.array([[1.0, 2.0, 300.0]]), "float32"),
    "zeros": (np.zeros(4), "float32"),
    "scalar": (np.array(3.14159265), "float64"),
    "big": (np.arange(3000, dtype=np.float64).reshape(30, 100) / 9, "float32"),
    "half": (np.array([0.1, 2.0, 65504.0]), "float16"),
    "bool": (np.array([True, False]), "bool"),
    "empty": (np.zeros((0, 2)), "float32"),
}


@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda d: ",".join("%s=%s" % kv for kv in d.items()))
@pytest.mark.parametrize("name", sorted(OPTION_TENSORS))
def test_print_options(opts, name):
    arr, dtype = OPTION_TENSORS[name]
    set_both(**opts)
    assert_same_repr(arr, dtype)


def test_get_printoptions_matches_torch():
    assert ct.get_printoptions() == torch._tensor_str.get_printoptions()
    for opts in OPTION_SETS:
        set_both(**opts)
        assert ct.get_printoptions() == torch._tensor_str.get_printoptions()
    ct.set_printoptions(profile="default")
    assert ct.get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


def test_set_printoptions_resets_sci_mode_when_omitted():
    ct.set_printoptions(sci_mode=True)
    ct.set_printoptions(precision=3)
    assert ct.get_printoptions()["sci_mode"] is None
    assert ct.get_printoptions()["precision"] == 3


def test_full_profile_threshold_is_infinite():
    ct.set_printoptions(profile="full")
    assert ct.get_printoptions()["threshold"] == math.inf
    assert "..." not in repr(ct.arange(5000))


def test_printoptions_context_manager():
    from cthtorch._tensor_str import printoptions
    x, tx = both(np.array([1.123456, 2.0]), "float32")
    with printoptions(precision=2, sci_mode=True):
        with torch._tensor_str.printoptions(precision=2, sci_mode=True):
            assert repr(x) == repr(tx)
            assert ct.get_printoptions()["precision"] == 2
    assert ct.get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    assert repr(x) == repr(tx)


def test_printoptions_restores_after_error():
    from cthtorch._tensor_str import printoptions
    with pytest.raises(ValueError):
        with printoptions(linewidth=10):
            raise ValueError("boom")
    assert ct.get_printoptions()["linewidth"] == 80


# ---------------------------------------------------------------- dtype suffix and default dtype

@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
def test_dtype_suffix_under_float64_default(dtype):
    for lib in (ct, torch):
        lib.set_default_dtype(lib.float64)
    assert_same_repr(np.array([1.5, 2.0]) if dtype in FLOAT_DTYPES else np.array([1, 0]), dtype)
    assert_same_repr(np.zeros((0, 2)), dtype)


def test_dtype_suffix_rules():
    assert repr(ct.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ct.tensor([1, 2], dtype=ct.int32)) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(ct.tensor([True])) == "tensor([True])"
    assert repr(ct.tensor([1.0], dtype=ct.float64)) == "tensor([1.], dtype=torch.float64)"
    assert repr(ct.zeros(0, dtype=ct.int64)) == "tensor([], dtype=torch.int64)"
    assert repr(ct.zeros(0, 3)) == "tensor([], size=(0, 3))"


# ---------------------------------------------------------------- autograd suffixes

def test_requires_grad_suffix():
    a, b = both(np.array([[1.0, 2.0], [3.0, 4.0]]), "float32", requires_grad=True)
    assert repr(a) == repr(b)
    assert repr(a).endswith("requires_grad=True)")


@pytest.mark.parametrize("op", ["add", "mul", "sum", "view", "select", "exp", "t"])
def test_grad_fn_suffix(op):
    a, b = both(np.array([[1.0, 2.0], [3.0, 4.0]]), "float32", requires_grad=True)
    fns = {
        "add": lambda t: t + 1,
        "mul": lambda t: t * 2,
        "sum": lambda t: t.sum(),
        "view": lambda t: t.view(4),
        "select": lambda t: t[0],
        "exp": lambda t: t.exp(),
        "t": lambda t: t.t(),
    }
    ra, rb = repr(fns[op](a)), repr(fns[op](b))
    assert ra == rb
    assert "grad_fn=<" in ra


def test_grad_fn_suffix_wraps_long_lines():
    vals = np.arange(18, dtype=np.float64).reshape(2, 9) * 1.5
    a, b = both(vals, "float64", requires_grad=True)
    assert repr(a * 2) == repr(b * 2)
    assert repr(a) == repr(b)
    set_both(linewidth=30)
    assert repr(a * 2) == repr(b * 2)


def test_detached_and_no_grad_have_no_suffix():
    a, b = both(np.array([1.0, 2.0]), "float32", requires_grad=True)
    assert repr((a * 2).detach()) == repr((b * 2).detach()) == "tensor([2., 4.])"
    with ct.no_grad():
        assert repr(a * 2) == "tensor([2., 4.])"


def test_grad_fn_read_through_type_name():
    # the suffix names the node's class, as PyTorch does
    from cthtorch._tensor_str import _str
    a = ct.ones(2, requires_grad=True)
    y = a + 1
    assert _str(y).endswith("grad_fn=<%s>)" % type(y.grad_fn).__name__)


# ---------------------------------------------------------------- wrappers

def test_str_equals_repr_and_direct_call():
    from cthtorch._tensor_str import _str
    x = ct.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert str(x) == repr(x) == _str(x)


def test_tensor_contents_replaces_values():
    from cthtorch._tensor_str import _str
    x = ct.tensor([1, 2], dtype=ct.int32)
    assert _str(x, tensor_contents="[...]") == "tensor([...], dtype=torch.int32)"


def test_parameter_repr():
    import cthtorch.nn
    vals = np.array([[0.5, -1.0], [2.0, 3.25]], dtype=np.float32)
    p = ct.nn.Parameter(ct.from_numpy(vals.copy()))
    q = torch.nn.Parameter(torch.from_numpy(vals.copy()))
    assert repr(p) == repr(q)


def test_subclass_prefix():
    class Mine(ct.Tensor):
        pass

    class TMine(torch.Tensor):
        pass

    a = ct.Tensor._make_subclass(Mine, ct.tensor([1.0, 2.0]))
    b = torch.Tensor._make_subclass(TMine, torch.tensor([1.0, 2.0]))
    assert repr(a) == repr(b).replace("TMine", "Mine") == "Mine([1., 2.])"


def test_noncontiguous_views():
    vals = np.arange(24, dtype=np.float64).reshape(4, 6) / 4
    a, b = both(vals, "float32")
    assert repr(a.t()) == repr(b.t())
    assert repr(a[:, ::2]) == repr(b[:, ::2])
    assert repr(a[1]) == repr(b[1])
    assert repr(a[1, 2]) == repr(b[1, 2])


# ---------------------------------------------------------------- randomized sweep

def _random_case(rng):
    """A random (array, dtype, options) triple; seeds make failures reproducible."""
    dtype = rng.choice(FLOAT_DTYPES + INT_DTYPES + ["bool"])
    ndim = int(rng.integers(0, 5))
    big = rng.random() < 0.15
    shape = tuple(int(rng.integers(1, 40 if big else 6)) for _ in range(ndim))
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        arr = rng.random(n) < 0.5
    elif dtype in INT_DTYPES:
        lo, hi = (0, 256) if dtype == "uint8" else (-100, 100)
        arr = rng.integers(lo, hi, n)
    else:
        scale = 10.0 ** rng.integers(-9, 12)
        arr = rng.standard_normal(n) * scale
        if rng.random() < 0.3:
            arr = np.round(arr)
        if rng.random() < 0.2:
            arr[rng.integers(0, n, 2)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], 2)
    opts = {}
    if rng.random() < 0.4:
        for key, choices in (("precision", [0, 1, 2, 6]), ("threshold", [3, 10, 50]),
                             ("edgeitems", [0, 1, 2, 4]), ("linewidth", [20, 50, 120]),
                             ("sci_mode", [True, False])):
            if rng.random() < 0.35:
                opts[key] = choices[int(rng.integers(0, len(choices)))]
    return arr.reshape(shape), str(dtype), opts


@pytest.mark.parametrize("seed", range(120))
def test_random_sweep(seed):
    arr, dtype, opts = _random_case(np.random.default_rng(seed))
    set_both(**opts)
    a, b = both(arr, dtype, requires_grad=dtype in FLOAT_DTYPES and seed % 3 == 0)
    assert repr(a) == repr(b), (dtype, arr.shape, opts)


# ---------------------------------------------------------------- corners

@pytest.mark.parametrize("vals", [
    [1.0e300, -1.0e-300],           # float64 extremes
    [5.0e-324, 1.0],                # a denormal
    [123456789.0],                  # whole and above 1e8: scientific
    [0.1, 0.2, 0.30000000000000004],
    [-1.0, -2.0, -3.0],
])
def test_float64_corners(vals):
    assert_same_repr(np.array(vals), "float64")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_overflow_and_subnormal(dtype):
    assert_same_repr(np.array([70000.0, 1.0e-7, 1.0]), dtype)


def test_edgeitems_larger_than_dims():
    set_both(threshold=10, edgeitems=5)
    assert_same_repr(np.arange(60, dtype=np.float64).reshape(3, 20), "float32")


def test_scalar_with_zero_edgeitems_names_its_size():
    set_both(edgeitems=0)
    a, b = both(np.array(2.5), "float32")
    assert repr(a) == repr(b) == "tensor(2.5000, size=())"


def test_suffixes_wrap_at_linewidth():
    # a row filling the line pushes the dtype suffix onto its own line
    vals = np.arange(1, 13) * 1000001
    assert_same_repr(vals, "int32")
    assert_same_repr(vals.reshape(2, 6), "int32")
    set_both(linewidth=25)
    assert_same_repr(np.zeros((0, 3)), "int16")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
def test_zero_dim(dtype):
    a, b = both(np.array(7), dtype)
    assert a.dim() == 0
    assert repr(a) == repr(b)
    assert repr(a).startswith("tensor(7") or repr(a).startswith("tensor(True")
