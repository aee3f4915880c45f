"""layer_norm's fused row kernels (forward and backward, threaded over rows) and GELU against torch."""
import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()
rs = np.random.RandomState(0)


def close(a, b, tol):
    assert a.dtype == getattr(ct, str(b.dtype).replace("torch.", "")) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dt,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape,norm", [((4, 7), (7,)), ((300, 256), (256,)), ((3, 50, 6, 40), (6, 40)),
                                        ((2, 5), (2, 5))])
@pytest.mark.parametrize("affine", [(True, True), (True, False), (False, False)])
def test_layer_norm_matches_torch(dt, tol, shape, norm, affine):
    x = (rs.randn(*shape) * 3 + 1).astype(dt)
    w, b = rs.randn(*norm).astype(dt), rs.randn(*norm).astype(dt)
    cx, tx = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cw, tw = (ct.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)) if affine[0] else (None, None)
    cb, tb = (ct.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)) if affine[1] else (None, None)
    y = ct.nn.functional.layer_norm(cx, norm, cw, cb, 1e-5)
    ty = torch.nn.functional.layer_norm(tx, norm, tw, tb, 1e-5)
    close(y, ty, tol)
    g = rs.randn(*shape).astype(dt)
    y.backward(ct.tensor(g))
    ty.backward(torch.tensor(g))
    close(cx.grad, tx.grad, 10 * tol)
    for c, t in ((cw, tw), (cb, tb)):
        if c is not None:
            close(c.grad, t.grad, 100 * tol)


@pytest.mark.parametrize("offset,scale,m", [(0, 1, 1061), (1e4, 1, 768), (100, 1e-2, 4099), (-2, 5, 37)])
def test_layer_norm_float32_rows_as_accurate_as_torch(offset, scale, m):
    # float32 rows sum in float vector lanes emptied into double every 1024
    # elements, and the backward's dw/db terms in float rows emptied into
    # double every 16 rows: against a float64 reference, no worse than
    # torch's float32 (37 rows: two flushes and a partial one)
    x = (rs.randn(37, m) * scale + offset).astype(np.float32)
    w, b, g = rs.randn(m).astype(np.float32), rs.randn(m).astype(np.float32), rs.randn(37, m).astype(np.float32)

    def run(lib, dt):
        ts = [lib.tensor(a, dtype=dt, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.layer_norm(ts[0], (m,), ts[1], ts[2])
        y.backward(lib.tensor(g, dtype=dt))
        return [y.detach().double().numpy()] + [t.grad.double().numpy() for t in ts]

    ref, mine, theirs = run(torch, torch.float64), run(ct, ct.float32), run(torch, torch.float32)
    for r, a, t in zip(ref, mine, theirs):
        assert np.abs(a - r).max() <= 1.5 * np.abs(t - r).max() + 1e-6 * np.abs(r).max()


def test_layer_norm_float32_backward_same_bits_at_one_and_two_threads():
    # past the threading threshold the rows are shared out; dw/db gather each thread's partial
    # sums, which must not depend on how the rows were split (row counts that are not a multiple
    # of the float kernel's 16-row blocks, or of the thread count). float64 sums its terms in
    # double per thread, so its last bits follow the split
    dt = np.float32
    r = np.random.RandomState(3)
    for R, M in ((100, 768), (37, 1061), (1001, 64), (333, 257)):
        x, g = r.randn(R, M).astype(dt), r.randn(R, M).astype(dt)
        w, b = r.randn(M).astype(dt), r.randn(M).astype(dt)
        runs = []
        old = ct.get_num_threads()
        try:
            for nt in (1, 2):
                ct.set_num_threads(nt)
                ts = [ct.tensor(a, requires_grad=True) for a in (x, w, b)]
                ct.nn.functional.layer_norm(ts[0], (M,), ts[1], ts[2]).backward(ct.tensor(g))
                runs.append([t.grad.numpy() for t in ts])
        finally:
            ct.set_num_threads(old)
        for one, two in zip(*runs):
            np.testing.assert_array_equal(one, two, err_msg="R=%d M=%d" % (R, M))


def test_layer_norm_gradcheck_and_weight_dtype():
    x = ct.tensor(rs.randn(3, 4, 5), requires_grad=True)
    w, b = ct.tensor(rs.randn(5), requires_grad=True), ct.tensor(rs.randn(5), requires_grad=True)
    f = lambda a, c, d: ct.nn.functional.layer_norm(a, (5,), c, d)   # noqa: E731
    assert ct.autograd.gradcheck(f, (x, w, b))
    assert ct.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dt,tol", [(np.float32, 1e-6), (np.float64, 1e-12)])
def test_gelu_matches_torch(approximate, dt, tol):
    x = (rs.randn(300, 257) * 3).astype(dt)
    cx, tx = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y = ct.nn.functional.gelu(cx, approximate=approximate)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    close(y, ty, tol)
    g = rs.randn(*x.shape).astype(dt)
    y.backward(ct.tensor(g))
    ty.backward(torch.tensor(g))
    close(cx.grad, tx.grad, 10 * tol)


def test_batchnorm_state_dict_version_fills_num_batches_tracked():
    # BatchNorm's state dicts are version 2; older ones (or unversioned) may lack num_batches_tracked and load,
    # the module's counter standing in, while a version-2 one without it is missing a key
    import collections
    for lib in (ct, torch):
        bn = lib.nn.BatchNorm2d(3)
        sd = bn.state_dict()
        assert sd._metadata[""]["version"] == 2
        old = collections.OrderedDict((k, v) for k, v in sd.items() if k != "num_batches_tracked")
        lib.nn.BatchNorm2d(3).load_state_dict(old)  # no metadata: as version None
        old._metadata = collections.OrderedDict([("", {"version": 1})])
        fresh = lib.nn.BatchNorm2d(3)
        fresh.num_batches_tracked.fill_(5)
        fresh.load_state_dict(old)
        assert int(fresh.num_batches_tracked) == 5
        old._metadata = collections.OrderedDict([("", {"version": 2})])
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
            lib.nn.BatchNorm2d(3).load_state_dict(old)
        res = lib.nn.BatchNorm2d(3).load_state_dict(old, strict=False)
        assert list(res.missing_keys) == ["num_batches_tracked"]


def test_group_norm_indivisible_channels_message_names_both():
    """DETR's mask head with a small hidden_dim: torch's ValueError says which counts do not divide"""
    for L in (ct, torch):
        with pytest.raises(ValueError, match=r"^num_channels \(4\) must be divisible by num_groups \(8\)$"):
            L.nn.GroupNorm(8, 4)


def test_layer_norm_shape_error_names_the_input_size_as_torch():
    for shape, ns in (((1, 2, 3, 4), [5]), ((2, 3), [2, 3, 4]), ((4, 5, 6), [4, 6])):
        msgs = []
        for L in (ct, torch):
            with pytest.raises(RuntimeError) as e:
                L.nn.functional.layer_norm(L.zeros(shape), ns)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
        assert "[*, %s]," % ", ".join(map(str, ns)) in msgs[0]


def test_mixed_parameter_dtypes_as_torch():
    """batch_norm and layer_norm take parameters of the input's dtype, or float32 ones for a half/bfloat16
    input; other pairings raise torch's 'mixed dtype (CPU)' errors (a float64 batch through a float32 model
    used to run in float64)"""
    names = ["float32", "float64", "float16", "bfloat16"]
    calls = [lambda L, x, w: L.nn.functional.batch_norm(x, L.zeros(3, dtype=w), L.ones(3, dtype=w),
                                                        L.ones(3, dtype=w), L.zeros(3, dtype=w), True),
             lambda L, x, w: L.nn.functional.batch_norm(x, L.zeros(3, dtype=w), L.ones(3, dtype=w)),
             lambda L, x, w: L.nn.functional.batch_norm(x, None, None, L.ones(3, dtype=w), None, True),
             lambda L, x, w: L.nn.functional.layer_norm(x, (4,), L.ones(4, dtype=w), L.zeros(4, dtype=w)),
             lambda L, x, w: L.nn.functional.layer_norm(x, (4,), None, L.zeros(4, dtype=w))]
    data = rs.randn(2, 3, 4, 4)
    for call in calls:
        for a in names:
            for w in names:
                got = []
                for L in (ct, torch):
                    try:
                        got.append(str(call(L, L.tensor(data).to(getattr(L, a)), getattr(L, w)).dtype))
                    except RuntimeError as e:
                        got.append(str(e))
                assert got[0].replace("cthtorch", "torch") == got[1], (a, w)
