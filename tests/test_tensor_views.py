"""Views share storage and copy nothing; conversions, copy_ and properties."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def pair(shape=(2, 3, 4), dtype="float32"):
    a = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    return ct.tensor(a), torch.tensor(a)


def check(a, b):
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert a.stride() == b.stride(), (a.stride(), b.stride())
    assert a.storage_offset() == b.storage_offset()
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


VIEWS = [
    lambda t: t.view(6, 4), lambda t: t.view(-1), lambda t: t.view(2, -1, 2), lambda t: t.reshape(4, 6),
    lambda t: t.flatten(), lambda t: t.flatten(1), lambda t: t.unflatten(2, (2, 2)),
    lambda t: t.squeeze(), lambda t: t.unsqueeze(0), lambda t: t.unsqueeze(-1),
    lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 2), lambda t: t[0].t(), lambda t: t.mT,
    lambda t: t[:, :1].expand(2, 5, 4), lambda t: t[:, :1].expand_as(t), lambda t: t.narrow(1, 1, 2),
    lambda t: t.select(2, -1), lambda t: t.unfold(2, 2, 1), lambda t: t.as_strided((2, 2), (1, 3), 1),
    lambda t: t.movedim(0, -1), lambda t: t.diagonal(0, 1, 2), lambda t: t[..., ::2],
    lambda t: t[1:, None, :, 1::2], lambda t: t[-1, -1], lambda t: t[:, 0:0], lambda t: t.view_as(t),
    lambda t: t.swapaxes(0, 1), lambda t: t.squeeze(0), lambda t: t.contiguous(),
]


@pytest.mark.parametrize("fn", VIEWS)
def test_views_match_torch_and_share_storage(fn):
    a, b = pair()
    va, vb = fn(a), fn(b)
    check(va, vb)
    if va.numel():
        base = a.data_ptr()
        nbytes = a.numel() * a.element_size()
        assert base <= va.data_ptr() < base + nbytes   # no copy


def test_view_writes_through():
    a = ct.zeros(2, 3)
    v = a[1]
    v[2] = 5
    a.t()[0, 0] = 1
    a.view(-1)[1] = 2
    assert a.tolist() == [[1, 2, 0], [0, 0, 5]]


def test_reshape_copies_only_when_needed():
    a = ct.arange(12.0).view(3, 4)
    assert a.reshape(4, 3).data_ptr() == a.data_ptr()
    t = a.t()
    r = t.reshape(12)
    assert r.data_ptr() != a.data_ptr()
    assert r.tolist() == torch.arange(12.0).view(3, 4).t().reshape(12).tolist()


def test_view_errors():
    a = ct.arange(12.0).view(3, 4)
    with pytest.raises(RuntimeError, match="shape '\\[5, -1\\]' is invalid for input of size 12"):
        a.view(5, -1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        a.t().view(12)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        a.view(-1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        a.transpose(0, 2)
    with pytest.raises(IndexError, match="Dimension out of range \\(expected to be in range of \\[-2, 1\\], but got 5\\)"):
        a.select(5, 0)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        a[3]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(RuntimeError, match="expanded size"):
        a.expand(2, 4)


def test_copy_across_dtypes_and_broadcast():
    a = ct.zeros(2, 3, dtype=ct.int32)
    a.copy_(ct.tensor([1.7, 2.2, -3.9]))
    assert a.tolist() == [[1, 2, -3], [1, 2, -3]]
    b = ct.zeros(3, dtype=ct.float16)
    b.copy_(ct.tensor([1, 2, 3]))
    assert b.tolist() == [1.0, 2.0, 3.0]
    c = ct.empty(2, 2).t()
    c.copy_(ct.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert c.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError):
        a.copy_(ct.ones(4))
    bf = ct.tensor([1.5, -2.25, 3e38]).to(ct.bfloat16)
    assert bf.float().tolist() == torch.tensor([1.5, -2.25, 3e38]).to(torch.bfloat16).float().tolist()


@pytest.mark.parametrize("dt", ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"])
def test_conversions(dt):
    a = ct.tensor([[-1.5, 0.0], [2.7, 300.0]])
    b = torch.tensor([[-1.5, 0.0], [2.7, 300.0]])
    if dt in ("byte", "char"):   # out-of-range float->int is undefined; stay in range
        a, b = a.abs() % 100, b.abs() % 100
    ca, cb = getattr(a, dt)(), getattr(b, dt)()
    assert str(ca.dtype) == str(cb.dtype)
    np.testing.assert_array_equal(np.asarray(ca.float().tolist()), np.asarray(cb.float().tolist()))
    assert a.to(getattr(ct, str(cb.dtype).split(".")[1])).dtype == ca.dtype


def test_to_variants():
    a = ct.ones(2)
    assert a.to(ct.float32) is a
    assert a.to(ct.float32, copy=True) is not a
    assert a.to("cpu") is a
    assert a.to(ct.zeros(1, dtype=ct.float64)).dtype == ct.float64
    assert a.to(device="cpu", dtype=ct.int64).dtype == ct.int64
    assert a.double().float().dtype == ct.float32


def test_properties():
    a = ct.zeros(2, 3, 4)
    assert a.size() == (2, 3, 4) and isinstance(a.size(), ct.Size) and a.size(1) == 3 and a.size(-1) == 4
    assert repr(a.shape) == "torch.Size([2, 3, 4])"
    assert a.dim() == 3 and a.ndim == 3 and a.numel() == 24 and a.nelement() == 24
    assert a.stride() == (12, 4, 1) and a.stride(0) == 12
    assert a.element_size() == 4 and a.is_contiguous() and not a.transpose(0, 1).is_contiguous()
    assert a[1].storage_offset() == 12
    assert isinstance(a.data_ptr(), int)
    assert a.dtype == ct.float32 and a.device.type == "cpu" and not a.is_cuda
    assert ct.Size([2, 3]).numel() == 6 and ct.Size([2, 3])[1:] == ct.Size([3])
    assert isinstance(ct.Size([1]) + ct.Size([2]), ct.Size)
    assert a.clone().data_ptr() != a.data_ptr()
    assert a.transpose(0, 2).clone().stride() == torch.zeros(2, 3, 4).transpose(0, 2).clone().stride()


def test_item_tolist():
    assert ct.tensor(3).item() == 3 and isinstance(ct.tensor(3).item(), int)
    assert isinstance(ct.tensor(2.5).item(), float)
    assert ct.tensor([True]).item() is True
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        ct.ones(2).item()
    assert ct.arange(4).view(2, 2).t().tolist() == [[0, 2], [1, 3]]
    assert ct.tensor(1.5).tolist() == 1.5
def test_split_chunk_unbind_are_views():
    a = ct.arange(10.0)
    parts = a.split(3)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    parts[1][0] = 100
    assert a[3].item() == 100
    assert [c.shape[0] for c in a.chunk(4)] == [3, 3, 3, 1]
    rows = ct.arange(6).view(2, 3).unbind(1)
    assert [r.tolist() for r in rows] == [[0, 3], [1, 4], [2, 5]]




VIEW_DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool", "float16", "bfloat16"]


@pytest.mark.parametrize("dst", VIEW_DTYPES)
@pytest.mark.parametrize("src", ["float32", "int16", "float64", "uint8"])
def test_view_dtype_reinterprets_bytes_as_torch_does(src, dst):
    # shapes, strides and offsets of contiguous, sliced and transposed inputs; the
    # bytes are compared through int views (bool and float bytes need not round-trip)
    g = np.random.default_rng(0)
    raw = g.integers(0, 2, size=96, dtype=np.uint8) if dst == "bool" else g.integers(0, 255, size=96, dtype=np.uint8)
    base_c, base_t = ct.tensor(raw).view(getattr(ct, src)), torch.tensor(raw).view(getattr(torch, src))
    n = base_c.numel()
    cases = [lambda b: b, lambda b: b.view(-1, 4) if n % 4 == 0 else b, lambda b: b[2:],
             lambda b: b.view(-1, 4)[1:] if n % 4 == 0 else b[1:], lambda b: b.view(-1, 4).t() if n % 4 == 0 else b,
             lambda b: b.view(-1, 2)[:, :1] if n % 2 == 0 else b, lambda b: b[0]]
    for make in cases:
        a, b = make(base_c), make(base_t)
        try:
            want = b.view(getattr(torch, dst))
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                a.view(getattr(ct, dst))
            assert str(got.value) == str(e)
            continue
        r = a.view(dtype=getattr(ct, dst))
        check(r, want)
        assert r.data_ptr() == a.data_ptr()
        if dst not in ("bool", "float16", "bfloat16", "float32", "float64"):
            assert r.tolist() == want.tolist()
        else:
            iv = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}[want.element_size()]
            assert r.view(getattr(ct, iv)).tolist() == want.view(getattr(torch, iv)).tolist()


def test_view_dtype_is_a_view_without_grad():
    x = ct.arange(4., requires_grad=True)
    r = x.view(ct.int32)
    assert not r.requires_grad and r.grad_fn is None
    y = ct.zeros(4)
    v = y.view(ct.int32)
    v[0] = 1065353216          # the bits of 1.0
    assert y[0].item() == 1.0 and y._version == v._version
    with pytest.raises(TypeError):
        y.view(ct.int32, ct.int32)


# ---- channels_last: conversion, strides, is_contiguous, and ops over such inputs, against torch ----
def _cl_state(lib, y):
    return (tuple(y.shape), y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=lib.channels_last),
            y.is_contiguous(memory_format=lib.channels_last_3d), y.detach().double().numpy().tolist())


CL_CALLS = {
    "to": lambda L, x: x.to(memory_format=L.channels_last),
    "to_dtype": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "contiguous": lambda L, x: x.contiguous(memory_format=L.channels_last),
    "clone": lambda L, x: x.clone(memory_format=L.channels_last),
    "back": lambda L, x: x.contiguous(memory_format=L.channels_last).contiguous(),
    "back_to": lambda L, x: x.to(memory_format=L.channels_last).to(memory_format=L.contiguous_format),
    "clone_preserves": lambda L, x: x.contiguous(memory_format=L.channels_last).clone(),
    "add": lambda L, x: x.contiguous(memory_format=L.channels_last) * 2 + 1,
    "relu": lambda L, x: (x - 50).contiguous(memory_format=L.channels_last).relu(),
    "permuted_nhwc": lambda L, x: x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    "channel_one": lambda L, x: x[:, :1].contiguous(memory_format=L.channels_last),
    "spatial_one": lambda L, x: x[:, :, :1, :1].contiguous(memory_format=L.channels_last),
    "sliced": lambda L, x: x[:, :, ::2].contiguous(memory_format=L.channels_last),
    "resize": lambda L, x: x.clone(memory_format=L.channels_last).resize_(x.shape, memory_format=L.channels_last),
    "conv": lambda L, x: L.nn.functional.conv2d(x.contiguous(memory_format=L.channels_last),
                                                L.arange(24.).view(2, 3, 2, 2)).contiguous(),
    "sum_dims": lambda L, x: x.contiguous(memory_format=L.channels_last).sum((2, 3)),
    "cl3d": lambda L, x: x.view(2, 3, 4, 5, 1).to(memory_format=L.channels_last_3d),
}


@pytest.mark.parametrize("name", sorted(CL_CALLS))
def test_channels_last_as_torch(name):
    def run(lib):
        return _cl_state(lib, CL_CALLS[name](lib, lib.arange(120.).view(2, 3, 4, 5)))
    assert run(ct) == run(torch)


@pytest.mark.parametrize("call", [
    "x.contiguous(memory_format=L.channels_last)", "x.to(memory_format=L.channels_last)",
    "x.clone(memory_format=L.channels_last_3d)", "x.contiguous(memory_format=L.preserve_format)",
    "x.is_contiguous(memory_format=1)", "x.is_contiguous(memory_format=None)", "x.is_contiguous(L.channels_last)",
    "x.is_contiguous(1, 2)", "x.is_contiguous(format=L.channels_last)",
    "x[:, ::2].contiguous(memory_format=L.preserve_format)",
    "x.unsqueeze(-1).expand(2, 3, 4, 2).contiguous(memory_format=L.channels_last).view(-1)",
])
def test_channels_last_refusals_as_torch(call):
    """rank-3 tensors have no channels_last layout; a channels_last tensor does not view as flat"""
    def run(lib):
        env = {"L": lib, "x": lib.ones(2, 3, 4)}
        try:
            r = eval(call, env)
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e)
        return r if isinstance(r, bool) else r.stride()
    assert run(ct) == run(torch)


def test_channels_last_to_keeps_one_node():
    """to(memory_format=) is one ToCopyBackward0 over the leaf, as torch's; contiguous's is CloneBackward0;
    both pass the gradient through unchanged"""
    def run(lib):
        x = lib.arange(120., requires_grad=True).view(2, 3, 4, 5)
        out = []
        for y in (x.to(memory_format=lib.channels_last), x.contiguous(memory_format=lib.channels_last)):
            g, = lib.autograd.grad((y * lib.arange(120.).view(2, 3, 4, 5)).sum(), x)
            out.append((type(y.grad_fn).__name__, g.stride(), g.numpy().tolist()))
        return out
    assert run(ct) == run(torch)


@pytest.mark.parametrize("shape", [(2, 0, 3, 4), (2, 3, 0, 5), (0, 3, 4, 5), (2, 3, 4, 0)])
@pytest.mark.parametrize("how", ["contiguous", "clone", "to"])
def test_channels_last_of_empty_as_torch(shape, how):
    """an empty tensor's channels_last strides can repeat (0, 1, 0, 0): nothing is written twice, so the
    copy into it is no overlap (it raised torch's 'more than one element ... refers to a single memory location')"""
    def run(lib):
        y = getattr(lib.empty(shape), how)(memory_format=lib.channels_last)
        return tuple(y.shape), y.stride(), y.is_contiguous(memory_format=lib.channels_last)
    assert run(ct) == run(torch)


def test_copy_into_expanded_empty_as_torch():
    def run(lib):
        return tuple(lib.empty(1, 0, 1).expand(5, 0, 3).copy_(lib.ones(5, 0, 3)).shape)
    assert run(ct) == run(torch)


@pytest.mark.parametrize("call", [
    "t.resize_(3, 2)", "t.resize_(2, 3)", "t.resize_(3, 2, memory_format=L.contiguous_format)",
    "t.resize_(3, 2, memory_format=L.preserve_format)", "t.resize_(6, memory_format=L.preserve_format)",
    "c.resize_(2, 3, 4, 5)", "c.resize_(2, 3, 4, 5, memory_format=L.contiguous_format)", "c.resize_(120)",
    "c.resize_(2, 3, 4, 5, memory_format=L.channels_last)", "t.resize_(3, 2, 1, memory_format=L.channels_last)",
])
def test_resize_keeps_strides_as_torch(call):
    """resize_ to the same sizes keeps the strides (a transposed view's values stay where they are); only a
    memory_format given lays them out again; preserve is refused after the resize, as torch"""
    def run(lib):
        env = {"L": lib, "t": lib.arange(6.).view(2, 3).t(),
               "c": lib.arange(120.).view(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)}
        x = eval(call.split(".", 1)[0], env)
        try:
            eval(call, env)
            err = None
        except RuntimeError as e:
            err = str(e)
        return err, tuple(x.shape), x.stride(), x.flatten().tolist()[:12]
    assert run(ct) == run(torch)


@pytest.mark.parametrize("call", [
    "L.empty(2, 3, 4, 5, memory_format=L.channels_last)", "L.empty(2, 3, 4, 5, 6, memory_format=L.channels_last_3d)",
    "L.empty(2, 3, memory_format=L.channels_last)", "L.empty(2, 3, 4, 5, memory_format=L.preserve_format)",
    "L.empty(2, 0, 4, 5, memory_format=L.channels_last)", "L.empty_like(x, memory_format=L.channels_last)",
    "L.empty_like(c)", "L.empty_like(c, memory_format=L.contiguous_format)", "L.empty_like(y, memory_format=L.channels_last)",
    "L.zeros_like(x, memory_format=L.channels_last)", "L.zeros_like(c)", "L.zeros_like(c, memory_format=L.contiguous_format)",
    "L.full_like(x, 3., memory_format=L.channels_last)", "L.full_like(c, 3.)", "L.ones_like(t, dtype=L.bool)",
    "L.full_like(t.to(L.uint8), 300)",
])
def test_factory_memory_format_as_torch(call):
    """empty and the *_like factories lay their result out in the memory_format given (they ignored it), and the
    filled *_like keep a dense input's layout by default, as empty_like did"""
    def run(lib):
        env = {"L": lib, "x": lib.arange(120.).view(2, 3, 4, 5), "y": lib.ones(2, 3), "t": lib.arange(6).view(2, 3).t(),
               "c": lib.arange(120.).view(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)}
        try:
            r = eval(call, env)
        except RuntimeError as e:
            return str(e)
        return tuple(r.shape), r.stride(), r.dtype == getattr(lib, str(r.dtype).split(".")[1]), \
            None if "empty" in call else r.flatten().tolist()
    assert run(ct) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_contiguous_copy_of_transposed_views(dtype):
    # 4-byte dtypes copy a transposed view through 8 x 8 register transposes: edges that are not a
    # multiple of 8, batched (and stride-0 batch) views, offset views, copy_ into a transposed view
    rs = np.random.RandomState(0)
    for shape in ((8, 8), (9, 17), (256, 512), (300, 7), (3, 13, 40)):
        a = (rs.randn(*shape) * 100).astype(dtype)
        c, t = ct.tensor(a), torch.tensor(a)
        for f in (lambda x: x.transpose(-1, -2), lambda x: x.transpose(-1, -2)[1:, 2:],
                  lambda x: x[..., 1:, :].mT, lambda x: x.mT.unsqueeze(0).expand(2, *x.mT.shape)):
            got, want = f(c).contiguous(), f(t).contiguous()
            assert got.is_contiguous() and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        dc, dt = ct.zeros(*shape[:-2], shape[-1], shape[-2], dtype=c.dtype), torch.zeros(
            *shape[:-2], shape[-1], shape[-2], dtype=t.dtype)
        dc.copy_(c.mT)
        dt.copy_(t.mT)
        np.testing.assert_array_equal(dc.numpy(), dt.numpy())
    for L in (ct, torch):   # a source overlapping the destination still raises torch's error
        sq = L.tensor(np.arange(256, dtype=dtype).reshape(16, 16))
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            sq.copy_(sq.t())


def test_float_to_half_bits_match_torch():
    # contiguous float32 -> float16 goes eight at a time: every rounding case (ties, overflow to inf,
    # subnormals, NaN, signed zero) gives torch's bits, in blocks of 8 and in the tail
    rs = np.random.RandomState(0)
    a = np.concatenate([rs.randn(1000).astype(np.float32) * 1e3, rs.randn(1000).astype(np.float32) * 1e-6,
                        np.array([np.nan, np.inf, -np.inf, 65504, 65519.99, 65520, 1e-8, -6e-8, 0.0, -0.0,
                                  1 + 2 ** -11, 1 + 3 * 2 ** -11], dtype=np.float32)])
    for lo in (0, 3):
        got = ct.tensor(a[lo:]).half().numpy().view(np.uint16)
        want = torch.tensor(a[lo:]).half().numpy().view(np.uint16)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int16", "uint8", "bool", "complex64"])
def test_copies_with_a_tiny_innermost_dim_like_numpy(dt):
    # the loop driver runs a 2-4 long innermost dim under a longer one as the outer loop (fewer kernel
    # calls): pixel_shuffle's permuted copy, broadcasting over a 3-column matrix, writes into strided views
    rs = np.random.RandomState(2)
    a = (rs.randn(2, 12, 5, 7) * 50).astype(dt)
    x = ct.tensor(a)
    for r in (2, 3):   # r = 3: an innermost dim of 3
        y = x[:, :9 if r == 3 else 12].reshape(2, -1, r, r, 5, 7).permute(0, 1, 4, 2, 5, 3).contiguous()
        ref = a[:, :9 if r == 3 else 12].reshape(2, -1, r, r, 5, 7).transpose(0, 1, 4, 2, 5, 3)
        assert y.is_contiguous() and np.array_equal(y.numpy(), ref)
    if dt not in ("bool", "complex64"):
        np.testing.assert_array_equal(ct.nn.functional.pixel_shuffle(x, 2).numpy(),
                                      torch.nn.functional.pixel_shuffle(torch.tensor(a), 2).numpy())
        np.testing.assert_array_equal(ct.nn.functional.pixel_unshuffle(x[:, :, :4, :6], 2).numpy(),
                                      torch.nn.functional.pixel_unshuffle(torch.tensor(a)[:, :, :4, :6], 2).numpy())
    m, c = a.reshape(-1, 3)[:140], a.reshape(-1, 1)[:140]
    if dt != "bool":
        np.testing.assert_array_equal((ct.tensor(m) + ct.tensor(c)).numpy(), m + c)
    z = ct.zeros(140, 8, dtype=getattr(ct, dt))
    z[:, 1:4] = ct.tensor(m)            # a strided destination, 3 wide
    ref = np.zeros((140, 8), dt)
    ref[:, 1:4] = m
    assert np.array_equal(z.numpy(), ref)
    w = ct.tensor(a).transpose(2, 3)[..., :2]   # inner dim 2 of a transposed view
    assert np.array_equal(w.contiguous().numpy(), a.transpose(0, 1, 3, 2)[..., :2])
    assert np.array_equal(ct.empty(0, 2, 3).permute(2, 0, 1).contiguous().numpy(), np.empty((3, 0, 2)))


def test_tiny_innermost_copy_is_the_same_at_one_and_two_threads():
    big = ct.tensor(np.random.RandomState(0).randn(8, 128, 40, 40).astype("float32"))
    n0 = ct.get_num_threads()
    try:
        ct.set_num_threads(1)
        one = ct.nn.functional.pixel_shuffle(big, 2)
        ct.set_num_threads(2)
        two = ct.nn.functional.pixel_shuffle(big, 2)
    finally:
        ct.set_num_threads(n0)
    assert ct.equal(one, two) and ct.equal(ct.nn.functional.pixel_unshuffle(two, 2), big)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "uint8", "bool", "complex64", "float16", "bfloat16"])
def test_expand_to_fewer_dims_names_the_tensor_type_like_torch(dt):
    """expand's too-few-sizes error prints torch's Tensor::toString: torch.DoubleTensor, torch.LongTensor, and
    CPUBoolType / CPUComplexFloatType / CPUBFloat16Type where no legacy type exists (it said torch.FloatTensor for
    every dtype)"""
    oracle.raises_like(lambda: ct.ones(2, 3, dtype=getattr(ct, dt)).expand(3),
                       lambda: torch.ones(2, 3, dtype=getattr(torch, dt)).expand(3))
