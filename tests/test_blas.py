"""mm/bmm/addmm/baddbmm and the matmul family vs torch: values, shapes, gradients, errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
          ((1, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (4,)), ((0, 4), (4, 3)),
          ((3, 0), (0, 2))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_matmul_values_and_grads(sa, sb, dt):
    rs = np.random.RandomState(0)
    a, b = rs.randn(*sa).astype(dt), rs.randn(*sb).astype(dt)
    ta, tb = ct.tensor(a, requires_grad=True), ct.tensor(b, requires_grad=True)
    ra, rb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    x, y = ta @ tb, ra @ rb
    assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
    tol = 1e-4 if dt == "float32" else 1e-10
    np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)
    (x * 2).sum().backward()
    (y * 2).sum().backward()
    np.testing.assert_allclose(ta.grad.numpy(), ra.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(tb.grad.numpy(), rb.grad.numpy(), rtol=tol, atol=tol)


def test_transposed_operands_and_int_matmul():
    a = ct.randn(5, 3)
    b = ct.randn(4, 3)
    np.testing.assert_allclose((a @ b.t()).numpy(), a.numpy() @ b.numpy().T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((a.t() @ a).numpy(), a.numpy().T @ a.numpy(), rtol=1e-5, atol=1e-5)
    s = ct.randn(6, 6)[::2, ::2]
    np.testing.assert_allclose((s @ s).numpy(), s.numpy() @ s.numpy(), rtol=1e-5, atol=1e-5)
    i = ct.arange(6).view(2, 3)
    assert (i @ i.t()).tolist() == (np.arange(6).reshape(2, 3) @ np.arange(6).reshape(2, 3).T).tolist()
    assert (i @ i.t()).dtype == ct.int64


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("B,M,K,N", [(10000, 1, 1, 1), (300, 1, 64, 1), (64, 4, 4, 4), (8, 8, 8, 8), (5, 3, 2, 7)])
def test_bmm_many_tiny_products(dt, B, M, K, N):
    """batched dot products (the benchmark recipe's bmm) and small batches, with transposed and strided operands,
    baddbmm's beta (beta=0 ignores NaN in self, as torch does)"""
    rs = np.random.RandomState(2)
    a, b, m = rs.randn(B, M, K).astype(dt), rs.randn(B, N, K).astype(dt), rs.randn(B, M, N).astype(dt)
    m[0, 0, 0] = np.nan
    for lib in (ct, torch):
        ta, tb, tm = lib.tensor(a), lib.tensor(b).transpose(1, 2), lib.tensor(m)
        out = (lib.bmm(ta, tb), lib.baddbmm(tm, ta, tb, beta=0, alpha=2.0),
               lib.baddbmm(tm, ta.transpose(1, 2).contiguous().transpose(1, 2), tb, beta=0.5, alpha=-1.0),
               lib.bmm(ta[::2], tb[::2]))
        if lib is ct:
            ours = [o.numpy() for o in out]
        else:
            ref = [o.numpy() for o in out]
    tol = 1e-5 if dt == "float32" else 1e-12
    for o, r in zip(ours, ref):
        np.testing.assert_allclose(o, r, rtol=tol, atol=tol)


def test_addmm_baddbmm_linear():
    rs = np.random.RandomState(1)
    c, a, b = rs.randn(3, 5), rs.randn(3, 4), rs.randn(4, 5)
    r = ct.addmm(ct.tensor(c), ct.tensor(a), ct.tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(r.numpy(), 0.5 * c + 2 * a @ b, rtol=1e-10)
    bias = rs.randn(5)
    np.testing.assert_allclose(ct.addmm(ct.tensor(bias), ct.tensor(a), ct.tensor(b)).numpy(), bias + a @ b, rtol=1e-10)
    x, w = rs.randn(2, 3, 4), rs.randn(6, 4)
    np.testing.assert_allclose(ct._C._nn.linear(ct.tensor(x), ct.tensor(w), ct.tensor(rs.randn(6) * 0)).numpy(),
                               x @ w.T, rtol=1e-10)
    b1, b2, m = rs.randn(2, 3, 4), rs.randn(2, 4, 5), rs.randn(2, 3, 5)
    np.testing.assert_allclose(ct.baddbmm(ct.tensor(m), ct.tensor(b1), ct.tensor(b2), alpha=0.5).numpy(),
                               m + 0.5 * b1 @ b2, rtol=1e-10)
    assert ct.dot(ct.tensor([1.0, 2.0]), ct.tensor([3.0, 4.0])).item() == 11.0
    assert ct.mv(ct.ones(2, 3), ct.ones(3)).tolist() == [3.0, 3.0]
    assert ct.outer(ct.tensor([1.0, 2.0]), ct.tensor([1.0, 3.0])).tolist() == [[1.0, 3.0], [2.0, 6.0]]


@pytest.mark.parametrize("shape,contig,bias", [((4,), True, True), ((4,), True, False), ((2, 3, 4), True, True),
                                                ((2, 3, 4), False, True), ((2, 1, 3, 4), True, True), ((0, 3, 4), True, True),
                                                ((3, 4), True, True), ((2, 3, 4), True, False)])
def test_linear_like_torch(shape, contig, bias):
    """Values, gradients and the grad_fn torch's linear leaves (its fused
    flattened addmm for contiguous input with a bias is ViewBackward0)."""
    rs = np.random.RandomState(2)
    x = rs.randn(*shape[::-1]).transpose(*range(len(shape))[::-1]) if not contig else rs.randn(*shape)
    w, b = rs.randn(5, 4), rs.randn(5)
    outs = []
    for m in (ct, torch):
        tx = m.tensor(np.ascontiguousarray(x.transpose(*range(x.ndim)[::-1])) if not contig else x, requires_grad=True)
        xin = tx.permute(*range(x.ndim)[::-1]) if not contig else tx
        tw, tb = m.tensor(w, requires_grad=True), m.tensor(b, requires_grad=True)
        y = m.nn.functional.linear(xin, tw, tb if bias else None)
        (y * y).sum().backward()
        outs.append((y, tx.grad, tw.grad, tb.grad, type(y.grad_fn).__name__, xin.is_contiguous()))
    (y1, gx1, gw1, gb1, n1, c1), (y2, gx2, gw2, gb2, n2, c2) = outs
    assert c1 == c2 == contig or x.ndim == 1
    assert tuple(y1.shape) == tuple(y2.shape)
    np.testing.assert_allclose(y1.detach().numpy(), y2.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx1.numpy(), gx2.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw1.numpy(), gw2.numpy(), rtol=1e-10, atol=1e-12)
    if bias:
        np.testing.assert_allclose(gb1.numpy(), gb2.numpy(), rtol=1e-10, atol=1e-12)
        assert n1 == n2


def test_errors():
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied \\(2x3 and 4x5\\)"):
        ct.mm(ct.ones(2, 3), ct.ones(4, 5))
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        ct.matmul(ct.tensor(1.0), ct.ones(2))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        ct.mm(ct.ones(2, 2), ct.ones(2, 2, dtype=ct.float64))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        ct.dot(ct.ones(2, 2), ct.ones(2))


def _grad_layouts(lib):
    """Strides of .grad as torch lays them out: a Linear weight's gradient is
    made in the weight's layout (mm's mat2 gradient follows mat2's strides),
    and a first gradient of a contiguous leaf is contiguous."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(5, 3)
    lin(lib.ones(4, 5)).sum().backward()
    w = lib.ones(6, 2, requires_grad=True)
    (lib.ones(4, 6) @ w.t().t()).sum().backward()   # mm with a plain mat2
    wt = lib.ones(3, 7, requires_grad=True)
    (lib.ones(4, 7) @ wt.t()).sum().backward()      # mm with a transposed mat2
    v = lib.ones(4, 3, requires_grad=True)
    (v.t() * 2).sum().backward()                    # the gradient arrives transposed
    nc = lib.ones(3, 4).t().requires_grad_()         # a non-contiguous leaf keeps its layout
    (nc * 2).sum().backward()
    return [(t.grad.stride(), t.grad.tolist()) for t in (lin.weight, lin.bias, w, wt, v, nc)]


def test_grad_layouts_match_torch():
    assert _grad_layouts(ct) == _grad_layouts(torch)


FOLD_SHAPES = [((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 1, 3, 4), (1, 5, 4, 6)),
               ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (4, 5)), ((3, 4), (2, 2, 4, 5)), ((2, 2, 3, 4), (4,)),
               ((4,), (2, 2, 4, 5)), ((2, 3, 4), (2, 2, 4, 5)), ((0, 3, 4), (4, 5))]


def _matmul_history(lib, sa, sb, grad_a, grad_b, transpose_a):
    rs = np.random.RandomState(1)
    if transpose_a and len(sa) >= 3:   # a's leading dims do not merge into one
        a = lib.tensor(rs.randn(sa[1], sa[0], *sa[2:]).astype(np.float32)).transpose(0, 1)
    else:
        a = lib.tensor(rs.randn(*sa).astype(np.float32))
    b = lib.tensor(rs.randn(*sb).astype(np.float32))
    a.requires_grad_(grad_a)
    b.requires_grad_(grad_b)
    r = a @ b
    names = []
    f = r.grad_fn
    while f is not None and len(names) < 3:   # the top of the chain: matmul's own steps
        names.append(type(f).__name__)
        nxt = [n for n, _ in f.next_functions if n is not None and type(n).__name__ != "AccumulateGrad"]
        f = nxt[0] if nxt else None
    r.sum().backward() if r.requires_grad else None
    grads = [t.grad.numpy() if t.grad is not None else None for t in (a, b)] if r.requires_grad else []
    return r.detach().numpy(), names, grads


@pytest.mark.parametrize("sa,sb", FOLD_SHAPES)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_matmul_fold_grad_fn_like_torch(sa, sb, grads, transpose_a):
    """matmul folds batches into one mm exactly where torch does (its grad_fn chain
    shows it: UnsafeViewBackward0 over MmBackward0, or CloneBackward0/TransposeBackward0
    for a 2-d first operand), else bmm under UnsafeViewBackward0; values and gradients
    as torch's. (torch's MvBackward0/DotBackward0 are MmBackward0 here: mv and dot are
    composites over mm.)"""
    r, names, g = _matmul_history(ct, sa, sb, *grads, transpose_a)
    tr, tnames, tg = _matmul_history(torch, sa, sb, *grads, transpose_a)
    np.testing.assert_allclose(r, tr, rtol=1e-5, atol=1e-5)
    assert r.shape == tr.shape
    norm = {"MvBackward0": "MmBackward0"}
    n = min(len(names), 2)
    assert names[:n] == [norm.get(x, x) for x in tnames[:n]], (names, tnames)
    for x, y in zip(g, tg):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def test_matmul_fold_errors_like_torch():
    for sa, sb in [((2, 3, 4), (5,)), ((2, 3, 4), (5, 6)), ((3, 4), (2, 5, 6)), ((4,), (2, 5, 6))]:
        for rg in (False, True):
            oracle.raises_like(lambda: ct.ones(*sa, requires_grad=rg) @ ct.ones(*sb, requires_grad=rg),
                               lambda: torch.ones(*sa, requires_grad=rg) @ torch.ones(*sb, requires_grad=rg))


@pytest.mark.parametrize("call", ["v.dot('a')", "v.vdot(1)", "v.inner(1)", "v.outer(1)", "v.ger(None)", "m.mv(1)",
                                  "m.matmul(1)", "m.mm(1)", "L.dot(1, v)", "L.matmul([1], m)", "L.mv('a', v)"])
def test_non_tensor_arguments_are_the_parser_s_type_error(call):
    """a number or string where the matrix products take a Tensor: torch's TypeError naming the argument (the
    method form's positions), not an AttributeError from inside"""
    def run(L):
        v, m = L.ones(3), L.ones(2, 3)
        try:
            eval(call)
        except Exception as e:
            return type(e).__name__, str(e)
        return None
    assert run(ct) == run(torch)


_OUT_CALLS = {
    "dot": (lambda L: (L.ones(3), L.arange(3.0)), lambda L, a, b, o: L.dot(a, b, out=o)),
    "vdot": (lambda L: (L.ones(3), L.arange(3.0)), lambda L, a, b, o: L.vdot(a, b, out=o)),
    "inner": (lambda L: (L.ones(2, 3), L.arange(3.0)), lambda L, a, b, o: L.inner(a, b, out=o)),
    "mv": (lambda L: (L.ones(2, 3), L.arange(3.0)), lambda L, a, b, o: L.mv(a, b, out=o)),
    "addmv": (lambda L: (L.ones(2, 3), L.arange(3.0)), lambda L, a, b, o: L.addmv(L.ones(2), a, b, out=o)),
    "addbmm": (lambda L: (L.ones(2, 2, 3), L.ones(2, 3, 2)), lambda L, a, b, o: L.addbmm(L.ones(2, 2), a, b, out=o)),
    "matmul11": (lambda L: (L.ones(3), L.arange(3.0)), lambda L, a, b, o: L.matmul(a, b, out=o)),
    "matmul21": (lambda L: (L.ones(2, 3), L.arange(3.0)), lambda L, a, b, o: L.matmul(a, b, out=o)),
    "matmul33": (lambda L: (L.ones(2, 2, 3), L.ones(2, 3, 2)), lambda L, a, b, o: L.matmul(a, b, out=o)),
}


def _out_outcome(lib, name, out_dtype, grad):
    make, call = _OUT_CALLS[name]
    a, b = make(lib)
    a.requires_grad_(grad)
    o = lib.zeros(0, dtype=getattr(lib, out_dtype))
    try:
        r = call(lib, a, b, o)
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return r is o, o.tolist()


@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
@pytest.mark.parametrize("out_dtype,grad", [("float32", False), ("float64", False), ("int64", False),
                                            ("float32", True)])
def test_product_out_is_written_like_torch(name, out_dtype, grad):
    """out= of the composite products holds the result (it was left untouched), a wrong dtype and inputs
    needing grad raise torch's messages"""
    assert _out_outcome(ct, name, out_dtype, grad) == _out_outcome(torch, name, out_dtype, grad)


@pytest.mark.parametrize("call", [lambda L: L.dot(L.ones(2, dtype=L.int32), L.ones(2, dtype=L.float16)),
                                  lambda L: L.vdot(L.ones(2, dtype=L.float64), L.ones(2)),
                                  lambda L: L.mv(L.ones(2, 3, dtype=L.float64), L.ones(3)),
                                  lambda L: L.ones(2, 3, requires_grad=True) @ L.ones(3, dtype=L.float64)])
def test_product_dtype_mismatch_messages_like_torch(call):
    msgs = []
    for lib in (ct, torch):
        with pytest.raises(RuntimeError) as e:
            call(lib)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_vector_products_through_gemv_match_numpy(dtype):
    # products with one output row or column go to BLAS gemv (no packing of the matrix); every operand layout
    rng = np.random.default_rng(7)
    A = rng.standard_normal((37, 53)).astype(dtype)
    x = rng.standard_normal(53).astype(dtype)
    y = rng.standard_normal(37).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    At, AtT = ct.tensor(A), ct.tensor(A.T.copy()).t()
    for M in (At, AtT):
        np.testing.assert_allclose((M @ ct.tensor(x)).numpy(), A @ x, rtol=tol, atol=tol)
        np.testing.assert_allclose((ct.tensor(y) @ M).numpy(), y @ A, rtol=tol, atol=tol)
        np.testing.assert_allclose(ct.mm(M, ct.tensor(x).view(53, 1)).numpy()[:, 0], A @ x, rtol=tol,
                                   atol=tol)
        np.testing.assert_allclose(ct.mm(ct.tensor(y).view(1, 37), M).numpy()[0], y @ A, rtol=tol,
                                   atol=tol)
        out = ct.addmm(ct.tensor(y).view(37, 1), M, ct.tensor(x).view(53, 1), beta=0.5, alpha=2)
        np.testing.assert_allclose(out.numpy()[:, 0], 0.5 * y + 2 * (A @ x), rtol=tol, atol=tol)
    # a strided vector and a column of a wider matrix
    W = rng.standard_normal((53, 4)).astype(dtype)
    np.testing.assert_allclose(ct.mm(At, ct.tensor(W)[:, 1:2]).numpy()[:, 0], A @ W[:, 1], rtol=tol,
                               atol=tol)
    np.testing.assert_allclose((At @ ct.tensor(W)[:, 2]).numpy(), A @ W[:, 2], rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_products_accumulate_in_float32_like_torch(dt):
    # half types widen to float32 for one float GEMM, rounded once: torch's CPU GEMM does the same,
    # so the results agree to about one rounding of the half type
    rs = np.random.RandomState(3)
    a, b, c = rs.randn(37, 70).astype("float32"), rs.randn(70, 45).astype("float32"), rs.randn(37, 45).astype("float32")
    eps = 2 ** -7 if dt == "bfloat16" else 2 ** -10
    for L in (ct, torch):
        L.A, L.B, L.C = (L.tensor(v).to(getattr(L, dt)) for v in (a, b, c))
    cases = [lambda L: L.A @ L.B, lambda L: L.B.t() @ L.A.t(), lambda L: L.A[:, ::2] @ L.B[::2],
             lambda L: L.addmm(L.C, L.A, L.B, beta=0.5, alpha=2), lambda L: L.A @ L.B[:, :1],
             lambda L: L.bmm(L.A[None].expand(3, 37, 70), L.B[None].expand(3, 70, 45).transpose(1, 2).contiguous().transpose(1, 2)),
             lambda L: L.baddbmm(L.C[None], L.A.view(1, 37, 70), L.B.view(1, 70, 45), beta=-1),
             lambda L: L.A[:0] @ L.B, lambda L: L.A[:, :0] @ L.B[:0]]
    for f in cases:
        x, y = f(ct), f(torch)
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        xv, yv = x.float().numpy(), y.float().numpy()
        np.testing.assert_allclose(xv, yv, rtol=2 * eps, atol=2 * eps * max(1.0, np.abs(yv).max(initial=0)))
        # most entries land on the same half value
        assert xv.size == 0 or (xv == yv).mean() > 0.97
    ta = ct.tensor(a[:5, :6]).to(getattr(ct, dt)).requires_grad_()
    ra = torch.tensor(a[:5, :6]).to(getattr(torch, dt)).requires_grad_()
    (ta @ ta.t()).sum().backward()
    (ra @ ra.t()).sum().backward()
    np.testing.assert_allclose(ta.grad.float().numpy(), ra.grad.float().numpy(), rtol=2 * eps, atol=2 * eps * 8)


@pytest.mark.parametrize("sa,sb", [((2, 4, 0, 4), (2, 4, 4, 5)), ((2, 4, 3, 0), (2, 4, 0, 5)), ((2, 4, 3, 4), (4, 0)),
                                   ((0, 3, 4), (2, 1, 4, 5)), ((3, 0), (2, 0, 5)), ((2, 1, 3, 4), (4,))])
def test_batched_matmul_with_empty_dims_like_torch(sa, sb):
    """batched matmul where the product has no elements or sums over none: torch's shapes, zeros and gradients
    (the operands' batch was folded with -1, which no element count can fix)"""
    rs = np.random.RandomState(0)
    a, b = rs.randn(*sa), rs.randn(*sb)
    res = []
    for L in (ct, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        r = L.matmul(x, y)
        r.sum().backward()
        res.append((r.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for got, want in zip(*res):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda L, a, w, b: L.mm(a, w.double()), lambda L, a, w, b: L.mm(a[None], w.double()),
    lambda L, a, w, b: L.mm(a, w[None]), lambda L, a, w, b: L.mm(a.half(), w),
    lambda L, a, w, b: L.addmm(b, a, w.double()), lambda L, a, w, b: L.addmm(b.double(), a, w),
    lambda L, a, w, b: L.addmm(b, a.double(), w), lambda L, a, w, b: L.addmm(b, a[None], w),
    lambda L, a, w, b: L.addmm(b, a, w[None]), lambda L, a, w, b: L.addmm(b, a[:, :2], w),
    lambda L, a, w, b: L.nn.functional.linear(a.double(), w.t(), b),
    lambda L, a, w, b: L.nn.functional.linear(a.double()[None], w.t(), b),
    lambda L, a, w, b: L.nn.functional.linear(a.double(), w.t()),
    lambda L, a, w, b: L.nn.Linear(3, 4)(a.double())])
def test_dtype_and_rank_errors_as_torch(call):
    """addmm (and Linear with a bias) checks the dtypes first and names them as ScalarTypes ('mat1 and mat2
    must have the same dtype, but got Double and Float'); mm checks ranks and shapes first and names C++ types
    ('double != float'): the text a model fed float64 input meets"""
    msgs = []
    for L in (ct, torch):
        L.manual_seed(0)
        with pytest.raises(RuntimeError) as e:
            call(L, L.ones(2, 3), L.ones(3, 4), L.ones(4))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("call", [
    "m.addmm(2, m.ones(2, 2), 3, m.ones(2, 2), m.ones(2, 2))",
    "m.addmm(2, m.ones(2, 2), m.ones(2, 2), m.ones(2, 2))",
    "m.ones(1, 2, 2).baddbmm_(2, 3, m.ones(1, 2, 2), m.ones(1, 2, 2))",
    "m.zeros(3).add_(2, m.ones(3))",
    "m.addcmul(m.zeros(3), 2, m.ones(3), m.ones(3))"])
def test_deprecated_scalar_first_overloads_warn_once_with_torchs_text(call):
    """pre-1.0 code passes beta/alpha/value positionally: the overload still computes, and the first call in a
    process warns with torch's text (its signatures print an optional Tensor as Tensor, defaults as ' = ')"""
    code = ("import importlib, sys, warnings\nm = importlib.import_module(sys.argv[1])\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    r = %s\n    %s\n"
            "print(r.tolist(), len(w))\nfor x in w: print(str(x.message).split(' (Triggered')[0])\n" % (call, call))
    outs = oracle.fresh_process_outputs(code)
    # torch's addmm lists a third overload (out_dtype=) that cthtorch does not have
    strip = (lambda s: s.split("\n\taddmm(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype")[0]
             .rstrip("\n"))
    assert strip(outs[0]) == strip(outs[1])
