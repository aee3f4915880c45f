"""Tensor creation: factories, tensor(), legacy constructors, dtypes — against torch and numpy."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def same(a, b):
    """cthtorch tensor a equals torch tensor b in dtype, shape and values."""
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    if b.dtype == torch.bfloat16:
        b = b.float()
        a = a.float()
    np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2, 3], [True, False], [[1, 2], [3, 4]], 3, 2.5, True, [], [[]],
    [[1.5, 2], [3, 4]], [1, 2.0, True], [[[1]], [[2]]],
])
def test_tensor_infers_like_torch(data):
    same(ct.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("dt", DTYPES)
def test_tensor_with_dtype(dt):
    data = [[0, 1, 2], [3, 4, 5]]
    same(ct.tensor(data, dtype=getattr(ct, dt)), torch.tensor(data, dtype=getattr(torch, dt)))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_, np.float16])
def test_tensor_from_numpy_copies(dt):
    a = np.arange(6).reshape(2, 3).astype(dt)
    t = ct.tensor(a)
    same(t, torch.tensor(a))
    a.flat[0] = 1
    assert t.tolist()[0][0] == 0


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ct.from_numpy(a)
    t[0, 0] = 42
    assert a[0, 0] == 42
    a[1, 2] = -1
    assert t[1, 2].item() == -1
    n = t.numpy()
    n[0, 1] = 7
    assert a[0, 1] == 7
    # the array stays alive while the tensor lives
    del a, n
    import gc
    gc.collect()
    assert t.tolist() == [[42.0, 7.0, 2.0], [3.0, 4.0, -1.0]]


def test_from_numpy_strided_and_errors():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    t = ct.from_numpy(a)
    assert t.stride() == (4, 2) and t.tolist() == a.tolist()
    with pytest.raises(ValueError, match="negative"):
        ct.from_numpy(np.arange(4)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        ct.from_numpy(np.arange(4, dtype=np.uint16))
    assert ct.tensor(np.array([1 + 2j])).tolist() == [1 + 2j]   # complex128 is a dtype (tests/test_complex.py)
    with pytest.raises(TypeError, match="expected np.ndarray"):
        ct.from_numpy([1, 2])
    ro = np.arange(3, dtype=np.float32)
    ro.setflags(write=False)
    with warnings.catch_warnings():   # its warning comes once per process (tests/test_arg_parsing.py)
        warnings.simplefilter("ignore")
        t = ct.from_numpy(ro)
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_numpy_roundtrip_and_array_protocol():
    t = ct.arange(6).reshape(2, 3)
    assert np.asarray(t).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert np.array(t.float()).dtype == np.float32
    assert t.numpy().dtype == np.int64
    x = ct.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Use tensor.detach\\(\\).numpy\\(\\)"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 0, 2)])
def test_sized_factories(fn, shape):
    a = getattr(ct, fn)(*shape) if shape else getattr(ct, fn)(())
    b = getattr(torch, fn)(*shape) if shape else getattr(torch, fn)(())
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    if fn != "empty":
        same(a, b)
    same(getattr(ct, fn)(shape, dtype=ct.int32) if fn != "empty" else ct.zeros(shape, dtype=ct.int32),
         getattr(torch, fn)(shape, dtype=torch.int32) if fn != "empty" else torch.zeros(shape, dtype=torch.int32))


def test_full_arange_linspace_logspace_eye():
    same(ct.full((2, 2), 7), torch.full((2, 2), 7))
    same(ct.full((2,), 1.5), torch.full((2,), 1.5))
    same(ct.full((2,), True), torch.full((2,), True))
    for args in [(5,), (1, 7, 2), (0.5, 3), (10, 0, -3), (0, 1, 0.1)]:
        a, b = ct.arange(*args), torch.arange(*args)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.tolist(), b.tolist(), rtol=1e-6)
    np.testing.assert_allclose(ct.linspace(0, 1, 7).tolist(), torch.linspace(0, 1, 7).tolist(), rtol=1e-6)
    np.testing.assert_allclose(ct.linspace(-3, 3, 1).tolist(), torch.linspace(-3, 3, 1).tolist())
    np.testing.assert_allclose(ct.logspace(0, 2, 3).tolist(), torch.logspace(0, 2, 3).tolist(), rtol=1e-6)
    same(ct.eye(3), torch.eye(3))
    same(ct.eye(2, 4, dtype=ct.int64), torch.eye(2, 4, dtype=torch.int64))
    e = ct.empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.shape == (2, 3)


def test_like_factories():
    x = ct.ones(2, 3, dtype=ct.float64)
    for fn in ["zeros_like", "ones_like", "empty_like"]:
        y = getattr(ct, fn)(x)
        assert y.shape == x.shape and y.dtype == ct.float64
    assert ct.full_like(x, 3).tolist() == [[3.0] * 3] * 2
    assert ct.zeros_like(x, dtype=ct.int32).dtype == ct.int32


def test_requires_grad_keyword_and_errors():
    assert ct.zeros(2, requires_grad=True).requires_grad
    assert ct.tensor([1.0], requires_grad=True).is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        ct.zeros(2, dtype=ct.int64, requires_grad=True)


def test_default_dtype():
    assert ct.get_default_dtype() == ct.float32
    ct.set_default_dtype(ct.float64)
    try:
        assert ct.tensor([1.0]).dtype == ct.float64
        assert ct.zeros(1).dtype == ct.float64
        assert (ct.tensor([1]) / 2).dtype == ct.float64
    finally:
        ct.set_default_dtype(ct.float32)
    with pytest.raises(TypeError):
        ct.set_default_dtype(ct.int64)


def test_legacy_constructors():
    assert ct.Tensor(2, 3).shape == (2, 3) and ct.Tensor(2, 3).dtype == ct.float32
    assert ct.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert ct.Tensor().shape == (0,)
    assert ct.FloatTensor(2).dtype == ct.float32
    assert ct.LongTensor([1, 2]).dtype == ct.int64
    assert ct.DoubleTensor([[1]]).dtype == ct.float64
    assert ct.ByteTensor(3).dtype == ct.uint8
    assert ct.BoolTensor([True]).dtype == ct.bool
    assert ct.IntTensor([1]).dtype == ct.int32
    x = ct.zeros(2, dtype=ct.int64)
    assert isinstance(x, ct.LongTensor) and not isinstance(x, ct.FloatTensor)
    assert isinstance(x, ct.Tensor)
    assert x.type() == "torch.LongTensor"
    assert x.type(ct.float32).dtype == ct.float32
    assert x.type("torch.DoubleTensor").dtype == ct.float64


def test_type_of_the_tensor_class_is_the_default_dtype():
    """PyTorch-GAN's cyclegan/srgan/munit: Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor;
    batch.type(Tensor)"""
    for lib in (ct, torch):
        x = lib.ones(2, dtype=lib.int32)
        assert x.type(lib.Tensor).dtype == lib.float32 and x.type("torch.Tensor").dtype == lib.float32
        y = lib.ones(2)
        assert y.type(lib.Tensor) is y
        old = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            assert x.type(lib.Tensor).dtype == lib.float64
        finally:
            lib.set_default_dtype(old)
        with pytest.raises(ValueError, match="invalid type: 'Parameter'"):
            x.type(lib.nn.Parameter)
        with pytest.raises(ValueError, match="invalid type: 'int'"):
            x.type(int)
        odd = type("Odd", (), {"__module__": None})   # __module__ not a str: refused by its name, not a SystemError
        with pytest.raises(ValueError, match="invalid type: 'Odd'"):
            x.type(odd)


def test_type_names_are_torch_s_and_cuda_names_go_to_the_gpu():
    """a name needs torch's "torch." prefix ("FloatTensor" and "x.Tensor" are invalid, as in torch), and a
    torch.cuda name or class converts to the GPU: it raises where there is none instead of staying on the CPU"""
    for lib in (ct, torch):
        x = lib.ones(2, dtype=lib.int64)
        for bad in ("FloatTensor", "Tensor", "x.Tensor", "x.FloatTensor", "torch.Bogus"):
            with pytest.raises(ValueError, match="invalid type: '%s'" % bad):
                x.type(bad)
        assert x.type(lib.DoubleTensor).dtype == lib.float64 and x.type(lib.LongTensor) is x
    x = ct.ones(2, dtype=ct.int64)
    for name in ("torch.cuda.FloatTensor", "torch.cuda.Tensor", ct.cuda.FloatTensor):
        if ct.cuda.is_available():
            y = x.type(name)
            assert y.is_cuda and y.dtype == ct.float32 and y.type() == "torch.cuda.FloatTensor"
            assert y.type("torch.LongTensor").device.type == "cpu"
        else:
            with pytest.raises(RuntimeError):
                x.type(name)


def test_bad_sizes():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ct.empty(-1, 2)
    with pytest.raises(RuntimeError, match="overflow"):
        ct.empty(2 ** 40, 2 ** 40)
    with pytest.raises(RuntimeError, match="overflow"):
        ct.empty(0, 2 ** 62, 2 ** 62)
    with pytest.raises(RuntimeError, match="overflow"):
        ct.empty(2 ** 61, dtype=ct.float64)
    with pytest.raises(TypeError):
        ct.zeros("a")
    with pytest.raises(TypeError):
        ct.zeros(2, foo=1)
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1"):
        ct.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        ct.tensor([1, "a"])
    with pytest.raises(ValueError, match="too many dimensions 'str'"):   # torch sizes it as a sequence first
        ct.tensor(["a"])


def test_dtype_objects():
    assert repr(ct.float32) == "torch.float32"
    assert ct.float is ct.float32 and ct.long is ct.int64 and ct.double is ct.float64
    assert ct.float32.is_floating_point and not ct.int32.is_floating_point
    assert ct.float16.itemsize == 2
    assert ct.promote_types(ct.uint8, ct.int8) == ct.int16
    assert ct.can_cast(ct.int32, ct.float32) and not ct.can_cast(ct.float32, ct.int32)


def test_device_objects():
    d = ct.device("cpu")
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu" and d.type == "cpu" and d.index is None
    assert repr(ct.device("cuda:1")) == "device(type='cuda', index=1)"
    assert ct.device("cpu") == ct.device("cpu")
    assert ct.zeros(2).device == ct.device("cpu")
    assert ct.zeros(2, device="cpu").shape == (2,)
    assert not ct.cuda.is_available()
    with pytest.raises(RuntimeError, match="CUDA"):
        ct.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA"):
        ct.zeros(2).cuda()
    with pytest.raises(RuntimeError):
        ct.device("gpu")


@pytest.mark.parametrize("make", [lambda i: ct.device(i), lambda i: ct.device("cuda", i),
                                  lambda i: ct.device("cuda:%d" % i)])
def test_device_index_range(make):
    """Every way of naming a device index keeps it in PyTorch's DeviceIndex
    (int8) range: out of range raises, it never wraps or truncates."""
    assert make(127).index == 127
    for bad in (128, 2**40):
        with pytest.raises(RuntimeError, match="out of range"):
            make(bad)
    with pytest.raises(RuntimeError, match="negative|Invalid device string"):
        make(-1)


def test_device_index_argument():
    with pytest.raises(ValueError, match="Overflow"):
        ct.device(2**70)
    with pytest.raises(ValueError, match="Overflow"):
        ct.device("cuda", 2**70)
    assert ct.device("cuda", ct.tensor(1)).index == 1
    for bad in (1.0, True):
        with pytest.raises(TypeError, match="must be int"):
            ct.device("cuda", bad)


# every device type torch.device accepts (its error message lists them)
TORCH_DEVICE_TYPES = ["cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                      "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone"]


def test_device_names_torch_accepts():
    """cthtorch.device takes every device type torch.device does (programs
    name torch.device("mps") to test for it), printing, comparing, hashing
    and pickling as torch's; unknown names raise torch's error."""
    import pickle
    import warnings
    for name in TORCH_DEVICE_TYPES:
        for spec, args in ((name, ()), (name + ":3", ()), (name, (2,))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # mkldnn's deprecation
                d, t = ct.device(spec, *args), torch.device(spec, *args)
            assert (repr(d), str(d), d.type, d.index) == (repr(t), str(t), t.type, t.index)
            assert d == ct.device(str(d)) and hash(d) == hash(ct.device(str(d)))
            assert pickle.loads(pickle.dumps(d)) == d
        assert ct.device(name) != ct.device("cpu" if name != "cpu" else "cuda")
    for bad in ("gpu", "MPS", "ort", "xpu:", "mps:x", "xpu:1:2", " cpu", "cpu "):
        with pytest.raises(RuntimeError) as et:
            torch.device(bad)
        with pytest.raises(RuntimeError) as ec:
            ct.device(bad)
        assert str(ec.value) == str(et.value)
    # mkldnn warns (once per process, as torch's)
    import subprocess
    import sys
    prog = ("import warnings, cthtorch\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); cthtorch.device('mkldnn'); cthtorch.device('mkldnn')\n"
            "print(len(w), w[0].category.__name__, str(w[0].message))")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True).stdout
    assert out.startswith("1 UserWarning 'mkldnn' is no longer used as device type."), out


@pytest.mark.parametrize("name", [n for n in TORCH_DEVICE_TYPES if n not in ("cpu", "cuda", "meta")])
def test_tensors_on_devices_cthtorch_lacks_raise(name):
    """A tensor asked for on such a device raises a clear error wherever it
    would be made: xpu and mtia torch's "not compiled" AssertionError, the
    rest NotImplementedError naming the device."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dev = ct.device(name)
    makes = [lambda: ct.zeros(2, device=name), lambda: ct.ones(2).to(name), lambda: ct.ones(2).to(device=dev),
             lambda: ct.tensor([1.0], device=dev), lambda: ct.randn(2, device=name + ":0"),
             lambda: ct.ones(2).new_zeros(3, device=name), lambda: ct.nn.Linear(2, 2).to(name)]
    for make in makes:
        if name in ("xpu", "mtia"):
            with pytest.raises(AssertionError, match="Torch not compiled with %s enabled" % name.upper()):
                make()
        else:
            with pytest.raises(NotImplementedError, match="cthtorch has no '%s' device" % name):
                make()


OVERFLOW_CASES = ["L.tensor([300], dtype=L.uint8)", "L.tensor([-1], dtype=L.uint8)", "L.tensor([-1.0], dtype=L.uint8)",
                  "L.tensor([-256], dtype=L.uint8)", "L.tensor(128, dtype=L.int8)", "L.tensor([[1, 2], [3, 300]], dtype=L.uint8)",
                  "L.tensor([float('nan')], dtype=L.int32)", "L.tensor([1e20], dtype=L.int64)", "L.tensor([1e40], dtype=L.float32)",
                  "L.full((2,), 300, dtype=L.uint8)", "L.full((1,), -255, dtype=L.uint8)", "L.zeros(2, dtype=L.int16).fill_(70000)",
                  "L.full((1,), 1e40)", "L.full((1,), float('inf'))", "L.full((1,), 2**31, dtype=L.int32)",
                  "L.full((1,), float('nan'), dtype=L.int64)", "L.full((1,), 70000, dtype=L.half)",
                  "L.zeros(2, dtype=L.uint8).new_full((2,), 300)", "L.full((1,), 1e20, dtype=L.int64)",
                  "L.tensor([-2**63], dtype=L.uint8)", "L.full((1,), -2**63, dtype=L.uint8)"]


@pytest.mark.parametrize("expr", OVERFLOW_CASES)
def test_scalar_overflow_matches_torch(expr):
    torch = oracle.require_torch()
    out = []
    for L in (torch, ct):
        try:
            out.append(repr(eval(expr, {"L": L})))
        except RuntimeError as e:
            out.append("RuntimeError: " + str(e))
    assert out[1] == out[0]


def test_arange_integer_dtypes_and_bool_as_torch():
    """float bounds into integer dtypes count from the bounds cast to the
    dtype (int64 also sizes that way); bool is refused, as in torch"""
    import oracle
    torch = oracle.require_torch()
    for args in [(0.7, 5.2, 1.5), (-2.5, 3.1, 1.2), (5.9,), (10.5, 0.2, -2.5), (0, 2.5, 0.5), (2, 19, 4)]:
        for dt in ("int64", "int32", "int16"):
            if dt == "int64" and int(args[-1]) == 0 and len(args) == 3:
                continue   # a step that casts to 0: both raise (checked below)
            a, b = ct.arange(*args, dtype=getattr(ct, dt)), torch.arange(*args, dtype=getattr(torch, dt))
            assert a.tolist() == b.tolist() and str(a.dtype) == str(b.dtype), (args, dt)
    oracle.raises_like(lambda: ct.arange(5, dtype=ct.bool), lambda: torch.arange(5, dtype=torch.bool))
    oracle.raises_like(lambda: ct.arange(0.1, 7.9, 0.9, dtype=ct.int64), lambda: torch.arange(0.1, 7.9, 0.9, dtype=torch.int64))


def test_frombuffer_shares_memory_and_raises_as_torch():
    import warnings
    torch = oracle.require_torch()
    warnings.simplefilter("ignore")
    b1, b2 = bytearray(range(16)), bytearray(range(16))
    t, c = torch.frombuffer(b1, dtype=torch.int32), ct.frombuffer(b2, dtype=ct.int32)
    b1[0] = b2[0] = 99            # shared: the tensor sees the write
    assert t.tolist() == c.tolist()
    assert ct.frombuffer(b2, dtype=ct.uint8, count=3, offset=4).tolist() == [4, 5, 6]
    for kw in (dict(offset=1), dict(count=5, dt="int64"), dict(offset=16, dt="uint8"), dict(count=0)):
        dt = kw.pop("dt", "int32")
        oracle.raises_like(lambda: ct.frombuffer(b2, dtype=getattr(ct, dt), **kw),
                           lambda: torch.frombuffer(b1, dtype=getattr(torch, dt), **kw))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("start,end,steps", [(-3.141592653589793, 3.141592653589793, 2000), (0, 1, 25), (-1, 1, 7),
                                             (0, 10, 1000), (-3.3, 7.1, 101), (5, -2.5, 33), (2.5, 9, 1), (1, 1, 4)])
def test_linspace_bits_equal_torchs(dtype, start, end, steps):
    # the tutorials' x = torch.linspace(-math.pi, math.pi, 2000) feeds every printed loss: one ulp moves them
    a = ct.linspace(start, end, steps, dtype=getattr(ct, dtype))
    b = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_float_arange_is_bit_exact_with_torch():
    """float and double ranges round as torch's CPU kernel does (a base per 32-byte vector, chunks per
    thread past 32768 elements): start + i*step alone differs from it by an ulp in some elements"""
    import random
    rng = random.Random(3)
    cases = [(0, 1, 0.1), (-1, 1, 0.07), (1.5, 10.2, 0.35), (5, -3, -0.13)]
    cases += [(s, s + st * rng.randint(1, 300) + rng.uniform(0, st), st)
              for s, st in ((rng.uniform(-50, 50), rng.uniform(0.0001, 3)) for _ in range(200))]
    for args in cases:
        for dt in ("float32", "float64"):
            a, b = ct.arange(*args, dtype=getattr(ct, dt)), torch.arange(*args, dtype=getattr(torch, dt))
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=str((args, dt)))
    saved = ct.get_num_threads(), torch.get_num_threads()
    try:
        for threads in (1, 2, 3):   # the chunks follow the thread count, as torch's
            ct.set_num_threads(threads)
            torch.set_num_threads(threads)
            for n in (32767, 100003):
                for dt in ("float32", "float64"):
                    args = (0.3, 0.3 + n * 0.0013, 0.0013)
                    a, b = ct.arange(*args, dtype=getattr(ct, dt)), torch.arange(*args, dtype=getattr(torch, dt))
                    np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=str((threads, n, dt)))
    finally:
        ct.set_num_threads(saved[0])
        torch.set_num_threads(saved[1])


@pytest.mark.parametrize("data", [
    "[np.array([1, 2]), 3]", "[[1, 2], 3]", "[np.array([1., 2]), np.float64(3)]", "[[np.array([1, 2])], [3]]",
    "[np.array([1, 2]), lib.tensor(3)]", "[np.array([1, 2]), 'ab']", "[np.array([1, 2]), [3, 4, 5]]",
    # a str leads the first elements: torch's sizing walks into it ("too many dimensions"), elsewhere a bad type
    "['a']", "('ab', 1)", "[['a'], [1]]", "[[1], ['a']]", "['']", "[b'a']", "[[], 'a']", "'a'",
])
def test_tensor_of_ragged_data_raises_as_torch(data):
    """a scalar where the first element had a sequence: torch's TypeError 'not a sequence' (after its
    dtype pass, so a str is an invalid data type first)"""
    import warnings

    def make(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the list-of-ndarrays slowness warning
            return lib.tensor(eval(data, {"np": np, "lib": lib}))
    oracle.raises_like(lambda: make(ct), lambda: make(torch))


def test_range_warns_on_every_call_as_torch():
    """torch.range (end inclusive) still works in 2.13, with a UserWarning each call; an error filter makes it raise"""
    import warnings
    got = []
    for m in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            vals = [m.range(0, 3).tolist(), m.range(1, 2, 0.5).tolist(), m.range(0, 4, 2, dtype=m.int64).tolist()]
        got.append((vals, [(x.category, str(x.message)) for x in w]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning):
                m.range(0, 1)
    assert got[0] == got[1] and len(got[0][1]) == 3


@pytest.mark.parametrize("call", [
    "m.FloatTensor(3.5)", "m.LongTensor(True)", "m.DoubleTensor(np.float64(2))", "m.FloatTensor(None)",
    "m.FloatTensor('a')", "m.FloatTensor(m.tensor(3))", "m.FloatTensor(2, 3.0)",
    "m.FloatTensor(size=(2,)).shape", "m.FloatTensor(np.int64(2)).shape", "m.LongTensor(2, 3).shape",
    "m.FloatTensor(2, device='cpu').shape", "m.FloatTensor(m.Size([2, 1])).shape", "m.FloatTensor().shape",
    "m.LongTensor([2 ** 40 + 1]).tolist()", "m.FloatTensor(np.array([1.5, 2])).tolist()",
    "m.ByteTensor((1, 0)).tolist()", "m.FloatTensor(m.ones(2)).tolist()", "m.Tensor(size=[2, 3]).shape",
    "m.FloatTensor(np.array([[1, 2]])).dtype", "m.LongTensor(range(3)).tolist()",
    # data given with device= is data (torch's size signature takes a non-Size sequence as data)
    "m.FloatTensor([1, 2], device='cpu').tolist()", "m.LongTensor([2 ** 40 + 1], device='cpu').tolist()",
    "m.Tensor([1.5, 2], device='cpu').tolist()", "m.Tensor((1, 2), device='cpu').tolist()",
    "m.IntTensor(range(3), device='cpu').tolist()", "m.Tensor(m.Size([2]), device='cpu').shape",
    "m.Tensor([[1, 2], [3]], device='cpu')",
    "m.Tensor([1, 2], device='cpu').tolist()", "m.Tensor((3, 4), device='cpu').tolist()",
    "m.FloatTensor([1, 2], device='cpu').tolist()", "m.LongTensor([[1], [2]], device='cpu').tolist()",
    "m.Tensor(m.Size([2]), device='cpu').shape", "m.Tensor(2, 3, device='cpu').shape",
    "m.Tensor([], device='cpu').shape"])
def test_legacy_typed_constructors_as_torch(call):
    """2017-era torch.FloatTensor(...) calls: sizes (also size=, a numpy int), data (lists, numpy arrays, the
    exact int64s a LongTensor holds), and torch's refusals (a float or None is not a sequence, another dtype's
    tensor is not converted)"""
    def run(m):
        try:
            return repr(eval(call)).replace("cthtorch", "torch")
        except Exception as e:  # noqa: BLE001 - the refusal is the result compared
            return "%s: %s" % (type(e).__name__, e)
    assert run(ct) == run(torch)


def test_legacy_typed_constructor_of_its_own_dtype_aliases_as_torch():
    """torch.FloatTensor(x) of a float32 x is an alias of x: the same data, and gradients reach x"""
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.FloatTensor(x)
        (y * 3).sum().backward()
        return y.requires_grad, y._base is x, y is x, y.data_ptr() == x.data_ptr(), x.grad.tolist()
    assert run(ct) == run(torch)
