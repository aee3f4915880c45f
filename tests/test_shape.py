"""The shape family in C (src/ATen/ATShape.c, declarations/shape.yaml):
cat/concat/concatenate/stack (+ the hstack family over cat), flip/fliplr/
flipud/roll/rot90, repeat_interleave, F.unfold/F.fold and F.pad's reflect/replicate/circular against PyTorch:
values, dtypes, promotion, non-contiguous inputs, out=, errors, gradients."""
import numpy as np
import pytest

import cthtorch as ct
import cthtorch.nn.functional as CF
import oracle

torch = oracle.require_torch()
TF = torch.nn.functional

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _pair(shape, dtype, seed=0):
    rs = np.random.RandomState(seed)
    if dtype == "bool":
        a = rs.rand(*shape) > 0.5
    else:
        a = rs.randint(0, 9, size=shape).astype(np.float64 if dtype in ("float16", "bfloat16") else dtype)
    t, c = torch.from_numpy(np.ascontiguousarray(a)), ct.from_numpy(np.ascontiguousarray(a))
    return t.to(getattr(torch, dtype)), c.to(getattr(ct, dtype))


def _same(r, e):
    assert str(r.dtype) == str(e.dtype)
    assert tuple(r.shape) == tuple(e.shape)
    np.testing.assert_array_equal(r.float().numpy() if r.dtype in (ct.bfloat16,) else r.numpy(),
                                  e.float().numpy() if e.dtype in (torch.bfloat16,) else e.numpy())


# ---------------------------------------------------------------- cat / stack
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_values(dtype, dim):
    (ta, ca), (tb, cb) = _pair((3, 4, 5), dtype), _pair((3, 4, 5), dtype, 1)
    for f in ("cat", "concat", "concatenate", "stack"):
        _same(getattr(ct, f)([ca, cb, ca], dim), getattr(torch, f)([ta, tb, ta], dim))
    # strided inputs
    _same(ct.cat([ca.transpose(0, 2).contiguous().transpose(0, 2), cb], dim),
          torch.cat([ta.transpose(0, 2).contiguous().transpose(0, 2), tb], dim))


def test_cat_promotion_and_legacy_empty():
    pairs = [_pair((2, 3), d, i) for i, d in enumerate(["int8", "bool", "float16", "uint8"])]
    ts, cs = [p[0] for p in pairs], [p[1] for p in pairs]
    _same(ct.cat(cs), torch.cat(ts))
    _same(ct.cat(cs[:2] + cs[3:], 1), torch.cat(ts[:2] + ts[3:], 1))
    _same(ct.cat([ct.ones(0), cs[0].double(), ct.ones(0, dtype=ct.int64)], 1),
          torch.cat([torch.ones(0), ts[0].double(), torch.ones(0, dtype=torch.int64)], 1))
    _same(ct.cat([ct.ones(0), ct.ones(0)]), torch.cat([torch.ones(0), torch.ones(0)]))
    _same(ct.cat((ct.ones(2, 0), ct.ones(2, 3)), 1), torch.cat((torch.ones(2, 0), torch.ones(2, 3)), 1))


def test_cat_out_and_big():
    x = np.random.RandomState(0).rand(300, 700).astype(np.float32)
    t, c = torch.from_numpy(x), ct.from_numpy(x)
    for dim in (0, 1):
        _same(ct.cat([c, c * 2, c[:, :5].contiguous() if dim else c], dim),
              torch.cat([t, t * 2, t[:, :5].contiguous() if dim else t], dim))
    o = ct.empty(1, dtype=ct.float64)
    r = ct.cat([c, c], 1, out=o)
    assert r is o
    _same(o, torch.cat([t, t], 1, out=torch.empty(1, dtype=torch.float64)))
    _same(ct.stack([c, c], 1, out=ct.empty(0)), torch.stack([t, t], 1, out=torch.empty(0)))


@pytest.mark.parametrize("threads", [1, 2])
def test_cat_large_outputs_streamed(threads):
    """outputs of 4 MB or more are written with streaming stores (unaligned heads and tails by memcpy):
    odd row lengths and byte sizes put the pieces at every alignment"""
    rs = np.random.RandomState(1)
    saved = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for shape, dtype in (((300, 5001), np.float32), ((97, 20011), np.uint8), ((1031, 523), np.float64)):
            xs = [rs.randint(0, 250, size=(shape[0], shape[1] + i)).astype(dtype) for i in range(3)]
            got = ct.cat([ct.from_numpy(x) for x in xs], 1).numpy()
            assert np.array_equal(got, np.concatenate(xs, 1))
            ys = [x[:, :shape[1]] for x in xs]
            got = ct.cat([ct.from_numpy(np.ascontiguousarray(y)) for y in ys], 0).numpy()
            assert np.array_equal(got, np.concatenate(ys, 0))
            o = ct.empty(0, dtype=ct.from_numpy(xs[0]).dtype)
            ct.cat([ct.from_numpy(x) for x in xs], 1, out=o)
            assert np.array_equal(o.numpy(), np.concatenate(xs, 1))
    finally:
        ct.set_num_threads(saved)


def test_hstack_family():
    (ta, ca), (tb, cb) = _pair((2, 3), "float32"), _pair((3,), "float32", 1)
    for f in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
        args = ([ta, ta], [ca, ca]) if f == "hstack" else ([ta, tb.reshape(1, 3).expand(2, 3)], [ca, cb.reshape(1, 3).expand(2, 3)])
        _same(getattr(ct, f)(args[1]), getattr(torch, f)(args[0]))
    _same(ct.vstack([ca, cb]), torch.vstack([ta, tb]))
    _same(ct.hstack([cb, cb]), torch.hstack([tb, tb]))


@pytest.mark.parametrize("case", [
    lambda m: m.cat([]),
    lambda m: m.cat([m.ones(2, 3), m.ones(3, 3)], 1),
    lambda m: m.cat([m.ones(2, 3), m.ones(3)], 1),
    lambda m: m.cat([m.ones(2, 3), m.ones(())], 1),
    lambda m: m.cat([m.ones(2, 3)], 3),
    lambda m: m.cat([m.ones(2)], out=m.empty(2, dtype=m.long)),
    lambda m: m.cat([m.ones(2), 1]),
    lambda m: m.stack([m.ones(2, 3), m.ones(3)], 1),
    lambda m: m.stack([]),
    lambda m: m.stack([m.ones(2)], 2),
    lambda m: m.flip(m.ones(2, 3), [0, 0]),
    lambda m: m.flip(m.ones(2, 3), [2]),
    lambda m: m.fliplr(m.ones(2)),
    lambda m: m.flipud(m.ones(())),
    lambda m: m.roll(m.ones(2, 3), [1, 2], [0]),
    lambda m: m.roll(m.ones(2, 3), [1, 2]),
    lambda m: m.roll(m.ones(2, 3), 1, 2),
    lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([1, 2, 3]), 0),
    lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([-1, 2]), 0),
    lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([1., 2]), 0),
    lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([[1, 2]]), 0),
    lambda m: m.repeat_interleave(m.ones(2, 3), -1, 0),
    lambda m: m.repeat_interleave(m.ones(2, 3), 2, 2),
])
def test_errors(case):
    oracle.raises_like(lambda: case(ct), lambda: case(torch))


def test_cat_sparse_still_works():
    i = ct.tensor([[0, 1], [1, 0]])
    s = ct.sparse_coo_tensor(i, ct.tensor([1., 2.]), (2, 2))
    r = ct.cat([s, s], 0)
    assert r.is_sparse and tuple(r.shape) == (4, 2)
    np.testing.assert_array_equal(r.to_dense().numpy(), np.concatenate([s.to_dense().numpy()] * 2))


# ---------------------------------------------------------------- flip / roll / rot90
@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_roll_rot90(dtype):
    t, c = _pair((3, 4, 5), dtype)
    for dims in ([0], [1], [2], [0, 2], [-1, 1, 0], []):
        _same(ct.flip(c, dims), torch.flip(t, dims))
        _same(c.transpose(0, 2).flip(dims), t.transpose(0, 2).flip(dims))
    _same(c.flip(0, 1), t.flip(0, 1))
    _same(ct.fliplr(c), torch.fliplr(t))
    _same(c.flipud(), t.flipud())
    for shifts, dims in ((1, None), (-7, None), (2, 1), ((1, -2), (0, 2)), ((3, 3), (1, 1)), (0, 0), (5, -1)):
        _same(ct.roll(c, shifts, dims), torch.roll(t, shifts, dims))
        _same(c[:, ::2].roll(shifts, dims), t[:, ::2].roll(shifts, dims))
    _same(c.roll(shifts=2, dims=0), t.roll(shifts=2, dims=0))
    for k in (-1, 0, 1, 2, 3, 6):
        _same(ct.rot90(c, k, [0, 2]), torch.rot90(t, k, [0, 2]))
    _same(ct.flip(ct.ones(0, 3), [0]), torch.flip(torch.ones(0, 3), [0]))
    _same(ct.flip(ct.tensor(2.), []), torch.flip(torch.tensor(2.), []))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
def test_flip_big_blocks(dtype):
    """Outputs past the parallel threshold are cut into per-thread blocks anywhere,
    inside a row too: one long row, odd sizes, short rows, strided sources."""
    rs = np.random.RandomState(5)

    def pair(shape):
        a = rs.randint(0, 250, size=shape).astype(dtype)
        return torch.from_numpy(a), ct.from_numpy(a)
    t, c = pair((300007,))
    _same(c.flip(0), t.flip(0))
    _same(c[::3].flip(0), t[::3].flip(0))
    t, c = pair((4099, 17))
    for dims in ([0], [1], [0, 1]):
        _same(c.flip(dims), t.flip(dims))
        _same(c.t().flip(dims), t.t().flip(dims))
    t, c = pair((3, 70001))
    _same(c.flip(1), t.flip(1))
    _same(c[:, 1::2].flip(0, 1), t[:, 1::2].flip(0, 1))


def test_flip_big():
    x = np.random.RandomState(0).rand(64, 1000).astype(np.float32)
    for dims in ([0], [1], [0, 1]):
        _same(ct.flip(ct.from_numpy(x), dims), torch.flip(torch.from_numpy(x), dims))


# ---------------------------------------------------------------- repeat_interleave
@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_interleave(dtype):
    t, c = _pair((3, 4), dtype)
    _same(ct.repeat_interleave(c, 2), torch.repeat_interleave(t, 2))
    _same(c.repeat_interleave(3, 1), t.repeat_interleave(3, 1))
    _same(c.repeat_interleave(3, dim=0, output_size=9), t.repeat_interleave(3, dim=0, output_size=9))
    for rt in (torch.int64, torch.int32):
        rc = getattr(ct, str(rt).split(".")[1])
        _same(c.repeat_interleave(ct.tensor([1, 0, 2], dtype=rc), 0), t.repeat_interleave(torch.tensor([1, 0, 2], dtype=rt), 0))
        _same(c.T.repeat_interleave(ct.tensor([2], dtype=rc), dim=-1), t.T.repeat_interleave(torch.tensor([2], dtype=rt), dim=-1))
        _same(ct.repeat_interleave(c, ct.tensor(2, dtype=rc)), torch.repeat_interleave(t, torch.tensor(2, dtype=rt)))
        _same(ct.repeat_interleave(ct.tensor([2, 0, 3], dtype=rc)), torch.repeat_interleave(torch.tensor([2, 0, 3], dtype=rt)))
    _same(ct.repeat_interleave(ct.tensor(5.), 3), torch.repeat_interleave(torch.tensor(5.), 3))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int16", "uint8", "bool"])
def test_repeat_interleave_last_dim_runs(dtype, threads):
    """a scalar count of 2..4 over the last dim takes the whole-block copy (vector
    permutes for 4-byte elements): blocks of 8 and their tails, big enough to split
    across threads, against torch"""
    old = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for shape in [(3, 13), (1, 8), (5, 1), (256, 1027), (0, 4)]:
            t, c = _pair(shape, dtype, seed=shape[0])
            for r in (1, 2, 3, 4, 5):
                _same(c.repeat_interleave(r, 1), t.repeat_interleave(r, 1))
                _same(c.repeat_interleave(r, -1), t.repeat_interleave(r, -1))
            _same(ct.repeat_interleave(c, 3), torch.repeat_interleave(t, 3))
            _same(c.repeat_interleave(ct.tensor([3]), 1), t.repeat_interleave(torch.tensor([3]), 1))
    finally:
        ct.set_num_threads(old)


# ---------------------------------------------------------------- gradients
def _d(*shape, seed=0):
    return ct.from_numpy(np.random.RandomState(seed).rand(*shape)).requires_grad_()


@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: ct.cat([a, b * 2, a], 1), [(2, 3), (2, 2)]),
    (lambda a, b: ct.cat([ct.ones(0, dtype=ct.float64), a, b], 0), [(2, 3), (1, 3)]),
    (lambda a, b: ct.concat((a, b), -1), [(2, 3), (2, 1)]),
    (lambda a, b: ct.stack([a, b], 1), [(2, 3), (2, 3)]),
    (lambda a, b: ct.hstack([a, b]), [(2, 3), (2, 1)]),
    (lambda a: ct.flip(a, [0, 1]), [(3, 4)]),
    (lambda a: a.fliplr(), [(3, 4)]),
    (lambda a: ct.roll(a, (1, -2), (0, 1)), [(3, 4)]),
    (lambda a: ct.roll(a, 5), [(3, 4)]),
    (lambda a: ct.rot90(a, 1), [(3, 4)]),
    (lambda a: a.repeat_interleave(2), [(3, 4)]),
    (lambda a: a.repeat_interleave(3, 1), [(3, 4)]),
    (lambda a: a.repeat_interleave(ct.tensor([2, 0, 1]), 0), [(3, 4)]),
    (lambda a: a.repeat_interleave(ct.tensor([2]), 1), [(3, 4)]),
])
def test_gradcheck(fn, shapes):
    args = [_d(*s, seed=i) for i, s in enumerate(shapes)]
    assert ct.autograd.gradcheck(fn, args)
    assert ct.autograd.gradgradcheck(fn, args)


def test_cat_grad_dtypes_and_names():
    a = ct.ones(2, 3, requires_grad=True)
    b = ct.ones(1, 3, dtype=ct.float64, requires_grad=True)
    r = ct.cat([a, b])
    assert r.dtype == ct.float64 and type(r.grad_fn).__name__ == "CatBackward0"
    r.sum().backward()
    assert a.grad.dtype == ct.float32 and tuple(a.grad.shape) == (2, 3)
    assert b.grad.dtype == ct.float64 and tuple(b.grad.shape) == (1, 3)
    assert type(ct.stack([a, a]).grad_fn).__name__ == "StackBackward0"
    assert type(ct.flip(a, [0]).grad_fn).__name__ == "FlipBackward0"
    assert type(ct.roll(a, 1).grad_fn).__name__ == "RollBackward0"
    for f in ("concat", "concatenate"):
        assert type(getattr(ct, f)([a, a]).grad_fn).__name__ == "CatBackward0"
    assert type(a.fliplr().grad_fn).__name__ == type(a.flipud().grad_fn).__name__ == "FlipBackward0"


# ---------------------------------------------------------------- F.unfold / F.fold
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "bool"])
@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2, padding=1),
                                dict(kernel_size=2, dilation=(2, 1), padding=(0, 2), stride=(1, 3))])
def test_unfold_fold(dtype, kw):
    t, c = _pair((2, 3, 7, 8), dtype)
    u_t, u_c = TF.unfold(t, **kw), CF.unfold(c, **kw)
    _same(u_c, u_t)
    _same(CF.unfold(c[0], **kw), TF.unfold(t[0], **kw))
    _same(CF.unfold(c.transpose(2, 3), **kw), TF.unfold(t.transpose(2, 3), **kw))
    _same(CF.fold(u_c, (7, 8), **kw), TF.fold(u_t, (7, 8), **kw))
    _same(CF.fold(u_c[1], (7, 8), **kw), TF.fold(u_t[1], (7, 8), **kw))
    _same(ct.nn.Fold((7, 8), **kw)(u_c), torch.nn.Fold((7, 8), **kw)(u_t))
    _same(ct.nn.Unfold(**kw)(c), torch.nn.Unfold(**kw)(t))


@pytest.mark.parametrize("case", [
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3), 4),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3), 0),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3), 2, padding=-1),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3), 2, stride=0),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3), 2, dilation=0),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3, dtype=m.int64), 2),
    lambda F, m: F.unfold(m.ones(1, 2, 3, 3, 1), 2),
    lambda F, m: F.fold(m.ones(1, 8, 3), (3, 3), 2),
    lambda F, m: F.fold(m.ones(1, 7, 4), (3, 3), 2),
    lambda F, m: F.fold(m.ones(1, 8, 4, 1), (3, 3), 2),
    lambda F, m: F.fold(m.ones(1, 8, 4), (1, 1), 2),
    lambda F, m: F.fold(m.ones(1, 8, 4, dtype=m.int32), (3, 3), 2),
])
def test_unfold_fold_errors(case):
    oracle.raises_like(lambda: case(CF, ct), lambda: case(TF, torch))


def test_unfold_fold_grad():
    x = _d(2, 2, 5, 6)
    f = lambda x: CF.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    assert ct.autograd.gradcheck(f, [x]) and ct.autograd.gradgradcheck(f, [x])
    u = _d(2, 8, 8)
    g = lambda u: CF.fold(u, (4, 5), 2, stride=(2, 1))
    assert ct.autograd.gradcheck(g, [u]) and ct.autograd.gradgradcheck(g, [u])
    assert type(f(x).grad_fn).__name__ == "Im2ColBackward0"


@pytest.mark.parametrize("dtype", ["float64", "float16", "uint8", "int32"])
def test_stack_many_short_rows(dtype):
    # rows of one element per input: the typed row-parallel copy of cat
    (ta, ca), (tb, cb) = _pair((300, 400), dtype), _pair((300, 400), dtype, 1)
    _same(ct.stack([ca, cb, ca], 2), torch.stack([ta, tb, ta], 2))
    _same(ct.cat([ca, cb[:, :3]], 1), torch.cat([ta, tb[:, :3]], 1))
    _same(ct.flip(ca, [1]), torch.flip(ta, [1]))
    _same(ca.repeat_interleave(2, 1), ta.repeat_interleave(2, 1))


def test_broadcast_tensors_and_matmul_batch_mismatch():
    # broadcast_tensors and matmul's batch dimensions share one broadcast helper and torch's error text
    oracle.raises_like(lambda: ct.broadcast_tensors(ct.ones(2, 1), ct.ones(3, 4)),
                       lambda: torch.broadcast_tensors(torch.ones(2, 1), torch.ones(3, 4)))
    oracle.raises_like(lambda: ct.matmul(ct.ones(2, 3, 4), ct.ones(3, 4, 2)),
                       lambda: torch.matmul(torch.ones(2, 3, 4), torch.ones(3, 4, 2)))
    for shapes in [((2, 1), (0,)), ((1, 3), (4, 1), ()), ((5,), (2, 1, 1))]:
        got = ct.broadcast_tensors(*[ct.ones(s) for s in shapes])
        want = torch.broadcast_tensors(*[torch.ones(s) for s in shapes])
        assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]


# ---------------------------------------------------------------- F.pad's reflect / replicate / circular
PAD_MODES = ["reflect", "replicate", "circular"]
PAD_CASES = [((5,), (2, 1)), ((3, 5), (2, 4)), ((2, 3, 5), (-1, 3)), ((2, 3, 5), (0, 0)), ((3, 4, 5), (1, -2, 3, 0)),
             ((2, 3, 4, 5), (3, 2, 1, 1)), ((2, 3, 4, 5), (-3, -2, 1, 1)), ((2, 4, 5, 6), (1, 2, 0, 3, 2, 1)),
             ((2, 3, 4, 5, 6), (2, -1, 1, 3, -1, 2)), ((0, 3, 4, 5), (1, 1, 1, 1)), ((2, 0, 4, 5), (1, 1, 1, 1))]


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("shape, pad", PAD_CASES)
def test_pad_modes_values_grads_and_errors(mode, shape, pad):
    rs = np.random.RandomState(3)
    x = rs.randn(*shape)
    xc, xt = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    try:
        b = TF.pad(xt, pad, mode=mode)
    except (RuntimeError, NotImplementedError):
        oracle.raises_like(lambda: CF.pad(xc, pad, mode=mode), lambda: TF.pad(xt, pad, mode=mode))
        return
    a = CF.pad(xc, pad, mode=mode)
    _same(a.detach(), b.detach())
    if mode != "circular":   # torch's circular is a CopySlices of copies
        assert a.grad_fn.name() == b.grad_fn.name()
    w = rs.randn(*b.shape)
    a.backward(ct.tensor(w))
    b.backward(torch.tensor(w))
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_modes_dtypes_and_non_contiguous(mode, dtype):
    t, c = _pair((2, 5, 4, 6), dtype)
    t, c = t.transpose(1, 3), c.transpose(1, 3)   # (2, 6, 4, 5), strided
    for pad in ((2, 1), (1, 2, 3, 0), (1, 1, 2, 3, 1, 1)):
        if pad and len(pad) == 6:
            t, c = t[None], c[None]
        try:
            e = TF.pad(t, pad, mode=mode)
        except NotImplementedError:   # torch's reflect/replicate take no bool
            oracle.raises_like(lambda: CF.pad(c, pad, mode=mode), lambda: TF.pad(t, pad, mode=mode))
            continue
        _same(CF.pad(c, pad, mode=mode), e)
    x = np.random.RandomState(1).randn(2, 3, 5)
    for cd, td in ((ct.complex64, torch.complex64), (ct.float16, torch.float16)):
        xc, xt = ct.tensor(x).to(cd).requires_grad_(), torch.tensor(x).to(td).requires_grad_()
        a, b = CF.pad(xc, (3, 2), mode=mode), TF.pad(xt, (3, 2), mode=mode)
        np.testing.assert_allclose(a.detach().to(ct.complex128).numpy(), b.detach().to(torch.complex128).numpy())
        a.abs().sum().backward()
        b.abs().sum().backward()
        assert str(xc.grad.dtype) == str(xt.grad.dtype)
        np.testing.assert_allclose(xc.grad.to(ct.complex128).numpy(), xt.grad.to(torch.complex128).numpy(),
                                   rtol=2e-3, atol=2e-3)


def _pad_errors(lib):
    F = lib.nn.functional
    x = lib.zeros(2, 3, 4)
    return [lambda: F.pad(x, (1, 1, 1), mode="reflect"), lambda: F.pad(x[0, 0], (1, 1), mode="replicate"),
            lambda: F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"), lambda: F.pad(x, (1, 1), mode="foo"),
            lambda: F.pad(x, (1, 1), mode="reflect", value=2.0), lambda: F.pad(x, (4, 1), mode="reflect"),
            lambda: F.pad(x, (5, 1), mode="circular"), lambda: F.pad(x, (-2, -2), mode="replicate"),
            lambda: F.pad(x, (-3, -2), mode="circular"), lambda: F.pad(x.bool(), (1, 1), mode="reflect"),
            lambda: lib._C._nn.reflection_pad2d(x, (1, 1)), lambda: F.pad(lib.zeros(2, 3, 0), (1, 1), mode="reflect")]


@pytest.mark.parametrize("case", range(12))
def test_pad_modes_errors(case):
    oracle.raises_like(_pad_errors(ct)[case], _pad_errors(torch)[case])


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_modes_gradcheck_and_double_backward(mode):
    x = ct.tensor(np.random.RandomState(2).randn(1, 2, 3, 4), requires_grad=True)
    fn = lambda a: CF.pad(a, (2, 1, 1, 2), mode=mode)   # noqa: E731
    assert ct.autograd.gradcheck(fn, (x,))
    assert ct.autograd.gradgradcheck(fn, (x,))


def test_pad_backward_ops_check_their_arguments():
    g, x = ct.zeros(2, 3, 6), ct.zeros(2, 3, 4)
    for op in (ct._C._nn.reflection_pad1d_backward, ct._C._nn.replication_pad1d_backward):
        assert op(g, x, [1, 1]).shape == x.shape
        with pytest.raises(RuntimeError, match="expected grad_output of sizes"):
            op(ct.zeros(2, 3, 5), x, [1, 1])
        with pytest.raises(NotImplementedError):
            op(g.long(), x.long(), [1, 1])
