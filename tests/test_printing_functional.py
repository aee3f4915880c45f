"""cthtorch.functional helpers against torch.functional: values, shapes, views, grads, errors.

(Kept beside the printing tests because the printing branch owns the module.)
"""
import warnings

import numpy as np
import pytest

import oracle
import cthtorch as ct
from cthtorch import functional as F

torch = oracle.require_torch()


def pair(arr, dtype="float32", requires_grad=False):
    arr = np.array(arr, order="C")
    out = []
    for lib in (ct, torch):
        t = lib.from_numpy(arr.copy()).to(getattr(lib, dtype))
        out.append(t.requires_grad_() if requires_grad else t)
    return out


def same(a, b):
    """a: a cthtorch tensor (or tuple of them), b: the torch counterpart."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(), rtol=1e-5, atol=1e-6)


def same_error(ours, ref):
    """Both callables raise; same exception type and message."""
    with pytest.raises(Exception) as expected:
        ref()
    with pytest.raises(type(expected.value)) as got:
        ours()
    assert str(got.value) == str(expected.value)


# ---------------------------------------------------------------- broadcast_shapes

@pytest.mark.parametrize("shapes", [
    ((2,), (3, 1), (1, 1, 1)),
    ((2, 3), (3,), (4, 1, 3)),
    (3, (2, 1)),
    (),
    ((),),
    ((0,), (1,)),
    ((1,), (0,)),
    ([2, 3], [3]),
    ((1, 3), (2, 1), (4, 1, 1)),
    (None,),
    ((3,), None),
    (True, (2,)),
])
def test_broadcast_shapes(shapes):
    got = F.broadcast_shapes(*shapes)
    assert isinstance(got, ct.Size)
    assert tuple(got) == tuple(torch.broadcast_shapes(*shapes))


def test_broadcast_shapes_accepts_size():
    assert tuple(F.broadcast_shapes(ct.Size([2, 1]), (1, 4))) == (2, 4)


@pytest.mark.parametrize("shapes", [
    ((2, 3), (4, 3)),
    ((5, 2), (5, 3)),
    ((0,), (2,)),
    ((2,), (3,), (2,)),
    ((2, 3), (1, 2, 3), (5, 2, 4)),
    ([2, 3], [4, 3]),
    (2, 3),
    ((-1,), (2,)),
    ((2, -1),),
    (2.0,),
    ({2: 1},),
])
def test_broadcast_shapes_errors(shapes):
    same_error(lambda: F.broadcast_shapes(*shapes), lambda: torch.broadcast_shapes(*shapes))


# ---------------------------------------------------------------- meshgrid

@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("lens", [(3,), (3, 2), (3, 2, 4), (1, 5), (0, 3), (2, 0, 3)])
def test_meshgrid(indexing, lens):
    arrays = [np.arange(n, dtype=np.float64) * (i + 1) for i, n in enumerate(lens)]
    ours = [pair(a)[0] for a in arrays]
    refs = [pair(a)[1] for a in arrays]
    got = F.meshgrid(*ours, indexing=indexing)
    same(got, torch.meshgrid(*refs, indexing=indexing))
    same(F.meshgrid(ours, indexing=indexing), torch.meshgrid(refs, indexing=indexing))
    # outputs are expanded views, not copies (stride 0 along the broadcast dims)
    assert [g.stride() for g in got] == [g.stride() for g in torch.meshgrid(*refs, indexing=indexing)]


def test_meshgrid_matches_numpy_xy():
    x, y = np.arange(3.0), np.arange(4.0)
    gx, gy = F.meshgrid(ct.from_numpy(x), ct.from_numpy(y), indexing="xy")
    nx, ny = np.meshgrid(x, y, indexing="xy")
    np.testing.assert_array_equal(gx.numpy(), nx)
    np.testing.assert_array_equal(gy.numpy(), ny)


def test_meshgrid_zero_dim_and_mixed():
    a, ta = pair(5.0)
    b, tb = pair([1.0, 2.0, 3.0])
    same(F.meshgrid(a, b, indexing="ij"), torch.meshgrid(ta, tb, indexing="ij"))
    same(F.meshgrid(b, a, indexing="xy"), torch.meshgrid(tb, ta, indexing="xy"))


def test_meshgrid_default_indexing_warns_and_is_ij():
    a, ta = pair([1.0, 2.0, 3.0])
    b, tb = pair([4.0, 5.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = F.meshgrid(a, b)
    assert any("indexing argument" in str(w.message) for w in caught)
    same(got, torch.meshgrid(ta, tb, indexing="ij"))


def test_meshgrid_gradient():
    a, ta = pair([1.0, 2.0, 3.0], requires_grad=True)
    b, tb = pair([4.0, 5.0], requires_grad=True)
    ga, gb = F.meshgrid(a, b, indexing="xy")
    (ga * gb * ga).sum().backward()
    ra, rb = torch.meshgrid(ta, tb, indexing="xy")
    (ra * rb * ra).sum().backward()
    same(a.grad, ta.grad)
    same(b.grad, tb.grad)


@pytest.mark.parametrize("case", ["empty", "empty_list", "2d", "dtype", "indexing", "not_tensor"])
def test_meshgrid_errors(case):
    def run(lib, mesh):
        a = lib.arange(3.0)
        args = {
            "empty": ((), {"indexing": "ij"}),
            "empty_list": (([],), {"indexing": "ij"}),
            "2d": ((a, lib.ones(2, 2)), {"indexing": "ij"}),
            "dtype": ((a, lib.arange(2)), {"indexing": "ij"}),
            "indexing": ((a, a), {"indexing": "foo"}),
            "not_tensor": ((a, 3), {"indexing": "ij"}),
        }[case]
        return mesh(*args[0], **args[1])
    if case == "2d":   # torch prints the tensor in its legacy format; compare type and prefix
        with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
            run(ct, F.meshgrid)
        return
    same_error(lambda: run(ct, F.meshgrid), lambda: run(torch, torch.meshgrid))


# ---------------------------------------------------------------- split

# split sizes near 2**63: the piece count's ceiling must not wrap (one piece, as torch's; 2**63 - 4 was 'out of memory')
SPLIT_OK = [(2, 0), (5, 0), (6, 0), (1, 1), ([1, 4], 0), ((2, 3), 0), (2, -1), ([0, 5], 0), ([1, 1], 1),
            (2**63 - 4, 0), (2**63 - 3, 0), (2**63 - 1, 1)]


@pytest.mark.parametrize("size,dim", SPLIT_OK)
def test_split(size, dim):
    x, tx = pair(np.arange(10.0).reshape(5, 2))
    got, ref = F.split(x, size, dim), torch.split(tx, size, dim)
    same(got, ref)
    for g in got:   # views of the input
        assert g.storage_offset() in [r.storage_offset() for r in ref]


def test_split_keyword_and_tensor_size():
    x, tx = pair(np.arange(10.0).reshape(5, 2))
    same(F.split(x, split_size_or_sections=2, dim=1), torch.split(tx, split_size_or_sections=2, dim=1))
    same(F.split(x, ct.tensor(2)), torch.split(tx, torch.tensor(2)))
    # the method's argument is split_size (sgrvinod's Transformer calls .split(split_size=..., dim=-1))
    same(x.split(split_size=1, dim=-1), tx.split(split_size=1, dim=-1))
    same(x.split(split_size=[2, 3]), tx.split(split_size=[2, 3]))
    with pytest.raises(TypeError, match=r"^Tensor\.split\(\) got an unexpected keyword argument 'split_size_or_sections'$"):
        x.split(split_size_or_sections=2)
    with pytest.raises(TypeError, match=r"^Tensor\.split\(\) got an unexpected keyword argument 'split_size_or_sections'$"):
        tx.split(split_size_or_sections=2)


def test_split_empty_dimension():
    x, tx = pair(np.zeros((0, 2)))
    same(F.split(x, 0), torch.split(tx, 0))
    same(F.split(x, [0, 0]), torch.split(tx, [0, 0]))
    same(F.split(x, []), torch.split(tx, []))


def test_split_is_a_view_with_gradient():
    x, tx = pair(np.arange(6.0), requires_grad=True)
    parts, tparts = F.split(x, [1, 2, 3]), torch.split(tx, [1, 2, 3])
    (parts[0] * 1 + parts[2].sum() * 2 + (parts[1] ** 2).sum()).sum().backward()
    (tparts[0] * 1 + tparts[2].sum() * 2 + (tparts[1] ** 2).sum()).sum().backward()
    same(x.grad, tx.grad)


@pytest.mark.parametrize("size,dim", [([2, 2], 0), ([6, -1], 0), (-1, 0), (0, 0), (2, 2), ([1, 4], 1), ([], 0),
                                      (2.0, 0), ([2.0, 3], 0)])
def test_split_errors(size, dim):
    x, tx = pair(np.arange(10.0).reshape(5, 2))
    same_error(lambda: F.split(x, size, dim), lambda: torch.split(tx, size, dim))


def test_split_zero_dim_error():
    x, tx = pair(3.0)
    same_error(lambda: F.split(x, 1), lambda: torch.split(tx, 1))


def test_split_tensor_sections_error():
    x, tx = pair(np.arange(5.0))
    same_error(lambda: F.split(x, ct.tensor([1, 4])), lambda: torch.split(tx, torch.tensor([1, 4])))


# ---------------------------------------------------------------- atleast_*d

@pytest.mark.parametrize("fname", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)], ids=str)
def test_atleast(fname, shape):
    arr = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x, tx = pair(arr)
    f, tf = getattr(F, fname), getattr(torch, fname)
    same(f(x), tf(tx))
    if x.dim() >= int(fname[-2]):
        assert f(x) is x
    y, ty = pair(np.array(2.0))
    same(f(x, y), tf(tx, ty))
    same(f((x, y)), tf((tx, ty)))
    same(f([x]), tf([tx]))
    assert f() == tf() == ()


# ---------------------------------------------------------------- cartesian_prod, block_diag

def test_cartesian_prod():
    a, ta = pair([1, 2, 3], "int64")
    b, tb = pair([4, 5], "int64")
    c, tc = pair([7, 8], "int64")
    same(F.cartesian_prod(a, b), torch.cartesian_prod(ta, tb))
    same(F.cartesian_prod(a, b, c), torch.cartesian_prod(ta, tb, tc))
    assert F.cartesian_prod(a) is a
    e, te = pair(np.zeros(0), "int64")
    same(F.cartesian_prod(a, e), torch.cartesian_prod(ta, te))


def test_cartesian_prod_errors():
    same_error(lambda: F.cartesian_prod(ct.ones(2, 3), ct.ones(2)),
               lambda: torch.cartesian_prod(torch.ones(2, 3), torch.ones(2)))
    same_error(lambda: F.cartesian_prod(ct.tensor(1.0), ct.ones(2)),
               lambda: torch.cartesian_prod(torch.tensor(1.0), torch.ones(2)))
    same_error(lambda: F.cartesian_prod(), lambda: torch.cartesian_prod())
    same_error(lambda: F.cartesian_prod(ct.arange(3), ct.ones(2)),
               lambda: torch.cartesian_prod(torch.arange(3), torch.ones(2)))


def test_block_diag():
    a, ta = pair(1.5)
    b, tb = pair([1.0, 2.0, 3.0])
    c, tc = pair(np.arange(6.0).reshape(2, 3))
    same(F.block_diag(a, b, c), torch.block_diag(ta, tb, tc))
    same(F.block_diag(), torch.block_diag())
    e1, te1 = pair(np.zeros((0, 2)))
    e2, te2 = pair(np.zeros((2, 0)))
    same(F.block_diag(e1, b, e2), torch.block_diag(te1, tb, te2))


def test_block_diag_promotes():
    i, ti = pair(np.ones((2, 2)), "int32")
    l, tl = pair([1, 2], "int64")
    same(F.block_diag(i, l), torch.block_diag(ti, tl))
    bb, tbb = pair(np.ones((1, 2)), "bool")
    h, th = pair([3.5], "float16")
    same(F.block_diag(bb, h), torch.block_diag(tbb, th))


def test_block_diag_gradient():
    a, ta = pair(np.arange(4.0).reshape(2, 2), requires_grad=True)
    b, tb = pair([1.0, 2.0], requires_grad=True)
    w = np.arange(12.0).reshape(3, 4)
    (F.block_diag(a, b) * ct.from_numpy(w).float()).sum().backward()
    (torch.block_diag(ta, tb) * torch.from_numpy(w).float()).sum().backward()
    same(a.grad, ta.grad)
    same(b.grad, tb.grad)


def test_block_diag_error():
    same_error(lambda: F.block_diag(ct.ones(1), ct.ones(2, 3, 4)),
               lambda: torch.block_diag(torch.ones(1), torch.ones(2, 3, 4)))


# ---------------------------------------------------------------- unravel_index

@pytest.mark.parametrize("indices,shape", [
    (4, (3, 2)), ([4, 1], (3, 2)), ([[4, 1], [0, 5]], (3, 2)), (5, 6), (6, (3, 2)), (-1, (3, 2)),
    (-7, (3, 2)), (2, (2 ** 62, 4)), (1, ()), ([17, 3, 0], (2, 3, 4)),
])
def test_unravel_index(indices, shape):
    x, tx = pair(np.array(indices), "int64")
    same(F.unravel_index(x, shape), torch.unravel_index(tx, shape))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int16"])
def test_unravel_index_int_dtypes_give_int64(dtype):
    x, tx = pair([1, 5], dtype)
    same(F.unravel_index(x, (3, 2)), torch.unravel_index(tx, (3, 2)))


@pytest.mark.parametrize("case", ["float", "bool", "negative", "float_dim", "zero", "python_int"])
def test_unravel_index_errors(case):
    def run(lib):
        idx = {"float": lib.tensor(1.0), "bool": lib.tensor(True), "python_int": 4}.get(case, lib.tensor(1))
        shape = {"negative": (3, -2), "float_dim": [3, 2.0], "zero": (3, 0)}.get(case, (3, 2))
        return lib.unravel_index(idx, shape) if lib is torch else F.unravel_index(idx, shape)
    same_error(lambda: run(ct), lambda: run(torch))


# ---------------------------------------------------------------- tensordot, chain_matmul

TENSORDOT_DIMS = [2, 1, 0, ([1, 2], [0, 1]), [[1], [0]], ([-2, -1], [0, 1]), ([2, 1], [1, 0])]


@pytest.mark.parametrize("dims", TENSORDOT_DIMS, ids=str)
def test_tensordot(dims):
    rng = np.random.default_rng(0)
    a, ta = pair(rng.standard_normal((3, 4, 5)))
    b_shape = (4, 5, 6) if dims != 1 else (5, 6)
    b, tb = pair(rng.standard_normal(b_shape))
    same(F.tensordot(a, b, dims), torch.tensordot(ta, tb, dims))


def test_tensordot_tensor_dims_ints_and_empty():
    rng = np.random.default_rng(1)
    a, ta = pair(rng.standard_normal((3, 4, 5)))
    b, tb = pair(rng.standard_normal((4, 5, 6)))
    same(F.tensordot(a, b, ct.tensor(2)), torch.tensordot(ta, tb, torch.tensor(2)))
    same(F.tensordot(a, b, ct.tensor([[1, 2], [0, 1]])), torch.tensordot(ta, tb, torch.tensor([[1, 2], [0, 1]])))
    i, ti = pair(np.arange(12).reshape(3, 4), "int32")
    j, tj = pair(np.arange(8).reshape(4, 2), "int32")
    same(F.tensordot(i, j, 1), torch.tensordot(ti, tj, 1))
    e, te = pair(np.zeros((3, 0)))
    f, tf = pair(np.zeros((0, 4)))
    same(F.tensordot(e, f, 1), torch.tensordot(te, tf, 1))


def test_tensordot_gradient():
    rng = np.random.default_rng(2)
    a, ta = pair(rng.standard_normal((2, 3, 4)), requires_grad=True)
    b, tb = pair(rng.standard_normal((4, 3, 5)), requires_grad=True)
    (F.tensordot(a, b, ([1, 2], [1, 0])) ** 2).sum().backward()
    (torch.tensordot(ta, tb, ([1, 2], [1, 0])) ** 2).sum().backward()
    same(a.grad, ta.grad)
    same(b.grad, tb.grad)


@pytest.mark.parametrize("dims", [-1, 3, 4, ([0], [0]), ([1, 2], [0]), 2.0, ([-2, -2], [0, 1]), ([1, 1], [0, 0])],
                         ids=str)
def test_tensordot_errors(dims):
    a, ta = pair(np.ones((3, 4, 5)))
    b, tb = pair(np.ones((4, 5, 6)))
    same_error(lambda: F.tensordot(a, b, dims), lambda: torch.tensordot(ta, tb, dims))


def test_tensordot_dtype_error():
    same_error(lambda: F.tensordot(ct.ones(2, 2), ct.ones(2, 2, dtype=ct.float64)),
               lambda: torch.tensordot(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)))


def test_chain_matmul():
    rng = np.random.default_rng(3)
    mats = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 1)]]
    ours = [pair(m)[0] for m in mats]
    refs = [pair(m)[1] for m in mats]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(F.chain_matmul(*ours), torch.chain_matmul(*refs))
        one = F.chain_matmul(ours[0])
        same(one, torch.chain_matmul(refs[0]))
        assert one is not ours[0]
        for args in [(), (ct.ones(2),), (ct.ones(2, 3), ct.ones(4, 2))]:
            targs = tuple(torch.from_numpy(a.numpy()) for a in args)
            same_error(lambda: F.chain_matmul(*args), lambda: torch.chain_matmul(*targs))
