"""In-place ops on views: the base's history becomes CopySlices around the op's
node, the view's grad_fn is regenerated from the base (AsStridedBackward0),
other views of the base see later in-place changes, and further in-place ops
on the base leave that history valid (it keeps the base's geometry only);
torch's errors for views of leaves, for the outputs of multi-view ops and for
saved tensors modified in place. Gradients against torch."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(26)
X = RS.uniform(-1, 1, size=(3, 4))
W = RS.uniform(-1, 1, size=(4,))


def _f(L, x, w):
    y = x * 1
    y[:, 1].mul_(3)
    return y


# each pattern: (L, x (3,4) requiring grad, w (4,) requiring grad) -> result
PATTERNS = {
    "slice_mul_": _f,
    "select_assign_scalar": lambda L, x, w: _assign(L, x, 1, 7.0),
    "select_assign_tensor": lambda L, x, w: _assign(L, x, 1, w * 2),
    "index_assign_tensor": lambda L, x, w: _assign(L, x, L.tensor([0, 2]), w.exp()),
    "slice_assign_broadcast": lambda L, x, w: _assign(L, x, (slice(None), slice(1, 3)), w[:2]),
    "narrow_add_": lambda L, x, w: _inplace(L, x, lambda y: y.narrow(1, 1, 2).add_(w[:2])),
    "transpose_mul_": lambda L, x, w: _inplace(L, x, lambda y: y.t()[2].mul_(w[:3])),
    "view_copy_": lambda L, x, w: _inplace(L, x, lambda y: y.view(12)[4:8].copy_(w * w)),
    "reshape_zero_": lambda L, x, w: _inplace(L, x, lambda y: y.reshape(2, 6)[1].zero_()),
    "select_fill_": lambda L, x, w: _inplace(L, x, lambda y: y[2].fill_(0.5)),
    "clamp_": lambda L, x, w: _inplace(L, x, lambda y: y[:, ::2].clamp_(-0.3, 0.3)),
    "chain_of_views": lambda L, x, w: _inplace(L, x, lambda y: y[1:].t()[1:3][0].mul_(w[:2].sum())),
    "two_inplace_on_view": lambda L, x, w: _inplace(L, x, lambda y: (y[0].mul_(2), y[0].add_(w))),
    "exp_saves_result": lambda L, x, w: _inplace(L, x, lambda y: y[1].exp_()),
    "view_of_zeros_base": lambda L, x, w: _zeros_base(L, x, w),
    "base_mul_tensor": lambda L, x, w: _inplace(L, x, lambda y: y.mul_(w)),   # not a view: self saved recorded
}


def _assign(L, x, idx, v):
    y = x * 1
    y[idx] = v
    return y


def _inplace(L, x, op):
    y = x * 1
    op(y)
    return y * y


def _zeros_base(L, x, w):
    y = L.zeros(3, 4, dtype=x.dtype)   # requires no grad until a view of it gets w
    y[1] = w
    y[2].copy_(x[0] * w)
    return y


# ---- in-place ops through views after other in-place ops on the same base ----
# The regenerated view history (AsStridedBackward0) keeps only the base's
# geometry, as torch's does: later in-place ops on the base must not trip the
# saved-version check where torch accepts them.

def _mass_spring(L, x, w):
    F = L.zeros(3, 4, dtype=x.dtype)      # forces accumulated row by row, as a physics step does
    f = x[0] * w
    F[0] += f
    F[1] -= f
    F[2] += x[2] * 2
    F[0] -= w
    return F


def _copy_then_inplace(L, x, w):
    F = L.zeros(3, 4, dtype=x.dtype)
    F[0] += x[0] * w
    F[1].copy_(F[0])
    F.mul_(2)
    F[2].copy_(F[1] + x[1])    # add saves neither operand: the view F[1] may change later
    F[1].mul_(w)
    return F


def _chain_of_view_kinds(L, x, w):
    y = x * 1
    row, col, nar = y[0], y[:, 1:3], y.narrow(1, 2, 2)
    diag, tr = y.diagonal(), y.t()
    row.add_(w)                 # select
    diag.mul_(w[:3])            # diagonal of the same base
    col[1:].sub_(x[0, :2])      # slice, then a slice of it
    nar.mul_(3)                 # narrow
    tr[3].add_(row[:3] * 2)     # transpose, reading another view that is now stale
    row.mul_(diag.sum())        # the first view again, after four other in-place ops
    return y * 1 + nar.sum() + col[0, 0]


def _as_strided_base_modified(L, x, w):
    y = x * 1
    z = y.as_strided((2, 3), (1, 2), 1) * 1    # its backward needs y's geometry only, not its values
    y.add_(w)
    return z + y[:2, :3]


VIEW_CHAINS = {
    "mass_spring": _mass_spring,
    "copy_then_inplace": _copy_then_inplace,
    "chain_of_view_kinds": _chain_of_view_kinds,
    "as_strided_base_modified": _as_strided_base_modified,
}


def _grads(fn, create_graph=False):
    out = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        r = fn(L, x, w)
        g = L.autograd.grad((r * r.detach().sin()).sum(), (x, w), allow_unused=True, create_graph=create_graph)
        out.append((r, g))
    return out


@pytest.mark.parametrize("name", sorted(PATTERNS) + sorted(VIEW_CHAINS))
def test_gradients_match_torch(name):
    (rc, gc_), (rt, gt) = _grads(PATTERNS.get(name) or VIEW_CHAINS[name])
    np.testing.assert_allclose(rc.tolist(), rt.tolist(), rtol=1e-12)
    for a, b in zip(gc_, gt):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.tolist(), b.tolist(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["slice_mul_", "select_assign_tensor", "index_assign_tensor", "exp_saves_result",
                                  "transpose_mul_", "base_mul_tensor", "view_of_zeros_base"])
def test_double_backward_matches_torch(name):
    _check_double_backward(PATTERNS[name], rtol=1e-12, atol=1e-15)


def _check_double_backward(fn, rtol, atol):
    xs = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor(W, requires_grad=True)
        r = fn(L, x, w)
        gx, gw = L.autograd.grad((r * r).sum(), (x, w), create_graph=True, allow_unused=True)
        gg = (gx * gx).sum() + (0 if gw is None else (gw * gw).sum())
        xs.append([v.tolist() for v in L.autograd.grad(gg, (x, w), allow_unused=True) if v is not None])
    assert len(xs[0]) == len(xs[1])
    for a, b in zip(*xs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_gradcheck_through_copy_slices():
    x = ct.tensor(X, requires_grad=True)
    w = ct.tensor(W, requires_grad=True)
    for name in ("slice_mul_", "index_assign_tensor", "transpose_mul_", "view_of_zeros_base", "base_mul_tensor",
                 *VIEW_CHAINS):
        fn = PATTERNS.get(name) or VIEW_CHAINS[name]
        assert ct.autograd.gradcheck(lambda x, w: fn(ct, x, w), (x, w))
        assert ct.autograd.gradgradcheck(lambda x, w: fn(ct, x, w), (x, w))


def test_grad_fn_names_and_rebase():
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        y = x * 1
        v = y[1]
        assert type(v.grad_fn).__name__ == "SelectBackward0"
        v.mul_(2)
        assert type(y.grad_fn).__name__ == "CopySlices"
        assert type(v.grad_fn).__name__ == "AsStridedBackward0"
        assert v._base is y and y._version == v._version == 1


def test_view_sees_inplace_on_base():
    got = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        y = x * 1
        v = y[1:, 2]
        u = y.t()
        y.mul_(x)          # the base's history changes after the views were taken
        assert type(v.grad_fn).__name__ == "AsStridedBackward0"
        (v.sum() + (u * u).sum()).backward()
        got.append(x.grad.tolist())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)


def test_other_view_of_base_sees_inplace_on_a_view():
    got = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        y = x * 1
        a = y[0]
        b = y[0, 1:]
        b.mul_(5)
        (a * a).sum().backward()
        got.append(x.grad.tolist())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)


def test_copies_that_share_the_version_are_not_views():
    # contiguous()/.to() of a transposed/other-dtype tensor copies: in-place on
    # the copy must not write gradient into the original
    got = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        y = x * 1
        c = y.t().contiguous()
        c.mul_(3)
        d = y.detach()
        d.mul_(1)
        (c.sum() + y.sum()).backward()
        got.append(x.grad.tolist())
    np.testing.assert_allclose(got[0], got[1])


def test_detach_shares_the_version_but_is_not_a_view():
    """torch's detach() is not _is_view(): writing a grad-requiring value into it records CopySlices on it
    (pytorch-beginner's backward.py: Variable(zeros) then item assignment), and in-place writes into it still
    bump the version that the original's saved tensors check"""
    got = []
    for L in (ct, torch):
        n = L.zeros(1, 2).detach()
        m = L.tensor([2.0, 3.0], requires_grad=True)
        n[0, 0] = m[0] ** 2
        n[0, 1] = m[1] ** 3
        n.sum().backward()
        a = L.ones(3, requires_grad=True)
        b = a.exp()
        d = b.detach()
        d.zero_()
        with pytest.raises(RuntimeError) as e:
            b.sum().backward()
        got.append((n._is_view(), n._base is None, n.requires_grad, type(n.grad_fn).__name__, m.grad.tolist(),
                     b._version, d._version, "modified by an inplace operation" in str(e.value)))
    assert got[0] == got[1]


def _err(fn):
    with pytest.raises(RuntimeError) as e:
        fn()
    return str(e.value)


def test_errors_match_torch():
    cases = [
        lambda L, x: x[0].mul_(2),
        lambda L, x: x.t().zero_(),
        lambda L, x: (x * 1).unbind()[1].mul_(2),
        lambda L, x: (x * 1).split(2, 1)[1].add_(1),
        lambda L, x: (x * 1).split([1, 3], 1)[0].add_(1),
        lambda L, x: (x * 1).chunk(2)[1].zero_(),
    ]
    for case in cases:
        texts = [_err(lambda: case(L, L.tensor(X, requires_grad=True))) for L in (ct, torch)]
        assert texts[0] == texts[1]


def test_allowed_cases_match_torch():
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        with L.no_grad():
            x[0].mul_(1)                    # no grad mode: allowed
        L.zeros(3).unbind()[1].mul_(2)      # nothing requires grad
        for t in x.tensor_split(2):         # tensor_split's outputs are ordinary views
            (t * 1)[0].mul_(2)
        y = (x * 1).tensor_split(2)[0]
        y.mul_(2)


def test_integer_view_inplace_untracked():
    y = ct.arange(6).view(2, 3)
    y[1].add_(1)
    assert y.tolist() == [[0, 1, 2], [4, 5, 6]] and y.grad_fn is None


def test_minimal_two_inplace_views_of_zeros():
    got = []
    for L in (ct, torch):
        f = L.tensor([0.5, -2.0], requires_grad=True)
        F = L.zeros(2, 2)
        F[0] += f
        F[1] -= f
        F.sum().backward()
        got.append(f.grad.tolist())
        f.grad = None
        F = L.zeros(2, 2)
        F[0] += f
        F[1].copy_(F[0])
        F.mul_(3)
        (F * F).sum().backward()
        got.append(f.grad.tolist())
    assert got[0] == got[2] == [0.0, 0.0]
    np.testing.assert_allclose(got[1], got[3], rtol=1e-6)


def _spring_simulation(L):
    """pytorch/examples' differentiable mass-spring step: per-spring forces
    added into rows of one force tensor, integrated over several steps"""
    pos = L.tensor([[0.0, 0.0], [1.0, 0.2], [2.1, -0.1], [3.0, 0.3]], dtype=L.float64)
    vel = L.zeros_like(pos)
    rest = L.tensor([1.0, 1.0, 1.0, 2.0], dtype=L.float64, requires_grad=True)
    k = L.tensor(5.0, dtype=L.float64, requires_grad=True)
    for _ in range(10):
        F = L.zeros_like(pos)
        for s, (i, j) in enumerate([(0, 1), (1, 2), (2, 3), (0, 2)]):
            d = pos[j] - pos[i]
            f = k * (d.norm() - rest[s]) * d / d.norm()
            F[i] += f
            F[j] -= f
        F[:, 1] -= 0.1
        vel = vel + 0.05 * F
        pos = pos + 0.05 * vel
    loss = ((pos[3] - L.tensor([3.5, 0.0], dtype=L.float64)) ** 2).sum()
    loss.backward()
    return [loss.item(), k.grad.item()] + rest.grad.tolist()


def test_spring_simulation_gradients_match_torch():
    np.testing.assert_allclose(_spring_simulation(ct), _spring_simulation(torch), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("name", sorted(VIEW_CHAINS))
def test_inplace_chains_through_views_double_backward(name):
    _check_double_backward(VIEW_CHAINS[name], rtol=1e-11, atol=1e-13)


def test_as_strided_double_backward_matches_torch():
    got = []
    for L in (ct, torch):
        x = L.tensor(X, requires_grad=True)
        y = x.as_strided((2, 3), (2, 1), 1)           # overlapping windows: positions alias
        gx, = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
        ggx, = L.autograd.grad((gx * gx.detach().cos()).sum(), x)
        got.append((gx.tolist(), ggx.tolist()))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
    x = ct.tensor(X, requires_grad=True)
    assert ct.autograd.gradgradcheck(lambda x: x.as_strided((2, 3), (2, 1), 1) ** 3, (x,))
    assert ct.autograd.gradgradcheck(lambda x: x.t().as_strided((3, 2), (1, 3)) ** 2, (x,))


def _backward_error(L, case):
    x = L.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        case(L, x).sum().backward()
    return str(e.value)


def _sigmoid_then_mul_(L, x):
    y = x.sigmoid()           # sigmoid saves its result
    y.mul_(2)
    return y


def _exp_then_view_inplace(L, x):
    y = x.exp()               # exp saves its result; a view of it changes it
    y[1].add_(1)
    return y


def _saved_view_then_other_view_inplace(L, x):
    y = x * 1
    v = y[0]
    z = v * v                 # mul saves v, a view sharing y's version
    y[2].mul_(2)
    return z


def _saved_view_then_copy_into_sibling(L, x):
    F = L.zeros(3, 4, dtype=x.dtype)
    F[0] += x[0]
    F[2].copy_(F[1] * x[1])   # mul saves the view F[1]; the copy into F[2] moves F's version
    return F


def test_invalid_inplace_still_raises_torchs_error():
    for case in (_sigmoid_then_mul_, _exp_then_view_inplace, _saved_view_then_other_view_inplace,
                 _saved_view_then_copy_into_sibling):
        texts = [_backward_error(L, case) for L in (ct, torch)]
        assert "modified by an inplace operation" in texts[0]
        assert texts[0] == texts[1]


# ---- split / chunk / split_with_sizes / unbind: one node holding every piece, as torch's
MULTI_VIEW_OPS = {
    "chunk": lambda x: x.chunk(3, -1),
    "chunk_uneven": lambda x: x.chunk(3, 0),
    "split": lambda x: x.split(2, 1),
    "split_sizes": lambda x: x.split([1, 3], 1),
    "split_with_sizes": lambda x: x.split_with_sizes([2, 1], 0),
    "unbind": lambda x: x.unbind(1),
    "unbind_neg": lambda x: x.unbind(-2),
    "functional_split": lambda x: x.split(10, 1),
}


def _x(L, shape=(3, 4)):
    return L.tensor(np.arange(float(np.prod(shape))).reshape(shape) / 7 - 0.5, dtype=L.float64, requires_grad=True)


def _node_desc(pieces):
    return [(type(p.grad_fn).__name__, p.output_nr, p._is_view(), [type(f).__name__ for f, _ in p.grad_fn.next_functions])
            for p in pieces]


@pytest.mark.parametrize("name", sorted(MULTI_VIEW_OPS))
def test_multi_view_ops_share_one_node_like_torch(name):
    f = MULTI_VIEW_OPS[name]
    got = []
    for L in (ct, torch):
        x = _x(L)
        pieces = f(x * 1)
        assert all(p.grad_fn is pieces[0].grad_fn for p in pieces)   # one node, whatever the number of pieces
        desc = _node_desc(pieces)
        # only some pieces used: the others' gradient is zeros, the input's is built once
        (pieces[0] * 2).sum().backward(retain_graph=True)
        g1 = x.grad.tolist()
        x.grad = None
        sum((p * (i + 1)) ** 2 for i, p in enumerate(pieces)).sum().backward()
        got.append((desc, g1, x.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", sorted(MULTI_VIEW_OPS))
def test_multi_view_ops_double_backward_and_gradcheck(name):
    f = MULTI_VIEW_OPS[name]
    got = []
    for L in (ct, torch):
        x = _x(L)
        s = sum((p ** 3 * (i + 1)).sum() for i, p in enumerate(f(x)))
        (g,) = L.autograd.grad(s, x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        got.append(np.round(gg.numpy(), 10).tolist())
    assert got[0] == got[1]
    x = _x(ct)
    assert ct.autograd.gradcheck(lambda t: f(t)[-1] * 3, (x,))
    assert ct.autograd.gradgradcheck(lambda t: [p * p for p in f(t)], (x,))


def test_multi_view_base_changed_in_place_like_torch():
    """a piece's history cannot be rebuilt once its base (or another piece) changed in place: torch's error on
    grad_fn and on use; nothing changed, or no grad needed, leaves them usable"""
    texts = []
    for L in (ct, torch):
        y = _x(L, (4, 2)) * 1
        a, b = y.split(2)
        y.mul_(2)
        texts.append(_err(lambda: a.grad_fn))
        texts.append(_err(lambda: b * 2))
        y = _x(L, (4, 2)) * 1
        a, b, c, d = y.unbind()
        with L.no_grad():
            a.add_(1)
        texts.append(_err(lambda: b.grad_fn))
        texts.append(_err(lambda: c.sum().backward()))
        z = L.zeros(4)
        p, q = z.split(2)
        p.add_(1)
        texts.append(z.tolist())
    assert texts[:5] == texts[5:]
    assert "Output 0 of Split is a view and its base or another view of its base has been modified inplace" in texts[0]


def test_multi_view_pieces_are_views_with_one_version():
    x = _x(ct, (4, 3))
    pieces = x.split([1, 3])
    assert all(p._base is x and p._is_view() and not p.is_leaf for p in pieces)
    assert ct.empty(0, 3, requires_grad=True).chunk(3)[2].grad_fn.name() == "SplitWithSizesBackward0"
    assert ct.empty(0, 3).unbind(0) == ()
    r = ct.empty(0, 3, requires_grad=True).unbind(1)
    assert [t.shape for t in r] == [(0,)] * 3 and r[0].grad_fn.name() == "UnbindBackward0"


def test_multi_view_forward_ad_and_vmap():
    fwAD = ct.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(ct.arange(6.0), ct.ones(6))
        assert fwAD.unpack_dual(d.split(3)[1] ** 2).tangent.tolist() == [6.0, 8.0, 10.0]
        assert fwAD.unpack_dual(d.unbind()[2] * 4).tangent.tolist() == 4.0
    assert ct.func.vmap(lambda t: t.chunk(2)[1].sum())(ct.arange(12.0).reshape(3, 4)).tolist() == [5.0, 13.0, 21.0]
    g = ct.func.grad(lambda t: (t.unbind(0)[1] ** 2).sum())(ct.arange(6.0).reshape(2, 3))
    assert g.tolist() == [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0]]
    assert ct.func.jacrev(lambda t: t.split([1, 2])[1] * 2)(ct.arange(3.0)).tolist() == [[0.0, 2.0, 0.0],
                                                                                         [0.0, 0.0, 2.0]]


def test_views_of_multi_view_pieces_keep_the_no_inplace_rule_like_torch():
    """a view of a split/unbind piece (select, slice, view) may not be modified in place either: torch's
    'Output 0 of Select is a view ... returns multiple views' error, and the base is left unchanged"""
    cases = [lambda y: y.split(2)[0][0].add_(1), lambda y: y.split(2)[0].view(-1).add_(1),
             lambda y: y.unbind(0)[1][:1].mul_(3), lambda y: y.chunk(2, 1)[1].t().zero_()]
    for case in cases:
        texts = []
        for L in (ct, torch):
            y = _x(L, (4, 2)) * 1
            texts.append((_err(lambda: case(y)), y.tolist()))
            with L.no_grad():   # no history to protect: allowed
                case(y)
        assert texts[0] == texts[1]
        assert "returns multiple views" in texts[0][0]


def test_detach_inplace_refuses_every_view_like_torch():
    """torch refuses detach_() on any view, one without history too (a split piece, a slice of a plain tensor),
    with its full message; an inference-mode slice is no view there"""
    cases = [lambda L: L.ones(2)[:1], lambda L: (L.ones(2, requires_grad=True) * 1)[:1],
             lambda L: L.ones(2, requires_grad=True)[:1], lambda L: L.ones(2).split(1)[0]]
    for case in cases:
        assert _err(lambda: case(ct).detach_()) == _err(lambda: case(torch).detach_())
    for L in (ct, torch):
        with L.inference_mode():
            assert L.ones(3)[:1].detach_().shape == (1,)
        w = L.ones(2, requires_grad=True) * 1
        assert w.detach_() is w and not w.requires_grad


def _unsafe_case(L, k):
    """case k of the unsafe splits: the pieces (or what they give) after in-place changes torch allows"""
    x = L.tensor(X, requires_grad=True)
    y = x * 2
    if k == 0:    # an in-place op on a piece
        p = L.unsafe_split(y, 2)
        p[0].mul_(3)
        out = p[0].sum() * 2 + (p[1] ** 2).sum()
    elif k == 1:  # a piece of the method form, along dim 1
        p = y.unsafe_chunk(2, 1)
        p[1].sub_(1)
        out = (p[1] * p[0]).sum()
    elif k == 2:  # the sizes form, one piece unused
        p = L.unsafe_split_with_sizes(y, [1, 2], 0)
        p[1].add_(1)
        out = p[1].pow(2).sum()
    else:         # the base changed in place after the split: the pieces' history stays valid
        p = y.unsafe_split(1, 0)
        y.add_(1)
        out = (p[0] * p[2]).sum()
    names = [q.grad_fn.name() for q in p]
    flags = [(q._base is None, q._is_view(), q._version) for q in p]
    g, = L.autograd.grad(out, x, create_graph=True)
    gg, = L.autograd.grad(g.sum(), x, allow_unused=True)
    return names, flags, y.detach(), g.detach(), gg


@pytest.mark.parametrize("k", range(4))
def test_unsafe_split_pieces_are_not_multi_output_views(k):
    """torch.unsafe_split/unsafe_chunk/unsafe_split_with_sizes: pieces on the input's memory that autograd
    does not count as views (no _base, version counters of their own), so in-place ops on them or on the
    input after are allowed, where split's raise; grad_fn names, values, gradients and double gradients"""
    nc, fc, yc, gc, ggc = _unsafe_case(ct, k)
    nt, ft, yt, gt, ggt = _unsafe_case(torch, k)
    assert nc == nt and fc == ft
    oracle.same(yc, yt, 1e-12)
    oracle.same(gc, gt, 1e-12)
    assert (ggc is None) == (ggt is None)
    if ggt is not None:
        oracle.same(ggc, ggt, 1e-12)


def test_unsafe_split_without_grad_and_arg_errors():
    """no grad: still pieces of the input's memory, not views; torch's parser errors for the size arguments
    (the method counts its arguments after self) and split's own errors"""
    for L in (ct, torch):
        y = L.arange(6.0)
        p = L.unsafe_split(y, 4)
        p[1].mul_(10)
        assert y.tolist() == [0, 1, 2, 3, 40, 50] and p[1]._base is None and not p[1]._is_view()
    for f in (lambda L: L.arange(6.0).unsafe_split([2, 4]), lambda L: L.unsafe_split(L.arange(6.0), 2.5),
              lambda L: L.unsafe_chunk(L.arange(6.0), [2]), lambda L: L.arange(6.0).unsafe_chunk(True),
              lambda L: L.unsafe_split(L.arange(6.0), 0), lambda L: L.unsafe_chunk(L.arange(6.0), 0),
              lambda L: L.unsafe_split_with_sizes(L.arange(6.0), [1, 2])):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))


def _nograd_view_case(L, k):
    """case k of a view made in no_grad (or inference) mode and what follows it outside"""
    x = L.tensor(X, requires_grad=True)
    y = x * 2
    ctx = L.inference_mode if k == 9 else L.no_grad
    with ctx():
        v = y[:2] if k != 6 else y.unbind(0)[0]
        if k == 3:
            v.mul_(2)       # inside the block: allowed; its history is refused later
    if k in (0, 6, 9):      # an in-place op on it where autograd records
        v.mul_(2)
    elif k == 1:            # the base changed in place: reading the view's history is refused
        y.add_(1)
        return v * 2
    elif k == 2:            # a view of it made with grad on
        v[:1].mul_(2)
    elif k == 3:
        return v * 2
    elif k == 4:            # the base needs no grad but the other operand does
        z = L.tensor(X)
        with L.no_grad():
            u = z[:2]
        u.mul_(L.tensor(X[:2], requires_grad=True))
    elif k == 5:            # used out of place: it requires grad, a leaf with no accumulator
        out = (v * 3).sum()
        info = (v.requires_grad, v.is_leaf, v.grad_fn, out.requires_grad,
                tuple(f[0] for f in out.grad_fn.next_functions[0][0].next_functions))
        out.backward()
        return info, x.grad, v.grad
    elif k == 7:            # an in-place op inside and nothing after that reads its history
        with L.no_grad():
            v.mul_(2)
        return y.detach(), v.requires_grad
    elif k == 8:            # a view made with grad on, changed in no_grad: allowed, as before
        w = y[1:]
        with L.no_grad():
            w.mul_(2)
        return y.detach(), w.grad_fn.name()
    return "no error"


@pytest.mark.parametrize("k", range(10))
def test_view_made_in_no_grad_mode_like_torch(k):
    """torch's creation-mode rule for views: one made in no_grad (inference) mode of a tensor that requires
    grad, modified in place where autograd records, or read for its history after its base changed in
    place, is torch's RuntimeError (texts compared, views of such views and multi-output views included);
    used out of place it requires grad yet passes no gradient; the inverse case stays allowed"""
    try:
        want = _nograd_view_case(torch, k)
    except RuntimeError:
        oracle.raises_like(lambda: _nograd_view_case(ct, k), lambda: _nograd_view_case(torch, k))
        return
    got = _nograd_view_case(ct, k)
    if k == 5:
        assert got[0] == want[0] and got[1:] == (None, None) and want[1:] == (None, None)
    elif k in (7, 8):
        oracle.same(got[0], want[0], 1e-12)
        assert got[1] == want[1]
    else:
        assert got == want
