"""Convolution and pooling vs torch: outputs, input/weight/bias gradients,
every code path of src/ATen/ATConv.c (image-parallel, chunked wide GEMM,
1x1 pointwise, groups, stride/dilation/padding), and error types."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

# (N, C, H, W, O, kernel, stride, padding, dilation, groups)
CASES = [
    (2, 3, 9, 8, 4, 3, 1, 1, 1, 1),          # small: one thread, chunked
    (5, 4, 11, 7, 6, 3, 2, 0, 1, 2),         # groups, stride
    (3, 6, 10, 10, 6, 5, 2, 2, 2, 3),        # dilation
    (8, 1, 28, 28, 6, 5, 1, 2, 1, 1),        # L >= 256: image-parallel
    (40, 8, 6, 6, 16, 1, 1, 0, 1, 1),        # 1x1 pointwise, several images per chunk
    (300, 2, 5, 5, 3, 3, 1, 1, 1, 1),        # many thin images
    (2, 4, 7, 7, 4, 1, 2, 0, 1, 1),          # 1x1 with stride: not pointwise
    (1, 3, 5, 5, 2, (3, 1), (1, 2), (1, 0), 1, 1),
    (4, 4, 20, 20, 8, 3, 1, 1, 1, 4),        # depthwise, image-parallel
    # stride 1 with output width == input width: im2col copies whole blocks
    (3, 5, 4, 4, 6, 3, 1, 1, 1, 1),
    (2, 3, 6, 2, 4, 3, 1, 1, 1, 1),          # window wider than the image
    (2, 3, 5, 7, 4, (3, 5), 1, (0, 2), 1, 1),
    (2, 3, 8, 9, 4, 3, 1, (3, 1), (2, 1), 1),  # dilation, extra rows of padding
    (2, 3, 3, 3, 4, 5, 1, 2, 1, 1),          # kernel larger than the image
    # image-parallel with small images: each thread groups its own images
    (9, 4, 6, 6, 5, 3, 1, 1, 1, 1),          # odd batch: shares of 5 and 4
    (3, 4, 6, 6, 5, 3, 1, 1, 1, 1),          # batch too small to share: one thread drives
    (16, 1024, 4, 4, 8, 3, 1, 1, 1, 1),      # columns past the cap: several chunks per thread
    # stride 1 with rows of 12+ outputs (AVX-512) or whose 8-wide segments
    # are 3/4 full (AVX2): the direct kernel (forward, and grad_input as a
    # convolution with the flipped weights)
    (3, 5, 14, 30, 13, 3, 1, 1, 1, 1),       # O and C not multiples of 8, a part-filled segment
    (2, 16, 12, 20, 9, 3, 1, 2, 2, 1),       # dilation
    (2, 7, 16, 16, 3, (1, 3), 1, (0, 1), 1, 1),
    (2, 4, 16, 16, 8, 3, 1, 3, 1, 1),        # padding past K-1: grad_input falls back
    (1, 24, 20, 33, 17, 3, 1, 0, 1, 1),      # one image
    (4, 16, 8, 8, 12, 3, 1, 1, 1, 1),        # 8-wide rows: two rows per vector
    (4, 16, 9, 7, 12, 3, 1, 1, 1, 1),        # 7-wide rows, a row count not a multiple of 4
    (16, 32, 4, 4, 48, 3, 1, 1, 1, 1),       # 4x4 outputs: two images' im2col rows per tile
    (9, 8, 8, 8, 12, 3, 2, 1, 1, 1),         # stride 2 to 4x4, an odd image left over
    (6, 8, 7, 5, 12, 3, 1, (1, 0), 1, 1),    # 7x3 = 21 outputs: too many for one vector
    (2, 40, 10, 30, 6, 3, 1, 1, 1, 1),       # AVX2: 40 channels summed in two chunks, 6-wide last segments
    # AVX2 rows whose 8-wide segments are 5/8 full: 10 (LeNet's conv2), 5, 11 and 17 outputs wide
    (3, 6, 14, 14, 16, 5, 1, 0, 1, 1),
    (2, 16, 9, 9, 6, 5, 1, 0, 1, 1),
    (2, 5, 11, 13, 7, 3, 1, (1, 0), 1, 1),
    (2, 4, 17, 17, 5, 3, 1, 1, 1, 1),
    # an image's columns past 1 MB: the forward runs blocks of output rows (35 + 15 rows here)
    (1, 3, 100, 100, 4, 7, 2, 3, 1, 1),      # ResNet's stem, smaller
    (1, 3, 101, 99, 5, (7, 5), (2, 1), (3, 2), 1, 1),
]


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_matches_torch(case, dtype):
    N, C, H, W, O, k, s, p, d, g = case
    kk = k if isinstance(k, tuple) else (k, k)
    rs = np.random.RandomState(0)
    x, w, b = rs.randn(N, C, H, W), rs.randn(O, C // g, *kk), rs.randn(O)
    tx, tw, tb = (torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (x, w, b))
    cx, cw, cb = (ct.tensor(a, dtype=getattr(ct, dtype), requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, s, p, d, g)
    cy = ct.nn.functional.conv2d(cx, cw, cb, s, p, d, g)
    assert cy.dtype == getattr(ct, dtype) and tuple(cy.shape) == tuple(ty.shape)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(_np(cy), _np(ty), rtol=tol, atol=tol * 10)
    gy = rs.randn(*ty.shape)
    ty.backward(torch.tensor(gy, dtype=ty.dtype))
    cy.backward(ct.tensor(gy, dtype=cy.dtype))
    for a, bb in ((cx, tx), (cw, tw), (cb, tb)):
        np.testing.assert_allclose(_np(a.grad), _np(bb.grad), rtol=tol * 10, atol=tol * 100)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("needs", [(True, False), (False, True)])
def test_conv2d_one_gradient_each_path(threads, needs):
    """grad_input alone or grad_weight alone, on the one-thread and the
    image-parallel paths (grad_weight is written, not accumulated, there)."""
    old = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        rs = np.random.RandomState(5)
        for shape, wshape in (((6, 8, 5, 5), (4, 8, 3, 3)), ((4, 3, 20, 20), (5, 3, 3, 3))):
            x, w = rs.randn(*shape).astype("float32"), rs.randn(*wshape).astype("float32")
            cx, cw = ct.tensor(x, requires_grad=needs[0]), ct.tensor(w, requires_grad=needs[1])
            tx, tw = torch.tensor(x, requires_grad=needs[0]), torch.tensor(w, requires_grad=needs[1])
            for _ in range(2):   # a second call reuses the scratch buffers
                cx.grad = cw.grad = None
                ct.nn.functional.conv2d(cx, cw, padding=1).pow(2).sum().backward()
            torch.nn.functional.conv2d(tx, tw, padding=1).pow(2).sum().backward()
            for c, t in ((cx, tx), (cw, tw)):
                assert (c.grad is None) == (t.grad is None)
                if t.grad is not None:
                    np.testing.assert_allclose(_np(c.grad), _np(t.grad), rtol=1e-4, atol=1e-3)
    finally:
        ct.set_num_threads(old)


def test_conv2d_weight_grad_only_skips_input_grad():
    rs = np.random.RandomState(1)
    x, w = rs.randn(4, 3, 16, 16).astype("float32"), rs.randn(5, 3, 3, 3).astype("float32")
    cw = ct.tensor(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ct.nn.functional.conv2d(ct.tensor(x), cw, padding=1).sum().backward()
    torch.nn.functional.conv2d(torch.tensor(x), tw, padding=1).sum().backward()
    np.testing.assert_allclose(_np(cw.grad), _np(tw.grad), rtol=1e-4, atol=1e-3)
    gi, gw, gb = ct._C._internal.conv2d_backward(ct.ones(4, 5, 16, 16), ct.tensor(x), ct.tensor(w), [1, 1], [1, 1], [1, 1], 1,
                                    [0, 1, 0])
    assert gi is None and gb is None and gw is not None


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_transpose2d_matches_torch(groups):
    rs = np.random.RandomState(2)
    x, w, b = rs.randn(3, 4, 5, 6).astype("float32"), rs.randn(4, 6 // groups, 3, 3).astype("float32"), rs.randn(6)
    tx, tw, tb = (torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in (x, w, b))
    cx, cw, cb = (ct.tensor(a, dtype=ct.float32, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv_transpose2d(tx, tw, tb, 2, 1, 1, groups)
    cy = ct.nn.functional.conv_transpose2d(cx, cw, cb, 2, 1, 1, groups)
    np.testing.assert_allclose(_np(cy), _np(ty), rtol=1e-4, atol=1e-4)
    ty.pow(2).sum().backward()
    cy.pow(2).sum().backward()
    for a, bb in ((cx, tx), (cw, tw), (cb, tb)):
        np.testing.assert_allclose(_np(a.grad), _np(bb.grad), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("xs, ws, groups", [((3, 512, 2, 2), (32, 32, 3, 3), 1), ((512, 2, 2), (32, 32, 3, 3), 1),
                                            ((3, 8, 5), (4, 2, 3), 1), ((3, 8, 5, 5), (4, 2, 3, 3), 2),
                                            ((3, 8, 5, 5, 5), (4, 2, 3, 3, 3), 1)])
def test_conv_transpose_channel_mismatch_gives_torchs_message(xs, ws, groups):
    """a decoder fed the wrong channel count (PyTorch-VAE's MIWAE/HVAE at other sizes) names the transposed
    weight and the input, as torch's; it named conv2d_backward's grad_output before"""
    msgs = []
    for lib in (ct, torch):
        fn = getattr(lib.nn.functional, "conv_transpose%dd" % (len(ws) - 2))
        with pytest.raises(RuntimeError) as e:
            fn(lib.zeros(xs), lib.zeros(ws), groups=groups)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and msgs[0].startswith("Given transposed=1")


def test_conv1d_and_modules_match_torch():
    rs = np.random.RandomState(3)
    x = rs.randn(4, 3, 50).astype("float32")
    tm = torch.nn.Conv1d(3, 5, 4, stride=2, padding=1)
    cm = ct.nn.Conv1d(3, 5, 4, stride=2, padding=1)
    cm.load_state_dict({k: ct.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(_np(cm(ct.tensor(x))), _np(tm(torch.tensor(x))), rtol=1e-4, atol=1e-5)


def test_conv2d_errors():
    x = ct.ones(1, 3, 5, 5)
    with pytest.raises(RuntimeError, match="expected input\\[1, 3, 5, 5\\] to have 4 channels"):
        ct.nn.functional.conv2d(x, ct.ones(2, 4, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        ct.nn.functional.conv2d(x, ct.ones(2, 3, 7, 7))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):   # torch's CPU wording
        ct.nn.functional.conv2d(x, ct.ones(2, 3, 3, 3, dtype=ct.float64))


@pytest.mark.parametrize("fn,kw", [
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", dict(kernel_size=2, ceil_mode=True)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=2)),
    ("adaptive_avg_pool2d", dict(output_size=(3, 2))),
    ("adaptive_max_pool2d", dict(output_size=3)),
])
def test_pooling_matches_torch(fn, kw):
    x = np.random.RandomState(4).randn(2, 3, 9, 7).astype("float32")
    tx, cx = torch.tensor(x, requires_grad=True), ct.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, fn)(tx, **kw)
    cy = getattr(ct.nn.functional, fn)(cx, **kw)
    np.testing.assert_allclose(_np(cy), _np(ty), rtol=1e-5, atol=1e-6)
    ty.pow(2).sum().backward()
    cy.pow(2).sum().backward()
    np.testing.assert_allclose(_np(cx.grad), _np(tx.grad), rtol=1e-5, atol=1e-5)


# stride-1 convolutions with >= 16 input channels and >= 256 output pixels
# take the shifted-GEMM path (ATConvShift.c): padding, dilation, rectangular
# kernels, odd sizes, one image and both float types, with all three grads
SHIFT_CASES = [(4, 16, 8, 20, 20, 3, 3, 1, 1, 1, 1), (3, 32, 16, 17, 19, 3, 3, 0, 0, 1, 1),
               (2, 16, 24, 16, 16, 5, 5, 2, 2, 1, 1), (1, 20, 7, 18, 22, 3, 1, 1, 0, 1, 1),
               (2, 16, 8, 20, 20, 3, 3, 2, 2, 2, 2), (5, 16, 4, 16, 16, 2, 2, 0, 1, 1, 1)]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", SHIFT_CASES)
def test_conv2d_shifted_gemm_path_matches_torch(case, dt):
    N, C, O, H, W, KH, KW, PH, PW, DH, DW = case
    rs = np.random.RandomState(sum(case))
    x, w, b = rs.randn(N, C, H, W).astype(dt), rs.randn(O, C, KH, KW).astype(dt), rs.randn(O).astype(dt)
    ours = [ct.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    yo = ct.nn.functional.conv2d(*ours, padding=(PH, PW), dilation=(DH, DW))
    yt = torch.nn.functional.conv2d(*theirs, padding=(PH, PW), dilation=(DH, DW))
    g = rs.randn(*yt.shape).astype(dt)
    yo.backward(ct.tensor(g))
    yt.backward(torch.tensor(g))
    tol = 1e-4 if dt == "float32" else 1e-10
    for a, r in [(yo, yt)] + [(p.grad, q.grad) for p, q in zip(ours, theirs)]:
        a, r = a.detach().numpy(), r.detach().numpy()
        assert a.shape == r.shape
        np.testing.assert_allclose(a, r, rtol=tol, atol=tol * np.abs(r).max())


@pytest.mark.parametrize("nd,kw", [(1, {}), (2, dict(stride=2, padding=1)), (2, dict(dilation=2, groups=2)),
                                   (3, dict(stride=(1, 2, 1), padding=1))])
def test_nn_grad_conv_input_and_weight_match_torch(nd, kw):
    """torch.nn.grad.convNd_input/_weight (the conv+bn custom function tutorial), and their own gradients"""
    r = np.random.RandomState(nd)
    x = r.randn(2, 4, *([7] * nd))
    w = r.randn(6, 4 // kw.get("groups", 1), *([3] * nd))
    tconv = getattr(torch.nn.functional, "conv%dd" % nd)
    go = r.randn(*tconv(torch.tensor(x), torch.tensor(w), **kw).shape)
    res = []
    for lib in (ct, torch):
        G = lib.nn.grad
        X, W, GO = (lib.tensor(a, requires_grad=True) for a in (x, w, go))
        gi = getattr(G, "conv%dd_input" % nd)(X.shape, W, GO, **kw)
        gw = getattr(G, "conv%dd_weight" % nd)(X, W.shape, GO, **kw)
        (gi.pow(2).sum() + gw.pow(2).sum()).backward()
        res.append([gi, gw, X.grad, W.grad, GO.grad])
    for a, b in zip(*res):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-10)
    with ct.no_grad():
        assert ct.nn.grad.conv1d_input((1, 1, 5), ct.ones(1, 1, 3), ct.ones(1, 1, 3)).grad_fn is None


# depthwise (groups == in_channels) takes its own direct kernel: strides,
# dilation, padding wider than the kernel's reach, channel multipliers 1..3,
# non-square kernels, float32 and float64, forward and all three gradients
@pytest.mark.parametrize("N,C,m,H,W,K,S,P,D,dt", [
    (2, 8, 1, 13, 11, 3, 1, 1, 1, "float32"), (2, 8, 1, 13, 11, 3, 2, 1, 1, "float32"),
    (1, 6, 2, 10, 9, 5, 2, 2, 1, "float64"), (3, 4, 3, 7, 8, 3, 1, 2, 2, "float64"),
    (2, 5, 1, 9, 9, (3, 5), (2, 1), (0, 2), 1, "float32"), (2, 4, 1, 8, 8, 7, 1, 3, 1, "float32"),
    (1, 4, 1, 5, 5, 3, 3, 4, 1, "float64"),
    # float32's register-blocked kernel (strides 1 and 2): rows of 16 + 8 + tail columns, stride 2's
    # paired loads at the row's end, dilation, a channel multiplier (grad_input by scatter),
    # rows narrower than a vector, mixed strides, and stride 3 (the plain loops)
    (2, 3, 1, 21, 37, 5, 2, 2, 1, "float32"), (1, 4, 1, 30, 41, 3, 1, 1, 1, "float32"),
    (2, 3, 1, 17, 19, 3, 1, 2, 2, "float32"), (1, 3, 2, 12, 26, 3, (1, 2), 1, 1, "float32"),
    (2, 5, 1, 4, 3, 3, 1, 1, 1, "float32"), (1, 4, 1, 11, 24, 7, (2, 1), 3, 1, "float32"),
    (1, 3, 1, 10, 10, 3, 3, 0, 1, "float32"), (1, 2, 1, 40, 33, 5, 2, 0, 1, "float32")])
def test_depthwise_conv2d_matches_torch(N, C, m, H, W, K, S, P, D, dt):
    g = torch.Generator().manual_seed(0)
    kk = (K, K) if isinstance(K, int) else K
    tdt = getattr(torch, dt)
    x = torch.randn(N, C, H, W, dtype=tdt, generator=g, requires_grad=True)
    w = torch.randn(C * m, 1, *kk, dtype=tdt, generator=g, requires_grad=True)
    b = torch.randn(C * m, dtype=tdt, generator=g, requires_grad=True)
    y = torch.nn.functional.conv2d(x, w, b, S, P, D, C)
    gy = torch.randn(y.shape, dtype=tdt, generator=g)
    y.backward(gy)
    cx, cw, cb = [ct.from_numpy(t.detach().numpy().copy()).requires_grad_() for t in (x, w, b)]
    cy = ct.nn.functional.conv2d(cx, cw, cb, S, P, D, C)
    cy.backward(ct.from_numpy(gy.numpy().copy()))
    tol = 1e-5 if dt == "float32" else 1e-12
    for got, want in ((cy, y), (cx.grad, x.grad), (cw.grad, w.grad), (cb.grad, b.grad)):
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def test_dtype_mismatch_errors_name_cpp_types_as_torch():
    """a bias of another dtype is named by C++ type for every input dtype (long int, int, c10::Half), then a
    weight of another dtype by ScalarType, as torch's CPU convolution"""
    calls = [lambda L, x: L.nn.Conv2d(3, 4, 3)(x.long()), lambda L, x: L.nn.Conv2d(3, 4, 3)(x.int()),
             lambda L, x: L.nn.Conv2d(3, 4, 3, bias=False)(x.long()),
             lambda L, x: L.nn.functional.conv2d(x, L.ones(4, 3, 3, 3).long()),
             lambda L, x: L.nn.Conv2d(3, 4, 3).double()(x), lambda L, x: L.nn.Conv2d(3, 4, 3)(x.half()),
             lambda L, x: L.nn.Conv1d(3, 4, 3)(x[0].to(L.int16))]
    for call in calls:
        msgs = []
        for L in (ct, torch):
            with pytest.raises(RuntimeError) as e:
                call(L, L.ones(1, 3, 8, 8))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


@pytest.mark.parametrize("cls,shape,mode", [("Conv1d", (2, 4, 9), "zeros"), ("Conv1d", (2, 4, 9), "circular"),
                                            ("Conv2d", (2, 4, 6, 5), "reflect"), ("Conv3d", (1, 4, 4, 5, 3), "zeros")])
def test_conv_forward_with_other_weights(cls, shape, mode):
    """_conv_forward(input, weight, bias) convolves with given weights under the module's settings (loralib's
    ConvLoRA adds its low-rank update this way); Conv1d lacked it. Values and gradients vs torch"""
    res = []
    x = np.random.RandomState(0).randn(*shape)
    for lib in (ct, torch):
        lib.manual_seed(0)
        m = getattr(lib.nn, cls)(4, 6, 3, padding=1, padding_mode=mode, dtype=lib.float64)
        delta = lib.ones(m.weight.shape, dtype=lib.float64, requires_grad=True)
        xi = lib.tensor(x, requires_grad=True)
        out = m._conv_forward(xi, m.weight + 0.1 * delta, None)
        out.square().sum().backward()
        res.append((out, xi.grad, delta.grad, m.weight.grad))
    for a, b in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-10)
