"""The indexing family in C (src/ATen/ATIndexing.c) against PyTorch: advanced
indexing and index_put (placement, masks, negatives, accumulate with
duplicates), index_select, nonzero/argwhere, masked_select/scatter, take/put,
index_fill/copy: values, dtypes, errors, gradcheck and gradgradcheck."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
RS = np.random.RandomState(3)
A = RS.uniform(-2, 2, size=(4, 5, 6))


def both(fn):
    """fn(L) for L in (cthtorch, torch): results as (value, dtype) or (error type, message)."""
    out = []
    for L in (ct, torch):
        try:
            r = fn(L)
            rs = r if isinstance(r, (tuple, list)) else [r]
            out.append([(np.asarray(x.float().tolist() if x.dtype in (L.float16, L.bfloat16) else x.tolist()),
                         str(x.dtype).split(".")[-1], tuple(x.shape)) for x in rs])
        except Exception as e:   # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def check(fn):
    a, b = both(fn)
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert len(a) == len(b)
    for (va, da, sa), (vb, db, sb) in zip(a, b):
        assert (da, sa) == (db, sb)
        np.testing.assert_array_equal(va, vb)


def X(L, dtype="float32", shape=(4, 5, 6)):
    return L.tensor(A.reshape(-1)[:int(np.prod(shape))].reshape(shape) * 3).to(getattr(L, dtype))


GETS = {
    "one": lambda L, x: x[L.tensor([1, -1, 0, 1])],
    "2d_index": lambda L, x: x[L.tensor([[1, 2], [3, 0]])],
    "adjacent": lambda L, x: x[:, L.tensor([1, 0]), L.tensor([[5], [2]])],
    "separated": lambda L, x: x[L.tensor([1, 0]), :, L.tensor([5, 2])],
    "mask": lambda L, x: x[x > 1],
    "mask_2d_then_int": lambda L, x: x[X(L, shape=(4, 5)) > 0, L.tensor([1])],
    "mask_then_slice": lambda L, x: x[1:, L.tensor([True, False, True, True, False])],
    "zero_d_bool": lambda L, x: x[L.tensor(True)],
    "zero_d_false": lambda L, x: x[L.tensor(False)],
    "list": lambda L, x: x[[0, 2], 1],
    "int32_index": lambda L, x: x[L.tensor([1, 2], dtype=L.int32)],
    "empty": lambda L, x: x[L.tensor([], dtype=L.int64)],
    "noncontig": lambda L, x: x.transpose(0, 2)[L.tensor([0, 5]), 1],
    "out_of_bounds": lambda L, x: x[L.tensor([0, 10])],
    "out_of_bounds_neg": lambda L, x: x[:, L.tensor([-6])],
    "float_index": lambda L, x: x[L.tensor([0.0])],
    "bad_mask": lambda L, x: x[L.tensor([True, False])],
    "no_broadcast": lambda L, x: x[L.tensor([0, 1]), L.tensor([0, 1, 2])],
    "too_many": lambda L, x: x[0, 0, 0, L.tensor([0])],
}


@pytest.mark.parametrize("name", sorted(GETS))
def test_getitem(name):
    check(lambda L: GETS[name](L, X(L)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_dtypes(dtype):
    check(lambda L: X(L, dtype)[L.tensor([3, 0, 3]), :, L.tensor([1])])
    check(lambda L: X(L, dtype)[X(L) > 0.5])


def _put(L, idx_fn, value_fn, accumulate=False, dtype="float32"):
    x = X(L, dtype)
    x.index_put_(idx_fn(L), value_fn(L, x.dtype), accumulate=accumulate)
    return x


PUTS = {
    "dup_accumulate": (lambda L: (L.tensor([1, 1, 3, 1]),), lambda L, d: L.ones(4, 5, 6, dtype=d), True),
    "broadcast_value": (lambda L: (L.tensor([2, 0]), L.tensor([1])), lambda L, d: L.tensor([7.0]).to(d), False),
    "scalar_value": (lambda L: (L.tensor([2, 0]),), lambda L, d: L.tensor(5).to(d), False),
    "pair_acc": (lambda L: (L.tensor([1, 1]), L.tensor([2, 2])), lambda L, d: L.ones(2, 6, dtype=d), True),
    "mask": (lambda L: (L.tensor([True, False, True, True]),), lambda L, d: L.tensor(3).to(d), False),
    "bad_shape": (lambda L: (L.tensor([1, 2]),), lambda L, d: L.ones(3, 5, 6, dtype=d), False),
    "bad_dtype": (lambda L: (L.tensor([1, 2]),), lambda L, d: L.ones(5, 6, dtype=L.float64), False),
}


@pytest.mark.parametrize("name", sorted(PUTS))
def test_index_put(name):
    i, v, acc = PUTS[name]
    check(lambda L: _put(L, i, v, acc))
    check(lambda L: X(L).index_put(i(L), v(L, L.float32), acc))


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put_dtypes(dtype):
    acc = dtype != "bool"
    check(lambda L: _put(L, lambda L: (L.tensor([0, 0, 2]), L.tensor([1, 1, 4])), lambda L, d: L.ones(6, dtype=d), acc, dtype))


def test_setitem():
    def f(L):
        x = X(L)
        x[L.tensor([0, 2]), 1:3] = 2.5
        x[x > 2.4] = -1
        x[0, L.tensor([1, 4])] = L.tensor([[1.0], [2.0]])
        x[[1, 3], [0, 1], [2, 3]] = 9
        return x
    check(f)


OPS = {
    "index_select": lambda L, x: x.index_select(1, L.tensor([4, 0, 4])),
    "index_select_neg_dim": lambda L, x: L.index_select(x, -1, L.tensor([5], dtype=L.int32)),
    "index_select_oob": lambda L, x: x.index_select(0, L.tensor([4])),
    "index_select_2d": lambda L, x: x.index_select(0, L.tensor([[0]])),
    "index_select_float": lambda L, x: x.index_select(0, L.tensor([0.0])),
    "index_select_scalar": lambda L, x: x[0, 0, 0].index_select(0, L.tensor([0])),
    "nonzero": lambda L, x: L.nonzero(x > 1),
    "nonzero_0d": lambda L, x: L.nonzero(x[0, 0, 0] * 0 + 1),
    "nonzero_tuple": lambda L, x: x.gt(1).nonzero(as_tuple=True),
    "argwhere": lambda L, x: L.argwhere(x[0] < 0),
    "masked_select": lambda L, x: x.masked_select(x[0] > 0),
    "masked_select_bad": lambda L, x: x.masked_select(x.gt(0).to(L.uint8)),
    "masked_scatter": lambda L, x: x.masked_scatter(x > 0, -x),
    "masked_scatter_short": lambda L, x: x.masked_scatter(x > 0, L.ones(3, dtype=x.dtype)),
    "take": lambda L, x: x.take(L.tensor([[0, -1], [7, 119]])),
    "take_oob": lambda L, x: L.take(x, L.tensor([120])),
    "put": lambda L, x: x.put(L.tensor([0, -1, 0]), L.tensor([1.0, 2.0, 3.0]).to(x.dtype)),
    "put_acc": lambda L, x: x.clone().put_(L.tensor([0, 0, 5]), L.tensor([1.0, 2.0, 3.0]).to(x.dtype), accumulate=True),
    "put_noncontig": lambda L, x: x.transpose(0, 1).clone().transpose(0, 1).put_(L.tensor([1, 30]), L.tensor([9.0, 8.0]).to(x.dtype)),
    "index_fill": lambda L, x: x.index_fill(2, L.tensor([0, 5]), -3),
    "index_fill_tensor": lambda L, x: x.clone().index_fill_(0, L.tensor([1]), L.tensor(4.0).to(x.dtype)),
    "index_fill_int32": lambda L, x: x.index_fill(0, L.tensor([1], dtype=L.int32), 1),
    "index_copy": lambda L, x: x.index_copy(1, L.tensor([4, 1]), L.ones(4, 2, 6, dtype=x.dtype)),
    "index_copy_oob": lambda L, x: x.index_copy(1, L.tensor([7]), L.ones(4, 1, 6, dtype=x.dtype)),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16", "float16"])
def test_ops(name, dtype):
    check(lambda L: OPS[name](L, X(L, dtype)))


def test_out_and_bool():
    check(lambda L: L.index_select(X(L, "bool"), 2, L.tensor([1, 2]), out=L.empty(0, dtype=L.bool)))
    check(lambda L: L.nonzero(X(L, "int8"), out=L.empty(3, dtype=L.int64)))
    check(lambda L: L.masked_select(X(L, "uint8"), X(L) > 0, out=L.empty(0, dtype=L.uint8)))
    check(lambda L: L.take(X(L, "int16"), L.tensor([3]), out=L.empty(1, dtype=L.int16)))


def test_big_parallel():
    rs = np.random.RandomState(0)
    a = rs.rand(300000)
    check(lambda L: L.nonzero(L.tensor(a) > 0.5))
    check(lambda L: L.tensor(a).reshape(600, 500).masked_select(L.tensor(a).reshape(600, 500) > 0.3))
    i = rs.randint(-300000, 300000, size=100000)
    check(lambda L: L.tensor(a)[L.tensor(i)])
    check(lambda L: L.zeros(300000, dtype=L.float64).index_put_((L.tensor(i),), L.ones(100000, dtype=L.float64), accumulate=True))



@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
def test_accumulate_rows_by_columns(dtype):
    """A one-dim accumulate (dense += sparse in SparseAdam, index_add_) splits the indexed rows' columns
    across threads: repeated rows still add in index order, so 2 threads give 1 thread's bits, and
    torch's values; the trailing dims contiguous (a row add) or not (a transposed destination)."""
    rs = np.random.RandomState(5)
    idx = rs.randint(0, 300, size=4000)
    v = rs.uniform(-1, 1, size=(4000, 96))
    old = ct.get_num_threads()

    def put(L, transposed):
        dst = L.zeros(96, 300, dtype=getattr(L, dtype)).t() if transposed else L.zeros(300, 96, dtype=getattr(L, dtype))
        return dst.index_put_((L.tensor(idx),), L.tensor(v).to(getattr(L, dtype)), accumulate=True)

    try:
        for transposed in (False, True):
            got = []
            for n in (1, 2):
                ct.set_num_threads(n)
                got.append(put(ct, transposed).double().numpy())
            assert np.array_equal(got[0], got[1])
            want = put(torch, transposed).double().numpy()
            tol = 2e-2 if dtype == "bfloat16" else 1e-4
            np.testing.assert_allclose(got[1], want, rtol=tol, atol=tol)
    finally:
        ct.set_num_threads(old)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64"])
def test_big_one_index(dtype):
    """One index tensor: checked while copying (no separate offset pass), in parallel."""
    rs = np.random.RandomState(1)
    n = 100000
    a = rs.uniform(-2, 2, size=n)
    i = rs.randint(-n, n, size=40000)
    v = rs.uniform(-2, 2, size=40000)
    bad = i.copy()
    bad[23456] = n           # the only bad index, past the first thread's share
    neg_bad = i.copy()
    neg_bad[7] = -n - 1

    def T(L, x):
        return L.from_numpy(x).to(getattr(L, dtype))
    check(lambda L: T(L, a)[L.tensor(i)])
    check(lambda L: T(L, a)[::2][L.tensor(i // 2)])                        # strided self
    check(lambda L: T(L, a).reshape(1000, 100)[L.tensor(i[:5000] // 100)])  # whole rows
    check(lambda L: T(L, a).reshape(1000, 100)[:4, L.tensor(i % 100)])     # a dim after pre rows
    check(lambda L: T(L, a)[L.tensor(bad)])
    check(lambda L: T(L, a)[L.tensor(neg_bad)])
    check(lambda L: T(L, a).reshape(1000, 100)[:, L.tensor(bad)])

    def put(L, idx, acc=False):
        x = T(L, a)
        x.index_put_((L.tensor(idx),), T(L, v), accumulate=acc)
        return x

    def setitem(L, idx):
        x = T(L, a)
        x[L.tensor(idx)] = T(L, v)
        return x
    u = rs.permutation(n)[:40000] - n // 2    # unique, half negative: the result does not hang on write order
    check(lambda L: setitem(L, u))
    check(lambda L: put(L, u))
    check(lambda L: setitem(L, np.where(u == u[99], n, u)))
    check(lambda L: put(L, np.where(u == u[99], -n - 5, u)))
    if dtype != "bool":
        check(lambda L: put(L, bad, True))
    check(lambda L: T(L, a)[:0][L.tensor([3])])                # empty dim: PyTorch's own text
    check(lambda L: T(L, a).reshape(1000, 100)[:0, L.tensor([100])])   # empty result: no index checked
    check(lambda L: T(L, a).reshape(1000, 100)[:0].index_put_((L.tensor([5]),), T(L, v[:1])))


GRADS = {
    "index": (lambda L, x, s: x[L.tensor([1, 1, -1]), :, L.tensor([[0], [2]])], ),
    "mask": (lambda L, x, s: x[x > 0.5] * 2, ),
    "index_put": (lambda L, x, s: x.index_put((L.tensor([1, 3]), L.tensor([2, 2])), s[0, 0, :6]), ),
    "index_put_acc": (lambda L, x, s: x.index_put((L.tensor([1, 1]),), s[0], accumulate=True), ),
    "setitem": (lambda L, x, s: _setitem(L, x, s), ),
    "index_select": (lambda L, x, s: x.index_select(1, L.tensor([4, 0, 4])), ),
    "masked_select": (lambda L, x, s: x.masked_select(x[0] > 0), ),
    "masked_scatter": (lambda L, x, s: x.masked_scatter(x > 0, s * 2), ),
    "take": (lambda L, x, s: x.take(L.tensor([[0, -1], [7, 7]])), ),
    "put": (lambda L, x, s: x.put(L.tensor([0, 5, 9]), s[0, 0, :3]), ),
    "put_acc": (lambda L, x, s: x.put(L.tensor([0, 5, 0]), s[0, 0, :3], accumulate=True), ),
    "index_fill": (lambda L, x, s: x.index_fill(2, L.tensor([0, 5]), s[0, 0, 0]), ),
    "index_copy": (lambda L, x, s: x.index_copy(1, L.tensor([4, 1]), s[:, :2]), ),
}


def _setitem(L, x, s):
    y = x * 1
    y[L.tensor([0, 2]), 1] = s[0, 0]
    return y


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(name):
    fn = GRADS[name][0]
    xs = [RS.uniform(-1, 1, size=(4, 5, 6)), RS.uniform(-1, 1, size=(4, 5, 6))]
    grads = []
    for L in (ct, torch):
        x, s = (L.tensor(v, dtype=L.float64, requires_grad=True) for v in xs)
        r = fn(L, x, s)
        g = L.autograd.grad((r * r).sum(), (x, s), allow_unused=True)
        grads.append([None if v is None else v.tolist() for v in g])
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b)
    x, s = (ct.tensor(v[:4, :5, :6], dtype=ct.float64, requires_grad=True) for v in xs)
    assert ct.autograd.gradcheck(lambda x, s: fn(ct, x, s), (x, s))
    assert ct.autograd.gradgradcheck(lambda x, s: fn(ct, x, s), (x, s))


def test_grad_is_differentiable_again():
    x = ct.tensor([1.0, 2.0, 3.0], dtype=ct.float64, requires_grad=True)
    y = (x[ct.tensor([0, 0, 2])] ** 2).sum()
    (g,) = ct.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [4.0, 0.0, 6.0]
    (gg,) = ct.autograd.grad(g.sum(), x)
    assert gg.tolist() == [4.0, 0.0, 2.0]


def test_moved_ops_are_c_bindings():
    for name in ("index_select", "nonzero", "masked_select", "masked_scatter", "take", "put", "index_fill",
                 "index_copy", "index_put", "index_put_", "argwhere"):
        if name != "nonzero":   # nonzero keeps a Python wrapper for as_tuple
            assert getattr(ct.Tensor, name) is getattr(ct._C._TensorBase, name), name
    assert not hasattr(ct.Tensor, "_index")


def test_bool_bytes_other_than_0_1():
    """bool memory from uint8 bytes other than 0/1 (as empty() may hold): the kernels that
    read masks and conditions read bytes, any nonzero one true, so nonzero's count and its
    list agree and masked ops, where and conversions see the same mask"""
    raw = np.array([0, 2, 1, 0, 255, 0, 128, 3] * 5, dtype=np.uint8)
    m = ct.from_numpy(raw).view(ct.bool)
    truth = raw != 0
    x = ct.arange(len(raw), dtype=ct.float32)
    assert ct.nonzero(m).flatten().tolist() == np.nonzero(truth)[0].tolist()
    assert ct.count_nonzero(m).item() == truth.sum()
    assert ct.masked_select(x, m).tolist() == x.numpy()[truth].tolist()
    assert ct.where(m, x, -x).tolist() == np.where(truth, x.numpy(), -x.numpy()).tolist()
    y = x.clone().masked_scatter_(m, ct.full((len(raw),), 7.0))
    assert y.tolist() == np.where(truth, 7.0, x.numpy()).tolist()
    assert m.float().tolist() == truth.astype(np.float32).tolist()
    assert m.to(ct.int64).tolist() == truth.astype(np.int64).tolist()
    assert ct.where(m, ct.tensor(1 + 2j), ct.tensor(0j)).tolist() == [1 + 2j if t else 0j for t in truth]


@pytest.mark.parametrize("ix", [True, False, (None, True), (True, 0), (Ellipsis, True), (0, True), (True, True),
                                (False, slice(None)), (True, [0, 1]), (slice(1, None), True), (True, Ellipsis, False)])
def test_python_bool_index_is_a_zero_d_mask(ix):
    """x[True] / x[False] are torch's 0-d bool masks: a new dim of 1 or 0, recorded as IndexBackward0; two of
    them share that one dim, and a list beside them broadcasts with it. Reading, the gradient and writing"""
    def run(L):
        x = L.arange(6.).reshape(2, 3).requires_grad_()
        try:
            r = x[ix]
        except IndexError as e:
            return str(e)
        r.sum().backward()
        y = L.zeros(2, 3)
        y[ix] = 5
        return tuple(r.shape), type(r.grad_fn).__name__, r.tolist(), x.grad.tolist(), y.tolist()
    assert run(ct) == run(torch)


def test_numpy_arrays_index_like_tensors():
    """stargan's label2onehot: out[np.arange(n), labels.long()] = 1. A numpy array with a length is an
    advanced index (it has __index__, which only its 0-d form can answer); a 0-d one is an int."""
    def put(L):
        out = L.zeros(4, 5)
        out[np.arange(4), L.tensor([0, 3, 1, 3])] = 1
        out[np.array(2)] = 7
        return out
    check(put)
    check(lambda L: L.arange(20.).view(4, 5)[np.arange(2)])
    check(lambda L: L.arange(20.).view(4, 5)[np.array(1)])
    check(lambda L: L.arange(20.).view(4, 5)[np.array([[1, 3]]), np.int64(2)])
    check(lambda L: L.arange(20.).view(4, 5)[:, np.array([True, False, True, False, True])])


@pytest.mark.parametrize("dtype", DTYPES + ["complex64", "complex128"])
def test_single_element_gathers_along_last_dim(dtype):
    """index_select along the last dim and x[:, idx] (single-element gathers, indices checked once)"""
    rs = np.random.RandomState(5)
    a = rs.randn(6, 9) * 4
    xt = torch.tensor(a).to(getattr(torch, dtype))
    xc = ct.tensor(a).to(getattr(ct, dtype))
    idx = rs.randint(0, 9, 13)
    for t, c in ((xt, xc), (xt.t().contiguous().t(), xc.t().contiguous().t()), (xt[::2, 1:], xc[::2, 1:])):
        i = idx[idx < t.shape[1]]
        for e, r in ((torch.index_select(t, 1, torch.tensor(i)), ct.index_select(c, 1, ct.tensor(i))),
                     (torch.index_select(t, -1, torch.tensor(i, dtype=torch.int32)),
                      ct.index_select(c, -1, ct.tensor(i, dtype=ct.int32))),
                     (t[:, torch.tensor(i - 3)], c[:, ct.tensor(i - 3)]),
                     (t[:, torch.tensor([], dtype=torch.int64)], c[:, ct.tensor([], dtype=ct.int64)])):
            assert str(r.dtype) == str(e.dtype) and tuple(r.shape) == tuple(e.shape)
            assert np.array_equal(r.to(ct.complex128).numpy(), e.to(torch.complex128).numpy())
    for bad in ([1, 9, 2], [1, -1], [-10]):
        oracle.raises_like(lambda: ct.index_select(xc, 1, ct.tensor(bad)),
                           lambda: torch.index_select(xt, 1, torch.tensor(bad)))
        if bad != [1, -1]:   # x[:, idx] wraps negative indices, index_select does not
            oracle.raises_like(lambda: xc[:, ct.tensor(bad)], lambda: xt[:, torch.tensor(bad)])


def test_uint8_masks_warn_and_refuse_as_torch():
    """pre-1.2 byte masks: indexing and index_put with a tensor value work with torch's deprecation warning;
    x[byte_mask] = scalar (one-element value) goes to masked_fill_ in torch, which refuses a byte mask"""
    import warnings
    got = []
    for m in (ct, torch):
        u = m.tensor([1, 0, 1], dtype=m.uint8)
        x = m.arange(6.0).reshape(3, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sel = x[u]
            x[u] = m.ones(2, 2) * 7
            y = m.zeros(3).index_put_((u,), m.tensor([1.0, 2.0]))
        errs = []
        for f in (lambda: x.__setitem__(u, 0), lambda: x.index_put_((u,), m.tensor(1.0)),
                  lambda: x.masked_fill(u[:, None], 1.0), lambda: x.masked_fill(m.ones(3, 2), 1.0),
                  lambda: x.masked_fill(m.ones(3, 2, dtype=m.int64), 1.0),
                  lambda: x.masked_scatter(m.ones(3, 2), m.ones(6))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError) as e:
                    f()
            errs.append(str(e.value))
        got.append((sel.tolist(), x.tolist(), y.tolist(), errs,
                    [(r.category, str(r.message).split(" (Triggered internally")[0]) for r in w]))
    assert got[0] == got[1] and len(got[0][4]) == 3


@pytest.mark.parametrize("key", ["[:, []]", "[[]]", "[[], 0]", "[..., []]", "[:, [[]]]", "[[1.0]]",
                                 "[:, [0.7, 2.2]]", "[[True, False]]", "[[1, 0], [2.9, 0.1]]"])
def test_list_indices_index_as_int64_like_torch(key):
    """torch turns an index list that is not a mask into an int64 tensor (indexing_tensor_from_data): an empty
    list selects nothing (x[:, []] is (N, 0)) and floats truncate; reads and writes alike"""
    out = []
    for L in (ct, torch):
        x = L.arange(6.0).view(2, 3)
        got = eval("x" + key)
        y = x.clone()
        exec("y" + key + " = -1")
        out.append((tuple(got.shape), got.tolist(), y.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("case", range(8))
def test_setitem_with_basic_indices_reports_the_expand_error_like_torch(case):
    """x[slices] = value copies the value, stripped of leading size-1 dims, expanded to the slice (torch's
    copy_to): a mismatch is expand's "The expanded size of the tensor ..." text, or its too-many-dims one;
    advanced indices keep index_put's "shape mismatch" text"""
    idx, shape = [((slice(None), slice(0, 3)), (2, 6)), (0, (3, 6)), ((0, slice(1, 3)), (5,)), (Ellipsis, (2, 2)),
                  ((slice(None), None, 0), (4, 2, 6)), ((slice(0, 2), 1, slice(None)), (3, 6)),
                  ((slice(None), slice(None), slice(0, 2)), (4, 5, 3, 1)),
                  ((slice(None), [0, 1]), (3, 5, 6))][case]
    out = []
    for L in (ct, torch):
        x = L.zeros(4, 5, 6)
        i = tuple(L.tensor(k) if isinstance(k, list) else k for k in idx) if isinstance(idx, tuple) else idx
        with pytest.raises(RuntimeError) as e:
            x[i] = L.ones(*shape)
        out.append(str(e.value))
    assert out[0] == out[1]


def test_setitem_value_with_leading_ones_keeps_its_gradient():
    """the value's leading size-1 dims are dropped by an autograd view: y of shape (1, 1, 6) written into a row
    gets its gradient (the dropped dims were a raw view before, and y.grad stayed None)"""
    out = []
    for L in (ct, torch):
        x = L.zeros(2, 6).requires_grad_().clone()
        y = L.randn(1, 1, 6).requires_grad_()
        x[0] = y
        x[1, None] = y * 2
        (x * L.arange(12.).view(2, 6)).sum().backward()
        out.append((y.grad.tolist(), type(x.grad_fn).__name__))
    assert out[0] == out[1]


@pytest.mark.parametrize("dst,src,dt", [((5, 6), (3, 6), "float32"), ((5, 6), (3, 6), "float64"),
                                        ((1, 6), (3, 6), "float32"), ((5, 6), (2, 5, 6), "float32")])
def test_copy_shape_errors_broadcast_the_destination_first_like_torch(dst, src, dt):
    """copy_ broadcasts its destination with the source first, as torch's TensorIterator: sizes that cannot
    broadcast are "The size of tensor a ..."; ones that broadcast past the destination "output with shape ..." """
    out = []
    for L in (ct, torch):
        with pytest.raises(RuntimeError) as e:
            L.zeros(*dst).copy_(L.ones(*src, dtype=getattr(L, dt)))
        with pytest.raises(RuntimeError) as e2:
            L.zeros(*dst)[:] = L.ones(*src)[None]
        out.append((str(e.value), str(e2.value)))
    assert out[0] == out[1]
@pytest.mark.parametrize("shape,dim,idx", [((0, 3), 0, [0]), ((3, 0), 1, [2]), ((0, 3), 0, [-1]), ((2, 0), 0, [5]),
                                           ((2, 0), 0, [-1]), ((2, 0), 0, [1]), ((2, 0, 3), 2, [3]), ((0, 2), 0, []),
                                           ((0,), 0, [0]), ((2, 3), 0, [5])])
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_index_select_of_a_tensor_without_elements_checks_its_indices_as_torch(shape, dim, idx, itype):
    def run(L):
        try:
            return L.zeros(*shape).index_select(dim, L.tensor(idx, dtype=getattr(L, itype))).shape
        except Exception as e:   # noqa: BLE001 - type and text compared
            return type(e).__name__, str(e)
    assert tuple(run(ct)) == tuple(run(torch))
