"""nn layers beyond the core set (padding, fold, distances, norms, pooling, 3-d conv, lazy,
embedding_bag, extra losses, CTC) vs torch: outputs, gradients, reprs and errors."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
rs = np.random.RandomState(0)


def close(a, b, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def copy_params(tm, cm):
    sd = {k: ct.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    cm.load_state_dict(sd)


def run(fa, fb, *xs, tol=1e-5):
    """Same function on both: outputs and gradients of every float input agree."""
    pa = [ct.tensor(x, requires_grad=x.dtype.kind == "f") for x in xs]
    pb = [torch.tensor(x, requires_grad=x.dtype.kind == "f") for x in xs]
    ya, yb = fa(*pa), fb(*pb)
    close(ya, yb, tol)
    g = np.asarray(rs.randn(*yb.shape)).astype(np.asarray(yb.detach().numpy()).dtype)
    (ya * ct.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    for a, b in zip(pa, pb):
        if b.grad is not None:
            close(a.grad, b.grad, tol * 10)


def module_pair(name, *args, **kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    cm = getattr(ct.nn, name)(*args, **kw)
    copy_params(tm, cm)
    assert repr(cm) == repr(tm)
    return cm, tm


def run_module(name, args, x, kw=None, tol=1e-5, extra=()):
    cm, tm = module_pair(name, *args, **(kw or {}))
    run(lambda a, *e: cm(a, *e), lambda b, *e: tm(b, *e), x, *extra, tol=tol)
    for (n, pa), (_, pb) in zip(cm.named_parameters(), tm.named_parameters()):
        if pb.grad is not None:
            close(pa.grad, pb.grad, tol * 10)


X4 = rs.randn(2, 3, 5, 6)


@pytest.mark.parametrize("name,args,x", [
    ("ZeroPad1d", (2,), rs.randn(2, 3, 5)), ("ZeroPad2d", ((1, 2, 0, 3),), X4), ("ZeroPad3d", (1,), rs.randn(1, 2, 3, 4, 5)),
    ("ConstantPad1d", ((1, 2), 3.5), rs.randn(3, 5)), ("ConstantPad2d", (2, -1.0), X4),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 0.5), rs.randn(2, 3, 4, 5)),
    ("ReflectionPad1d", (2,), rs.randn(2, 3, 5)), ("ReflectionPad2d", ((1, 2, 3, 0),), X4),
    ("ReflectionPad3d", (1,), rs.randn(1, 2, 3, 4, 5)),
    ("ReplicationPad1d", ((3, 1),), rs.randn(2, 3, 5)), ("ReplicationPad2d", (2,), X4),
    ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),), rs.randn(1, 2, 3, 4, 5)),
    ("CircularPad1d", (2,), rs.randn(2, 3, 5)), ("CircularPad2d", ((1, 2, 2, 1),), X4),
    ("CircularPad3d", (1,), rs.randn(1, 2, 3, 4, 5)),
])
def test_padding_modules(name, args, x):
    run_module(name, args, x)


def test_circular_pad_rank_error():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        ct.nn.CircularPad1d(1)(ct.zeros(1, 1, 1, 3))


def test_fold_unfold_modules():
    run_module("Unfold", ((2, 3),), X4, {"padding": 1, "stride": (2, 1)})
    cols = rs.randn(2, 3 * 4, 20)
    run_module("Fold", ((4, 5), 2), cols, {"padding": (1, 0), "stride": 1})


def test_distances():
    a, b = rs.randn(4, 5), rs.randn(4, 5)
    run(lambda x, y: ct.nn.CosineSimilarity()(x, y), lambda x, y: torch.nn.CosineSimilarity()(x, y), a, b)
    run(lambda x, y: ct.nn.functional.cosine_similarity(x, y, 0), lambda x, y: torch.nn.functional.cosine_similarity(
        x, y, 0), a, b[:1])
    for p in (1.0, 2.0, 3.0, float("inf")):
        run(lambda x, y: ct.nn.PairwiseDistance(p)(x, y), lambda x, y: torch.nn.PairwiseDistance(p)(x, y), a, b)
    assert repr(ct.nn.PairwiseDistance()) == repr(torch.nn.PairwiseDistance())
    for p in (1.0, 2.0, 0.5):
        run(lambda x: ct.nn.functional.pdist(x, p), lambda x: torch.nn.functional.pdist(x, p), a)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        ct.nn.functional.pdist(ct.zeros(2, 2, 2))


def test_norms():
    run_module("RMSNorm", ((6,),), X4)
    run_module("RMSNorm", ([5, 6],), X4, {"eps": 1e-3, "elementwise_affine": False})
    run_module("LocalResponseNorm", (3,), X4)
    run_module("LocalResponseNorm", (2,), rs.randn(2, 4, 7), {"alpha": 0.1, "beta": 0.5, "k": 2.0})
    run_module("LocalResponseNorm", (4,), rs.randn(2, 5, 3, 2, 2))


@pytest.mark.parametrize("name,args,x", [
    ("LPPool1d", (2, 3), rs.randn(2, 3, 7)), ("LPPool2d", (3.0, (2, 3)), X4),
    ("LPPool2d", (2, 2, 1, True), X4),
    ("MaxPool3d", (2,), rs.randn(2, 2, 4, 5, 6)), ("MaxPool3d", ((2, 3, 2), 2, 1, 1, False, True), rs.randn(1, 2, 5, 6, 7)),
    ("MaxPool3d", (3, 2, 1, 2), rs.randn(2, 6, 7, 5)),
    ("AvgPool3d", (2,), rs.randn(2, 2, 4, 5, 6)), ("AvgPool3d", (3, 2, 1, True, False), rs.randn(1, 2, 5, 6, 7)),
    ("AvgPool3d", (3, 2, 1, True, True), rs.randn(1, 2, 5, 6, 7)),
    ("AvgPool3d", ((2, 1, 3), 1, 0, False, True, 3), rs.randn(2, 4, 5, 6)),
    ("AdaptiveAvgPool3d", ((2, 3, None),), rs.randn(2, 2, 5, 7, 4)),
    ("AdaptiveMaxPool3d", (2,), rs.randn(2, 2, 5, 7, 4)),
])
def test_pool_modules(name, args, x):
    run_module(name, args, x)


def test_pool_indices():
    x = rs.randn(2, 2, 5, 6, 7)
    a, ia = ct.nn.functional.max_pool3d(ct.tensor(x), 3, 2, 1, return_indices=True)
    b, ib = torch.nn.functional.max_pool3d(torch.tensor(x), 3, 2, 1, return_indices=True)
    close(a, b)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    a, ia = ct.nn.functional.adaptive_max_pool3d(ct.tensor(x), (2, 3, 4), True)
    b, ib = torch.nn.functional.adaptive_max_pool3d(torch.tensor(x), (2, 3, 4), True)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    x1 = rs.randn(2, 3, 9)
    a, ia = ct.nn.functional.max_pool1d_with_indices(ct.tensor(x1), 3, 2)
    b, ib = torch.nn.functional.max_pool1d_with_indices(torch.tensor(x1), 3, 2)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    a, ia = ct.nn.functional.adaptive_max_pool2d_with_indices(ct.tensor(X4), 2)
    b, ib = torch.nn.functional.adaptive_max_pool2d_with_indices(torch.tensor(X4), 2)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    x = rs.randn(2, 3, *[6, 5, 4][:nd])
    pool_t = getattr(torch.nn, "MaxPool%dd" % nd)(2, return_indices=True)
    out, idx = pool_t(torch.tensor(x))
    cm, tm = module_pair("MaxUnpool%dd" % nd, 2)
    size = list(x.shape)
    ya = cm(ct.tensor(out.numpy(), requires_grad=True), ct.tensor(idx.numpy()), output_size=size)
    yb = tm(out, idx, output_size=size)
    close(ya, yb)
    with pytest.raises(ValueError, match="invalid output_size"):
        cm(ct.tensor(out.numpy()), ct.tensor(idx.numpy()), output_size=[s + 5 for s in size])


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1}, {"dilation": (2, 1, 1), "groups": 2},
                                {"padding": "same", "bias": False}, {"padding": 1, "padding_mode": "circular"}])
def test_conv3d(kw):
    run_module("Conv3d", (4, 6, (3, 2, 3)), rs.randn(2, 4, 5, 6, 7).astype(np.float32), kw, tol=1e-4)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1}, {"groups": 2, "dilation": 2}])
def test_conv_transpose3d(kw):
    run_module("ConvTranspose3d", (4, 6, (3, 2, 3)), rs.randn(2, 4, 3, 4, 5).astype(np.float32), kw, tol=1e-4)


def test_upsampling_and_shuffle():
    run_module("UpsamplingNearest2d", (), X4, {"scale_factor": 2})
    run_module("UpsamplingBilinear2d", ((7, 9),), X4)
    run_module("ChannelShuffle", (3,), rs.randn(2, 6, 3, 2))
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        ct.nn.ChannelShuffle(4)(ct.zeros(1, 6, 2, 2))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    tm = torch.nn.EmbeddingBag(10, 4, mode=mode)
    cm = ct.nn.EmbeddingBag(10, 4, mode=mode)
    assert repr(cm) == repr(tm)
    copy_params(tm, cm)
    inp = [1, 2, 4, 5, 4, 3, 2, 9]
    offs = [0, 4, 4]   # an empty bag in the middle
    ya = cm(ct.tensor(inp), ct.tensor(offs))
    yb = tm(torch.tensor(inp), torch.tensor(offs))
    close(ya, yb)
    ya.sum().backward()
    yb.sum().backward()
    close(cm.weight.grad, tm.weight.grad)
    x2 = [[1, 2, 3], [4, 5, 1]]
    close(cm(ct.tensor(x2)), tm(torch.tensor(x2)))


def test_embedding_bag_weights_and_padding():
    tm = torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    cm = ct.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    copy_params(tm, cm)
    w = rs.rand(6)
    close(cm(ct.tensor([1, 2, 3, 2, 5, 6]), ct.tensor([0, 2]), ct.tensor(w, dtype=ct.float32)),
          tm(torch.tensor([1, 2, 3, 2, 5, 6]), torch.tensor([0, 2]), torch.tensor(w, dtype=torch.float32)))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        ct.nn.functional.embedding_bag(ct.tensor([1]), ct.zeros(3, 2), ct.tensor([0]), mode="mean",
                                       per_sample_weights=ct.ones(1))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        ct.nn.functional.embedding_bag(ct.tensor([1]), ct.zeros(3, 2))


def test_lazy_modules():
    m = ct.nn.LazyLinear(4)
    assert repr(m) == repr(torch.nn.LazyLinear(4))
    y = m(ct.randn(3, 7))
    assert type(m) is ct.nn.Linear and m.weight.shape == (4, 7) and y.shape == (3, 4)
    assert type(m.weight) is ct.nn.Parameter
    c = ct.nn.LazyConv2d(5, 3, padding=1)
    assert c(ct.randn(2, 4, 6, 6)).shape == (2, 5, 6, 6) and type(c) is ct.nn.Conv2d
    assert c.weight.shape == (5, 4, 3, 3)
    b = ct.nn.LazyBatchNorm2d()
    assert b(ct.randn(2, 3, 4, 4)).shape == (2, 3, 4, 4) and b.running_mean.shape == (3,)
    assert type(b) is ct.nn.BatchNorm2d
    seq = ct.nn.Sequential(ct.nn.LazyLinear(8), ct.nn.ReLU(), ct.nn.LazyLinear(2))
    seq(ct.randn(1, 5))
    assert [p.shape for p in seq.parameters()] == [(8, 5), (8,), (2, 8), (2,)]


def test_inplace_activations():
    F, G = ct.nn.functional, torch.nn.functional
    x = rs.randn(3, 4).astype(np.float32)
    for name, args in [("elu_", ()), ("selu_", ()), ("celu_", (0.5,)), ("leaky_relu_", (0.2,)),
                       ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -2.0)), ("rrelu_", ())]:
        a, b = ct.tensor(x), torch.tensor(x)
        ra, rb = getattr(F, name)(a, *args), getattr(G, name)(b, *args)
        assert ra is a
        close(a, b)
    a = ct.tensor(x, requires_grad=True) * 1
    F.rrelu(a, 0.1, 0.3, training=True, inplace=True).sum().backward()


def test_multi_margin_losses():
    x = rs.randn(5, 4)
    y = np.array([0, 3, 1, 1, 2])
    w = rs.rand(4)
    for p in (1, 2):
        for red in ("mean", "sum", "none"):
            cm, tm = ct.nn.MultiMarginLoss(p, 0.7, ct.tensor(w), reduction=red), \
                torch.nn.MultiMarginLoss(p, 0.7, torch.tensor(w), reduction=red)
            run(lambda a, t: cm(a, t), lambda b, t: tm(b, t), x, y)
    t = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [2, -1, 0, 0], [-1, 1, 2, 3], [0, 0, -1, 2]])
    for red in ("mean", "none"):
        run(lambda a, tt: ct.nn.MultiLabelMarginLoss(reduction=red)(a, tt),
            lambda b, tt: torch.nn.MultiLabelMarginLoss(reduction=red)(b, tt), x, t)
    tgt = (rs.rand(5, 4) > 0.5).astype(np.float64)
    run(lambda a, tt: ct.nn.MultiLabelSoftMarginLoss(ct.tensor(w))(a, tt),
        lambda b, tt: torch.nn.MultiLabelSoftMarginLoss(torch.tensor(w))(b, tt), x, tgt)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        ct.nn.MultiMarginLoss(p=3)


def test_triplet_with_distance():
    a, p, n = rs.randn(4, 6), rs.randn(4, 6), rs.randn(4, 6)
    run(lambda *v: ct.nn.TripletMarginWithDistanceLoss(swap=True)(*v),
        lambda *v: torch.nn.TripletMarginWithDistanceLoss(swap=True)(*v), a, p, n)
    dist_c = lambda u, v: 1 - ct.nn.functional.cosine_similarity(u, v)  # noqa: E731
    dist_t = lambda u, v: 1 - torch.nn.functional.cosine_similarity(u, v)  # noqa: E731
    run(lambda *v: ct.nn.TripletMarginWithDistanceLoss(distance_function=dist_c, margin=0.5, reduction="none")(*v),
        lambda *v: torch.nn.TripletMarginWithDistanceLoss(distance_function=dist_t, margin=0.5, reduction="none")(*v),
        a, p, n)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        ct.nn.TripletMarginWithDistanceLoss(margin=0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_loss(reduction, concat):
    T, N, C = 12, 3, 5
    logits = rs.randn(T, N, C)
    il, tl = [12, 9, 10], [4, 3, 0]
    tg = np.array([[1, 2, 2, 3], [4, 1, 1, 0], [0, 0, 0, 0]])
    tgt = np.concatenate([tg[i, :tl[i]] for i in range(N)]) if concat else tg

    def f(lib, x):
        return lib.nn.CTCLoss(reduction=reduction)(x.log_softmax(2), lib.tensor(tgt), lib.tensor(il), lib.tensor(tl))
    run(lambda x: f(ct, x), lambda x: f(torch, x), logits)
    # gradient w.r.t. log_probs as a leaf follows torch's convention too
    run(lambda x: ct.nn.functional.ctc_loss(x, ct.tensor(tgt), il, tl, reduction=reduction),
        lambda x: torch.nn.functional.ctc_loss(x, torch.tensor(tgt), il, tl, reduction=reduction),
        np.log(np.exp(logits) / np.exp(logits).sum(2, keepdims=True)))


def test_ctc_impossible_and_zero_infinity():
    lp = torch.randn(3, 1, 4).log_softmax(2).detach().numpy()
    args = ([[1, 1, 1]], [3], [3])
    for zi in (False, True):
        a = ct.nn.functional.ctc_loss(ct.tensor(lp), ct.tensor(args[0]), args[1], args[2], zero_infinity=zi,
                                      reduction="sum")
        b = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(args[0]), args[1], args[2],
                                         zero_infinity=zi, reduction="sum")
        assert a.item() == b.item()


def test_adaptive_log_softmax():
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], div_value=2.0)
    cm = ct.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], div_value=2.0)
    assert repr(cm) == repr(tm)
    copy_params(tm, cm)
    x = rs.randn(6, 8).astype(np.float32)
    y = np.array([0, 19, 7, 3, 12, 5])
    oa, ob = cm(ct.tensor(x), ct.tensor(y)), tm(torch.tensor(x), torch.tensor(y))
    close(oa.output, ob.output)
    close(oa.loss, ob.loss)
    oa.loss.backward()
    ob.loss.backward()
    close(cm.tail[1][0].weight.grad, tm.tail[1][0].weight.grad)
    close(cm.log_prob(ct.tensor(x)), tm.log_prob(torch.tensor(x)))
    np.testing.assert_array_equal(cm.predict(ct.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode, padding_mode, align):
    x = rs.randn(2, 3, 5, 6)
    grid = rs.uniform(-1.4, 1.4, (2, 4, 7, 2))
    run(lambda a, g: ct.nn.functional.grid_sample(a, g, mode, padding_mode, align),
        lambda a, g: torch.nn.functional.grid_sample(a, g, mode, padding_mode, align), x, grid)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    theta = rs.randn(2, 2, 3)
    run(lambda t: ct.nn.functional.affine_grid(t, (2, 3, 4, 5), align),
        lambda t: torch.nn.functional.affine_grid(t, (2, 3, 4, 5), align), theta)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices"):
        ct.nn.functional.affine_grid(ct.zeros(2, 3, 3), (2, 3, 4, 5), align)


def test_grid_sample_default_align_warning_is_torchs():
    """affine_grid and grid_sample warn with one text (the spatial transformer tutorial prints it once)"""
    got = []
    for lib in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 3, 3))
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 3, 3), g)
        got.append([str(x.message) for x in w])
    assert got[0] == got[1] and len(got[0]) == 2 and got[0][0] == got[0][1]


def test_multi_head_attention_forward_and_sync_bn():
    tm = torch.nn.MultiheadAttention(8, 2)
    q = rs.randn(5, 3, 8).astype(np.float32)
    kw = dict(training=False, need_weights=True)
    args = lambda lib, m, x: (x, x, x, 8, 2, lib.tensor(m.in_proj_weight.detach().numpy()),  # noqa: E731
                              lib.tensor(m.in_proj_bias.detach().numpy()), None, None, False, 0.0,
                              lib.tensor(m.out_proj.weight.detach().numpy()),
                              lib.tensor(m.out_proj.bias.detach().numpy()))
    oa, wa = ct.nn.functional.multi_head_attention_forward(*args(ct, tm, ct.tensor(q)), **kw)
    ob, wb = torch.nn.functional.multi_head_attention_forward(*args(torch, tm, torch.tensor(q)), **kw)
    close(oa, ob)
    close(wa, wb)
    seq_t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.BatchNorm2d(3)))
    seq_c = ct.nn.SyncBatchNorm.convert_sync_batchnorm(ct.nn.Sequential(ct.nn.BatchNorm2d(3)))
    assert repr(seq_c) == repr(seq_t)
    close(seq_c(ct.tensor(X4, dtype=ct.float32)), seq_t(torch.tensor(X4, dtype=torch.float32)))


def test_norm_reprs_and_bias_flag():
    for name, kw in [("BatchNorm1d", {}), ("BatchNorm2d", {"bias": False}), ("InstanceNorm2d", {}),
                     ("InstanceNorm2d", {"affine": True, "bias": False}), ("SyncBatchNorm", {})]:
        cm, tm = getattr(ct.nn, name)(3, **kw), getattr(torch.nn, name)(3, **kw)
        assert repr(cm) == repr(tm)
        assert sorted(cm.state_dict()) == sorted(tm.state_dict())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_composite_losses_name_their_graph_node_as_torch(reduction):
    """the tutorials print loss.grad_fn (<BinaryCrossEntropyWithLogitsBackward0 ...>); values and gradients too"""
    x, y = rs.rand(4, 5), (rs.rand(4, 5) > 0.5).astype(np.float64)
    for name in ("binary_cross_entropy_with_logits", "binary_cross_entropy", "mse_loss", "smooth_l1_loss",
                 "huber_loss", "soft_margin_loss"):
        got = []
        for lib in (ct, torch):
            X = lib.tensor(x, requires_grad=True)
            out = getattr(lib.nn.functional, name)(X, lib.tensor(y), reduction=reduction)
            out.sum().backward()
            got.append((type(out.grad_fn).__name__, out.detach().numpy(), X.grad.numpy()))
        assert got[0][0] == got[1][0], name
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12, atol=1e-12)
    assert ct.nn.functional.mse_loss(ct.ones(2), ct.zeros(2)).grad_fn is None


def test_mse_loss_is_one_node_as_torchs():
    """the neural networks tutorial walks loss.grad_fn.next_functions: MseLossBackward0 -> AddmmBackward0 ->
    AccumulateGrad; double backward through it still works"""
    chains = []
    for lib in (ct, torch):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
        f = lib.nn.MSELoss()(net(lib.randn(1, 4)), lib.randn(1, 2)).grad_fn
        chains.append([type(n).__name__ for n in (f, f.next_functions[0][0], f.next_functions[0][0].next_functions[0][0])])
    assert chains[0] == chains[1]
    for red in ("mean", "sum", "none"):
        x, t = (ct.tensor(rs.randn(*s), requires_grad=True) for s in ((2, 3), (2, 3)))
        assert ct.autograd.gradgradcheck(lambda a, b: ct.nn.functional.mse_loss(a, b, reduction=red), (x, t))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        ct.nn.functional.mse_loss(x, t, reduction="bad")


def test_instance_norm_needs_more_than_one_spatial_element():
    """PyTorch-GAN's munit: a multi-scale discriminator's last InstanceNorm sees 1x1 maps; torch's message names
    the spatial size, not batch_norm's per-channel one"""
    for x in (ct.rand(1, 4, 1, 1), ct.rand(2, 4, 1), ct.rand(1, 4, 1, 1, 1)):
        want = "Expected more than 1 spatial element when training, got input size torch.Size(%s)" % list(x.shape)
        with pytest.raises(ValueError) as e:
            ct.nn.functional.instance_norm(x)
        assert str(e.value) == want
        with pytest.raises(ValueError) as t:
            torch.nn.functional.instance_norm(torch.from_numpy(x.numpy()))
        assert str(t.value) == want
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        ct.nn.InstanceNorm2d(4)(ct.rand(1, 4, 1, 1))
    m = ct.nn.InstanceNorm2d(4, track_running_stats=True).eval()   # running stats: no check, as in torch
    assert m(ct.rand(1, 4, 1, 1)).shape == (1, 4, 1, 1)


@pytest.mark.parametrize("kw", [dict(reduce=False), dict(size_average=False), dict(size_average=True, reduce=True)])
def test_legacy_loss_arguments_warn_as_torch(kw):
    """SSD's MultiBoxLoss builds CrossEntropyLoss(reduce=False): torch warns which reduction= to use instead"""
    got = []
    for m in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = m.nn.CrossEntropyLoss(**kw)
            m.nn.functional.mse_loss(m.ones(2), m.zeros(2), **kw)
        got.append((loss.reduction, [(x.category, str(x.message)) for x in w]))
    assert got[0] == got[1] and len(got[0][1]) == 2


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int16", "uint8", "bool", "float16"])
def test_constant_pad_is_one_op_like_torch(dt):
    # F.pad(mode="constant") and torch.constant_pad_nd: one C op (fill, then the input's cropped
    # interior copied in); negative pads crop, grad_fn and gradients as torch's
    a = (rs.randn(2, 3, 5, 6) * 4).astype(dt)
    pads = [(1, 2), (1, 1, 2, 0), (0, 0, 0, 0, 1, 1), (-1, 2, 3, -2), (-1, -2), (2, 1, 1, 1, 1, 1, 1, 1), (-1, -1), ()]
    for p in pads:
        for L in (ct, torch):
            x = L.tensor(a)
            L.r = [L.nn.functional.pad(x, p), L.nn.functional.pad(x.transpose(1, 3), p, value=1),
                   L.constant_pad_nd(x[:, :, ::2], p, 1)]
        for u, v in zip(ct.r, torch.r):
            assert str(u.dtype) == str(v.dtype) and u.is_contiguous()
            np.testing.assert_array_equal(u.numpy(), v.numpy())
    if dt.startswith("float"):
        g = rs.randn(2, 3, 5, 6)
        for p in pads[:5]:
            for L in (ct, torch):
                x = L.tensor(a.astype("float64"), requires_grad=True)
                y = L.nn.functional.pad(x, p, value=2.5)
                (y * L.ones(y.shape, dtype=L.float64).cumsum(-1)).sum().backward()
                L.gr, L.name = x.grad.numpy(), type(y.grad_fn).__name__
            np.testing.assert_array_equal(ct.gr, torch.gr)
            assert ct.name == torch.name == "ConstantPadNdBackward0"
        x = ct.tensor(g[0, 0], requires_grad=True)
        assert ct.autograd.gradcheck(lambda t: ct.nn.functional.pad(t, (1, -2, 2, 1)), (x,))
        assert ct.autograd.gradgradcheck(lambda t: ct.nn.functional.pad(t, (1, -2, 2, 1)) ** 2, (x,))


def _same_error(call):
    msgs = []
    for L in (ct, torch):
        with pytest.raises(Exception) as e:
            call(L)
        msgs.append((type(e.value).__name__, str(e.value)))
    assert msgs[0] == msgs[1]


def test_constant_pad_edges_and_errors_like_torch():
    assert ct.constant_pad_nd(ct.tensor(5.0), []).item() == 5.0
    assert tuple(ct.nn.functional.pad(ct.zeros(0, 3), (1, 1)).shape) == (0, 5)
    assert ct.nn.functional.pad(ct.zeros(2, 3), (1, 0, 1, 0), value=float("nan")).isnan().sum().item() == 6
    assert tuple(ct.nn.functional.pad(ct.zeros(2, 3), (-3, 0)).shape) == (2, 0)
    for call in (lambda L: L.constant_pad_nd(L.zeros(2, 3), [1]),
                 lambda L: L.constant_pad_nd(L.zeros(2, 3), [1, 1, 1, 1, 1, 1]),
                 lambda L: L.constant_pad_nd(L.zeros(2, 3), [-2, -2]),
                 lambda L: L.nn.functional.pad(L.zeros(2, 3, dtype=L.uint8), [1, 1], value=300),
                 lambda L: L.nn.functional.pad(L.zeros(2, 3), [1, 1, 1]),
                 lambda L: L.nn.functional.pad(L.zeros(2, 3), [1, 1, 1, 1, 1, 1])):
        msgs = []
        for L in (ct, torch):
            with pytest.raises(Exception) as e:
                call(L)
            msgs.append((type(e.value).__name__, str(e.value)))
        assert msgs[0] == msgs[1]


def test_kl_div_mean_reduction_warns_as_torch():
    """reduction='mean' (KLDivLoss's default) warns that it is not the KL divergence's batchmean, pointing at the
    caller; batchmean, sum, none and the legacy size_average/reduce do not"""
    rs = np.random.RandomState(0)
    x, t = rs.randn(3, 4), rs.rand(3, 4)
    got = []
    for L in (ct, torch):
        xi, ti = L.tensor(x).log_softmax(1), L.tensor(t).softmax(1)
        calls = [lambda: L.nn.functional.kl_div(xi, ti), lambda: L.nn.KLDivLoss()(xi, ti),
                 lambda: L.nn.functional.kl_div(xi, ti, reduction="batchmean"),
                 lambda: L.nn.KLDivLoss(reduction="sum", log_target=True)(xi, ti.log()),
                 lambda: L.nn.functional.kl_div(xi, ti, size_average=False)]
        row = []
        for call in calls:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                v = call().item()
            row.append((round(v, 12), [(str(m.message), m.category) for m in w], [m.filename for m in w]))
        got.append(row)
    for ours, theirs in zip(*got):
        assert ours[0] == pytest.approx(theirs[0], rel=1e-12)
        assert ours[1] == theirs[1]
    assert got[0][0][2] == [__file__] and len(got[0][1][1]) == 1 and got[0][2][1] == []


def _pad_cases():
    cases = []
    for nd in range(1, 6):
        shape = [2, 3] + [4] * nd
        for mode in ("reflect", "replicate", "circular"):
            for npad in (2, 4, 6, 8):
                pad = tuple((i + 1) % 3 for i in range(npad))
                cases.append((shape, pad, mode, None))
                cases.append((shape, (-1,) + pad[1:], mode, None))
        cases.append((shape, (1, 1), "replicate", 2.0))
        cases.append((shape, (1, 1), "reflect", 0.0))
        cases.append((shape, (5, 0), "circular", None))
        cases.append((shape, (4, 0), "circular", None))
        cases.append((shape, (4, 0), "reflect", None))
        cases.append((shape, (1, 2, 3), "reflect", None))
        cases.append((shape, (1, 1), "bogus", None))
    cases.append(([4], (1, 1), "reflect", None))
    cases.append(([3, 4], (1, 2), "circular", None))
    cases.append(([2, 2, 2, 2, 2, 2], (1, 1, 1, 1, 1, 1), "replicate", None))
    return cases


@pytest.mark.parametrize("shape,pad,mode,value", _pad_cases())
def test_pad_modes_and_their_supported_ranks_like_torch(shape, pad, mode, value):
    """F.pad's reflect/replicate/circular exist for 1-3 padded dims on inputs with or without a batch dim
    (torch's kernels): other combinations are torch's NotImplementedError (its text), a value is refused
    unless 0, circular wraps at most once, unknown modes are refused first; results and gradients as torch's"""
    def call(L):
        x = L.arange(float(np.prod(shape)), dtype=L.float64).reshape(shape).requires_grad_()
        y = L.nn.functional.pad(x, pad, mode=mode, value=value)
        y.pow(2).sum().backward()
        return y.detach(), x.grad
    try:
        want = call(torch)
    except Exception:
        oracle.raises_like(lambda: call(ct), lambda: call(torch))
        return
    got = call(ct)
    oracle.same(got[0], want[0], 1e-12)
    oracle.same(got[1], want[1], 1e-12)


def test_non_constant_pad_ranks_and_value_like_torch():
    """reflect/replicate/circular pad 1, 2 or 3 trailing dims of an input with one or two dims before them;
    other pairings raise torch's NotImplementedError (pad=[1, 1] of a 4-d image used to pad its width), a
    value raises as torch's, an unknown mode is named"""
    for shape, n in (((1, 2, 3, 4), 2), ((3, 4), 4), ((4,), 2), ((1, 1, 2, 3, 4), 2), ((1, 1, 2, 3, 4), 4),
                     ((2, 3, 4), 6), ((1, 2, 3, 4), 8), ((2, 3, 4), 0)):
        for mode in ("reflect", "replicate", "circular"):
            _same_error(lambda L: L.nn.functional.pad(L.zeros(shape), [1] * n, mode=mode))
    _same_error(lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 4), [1, 1, 1, 1], mode="reflect", value=1.0))
    _same_error(lambda L: L.nn.functional.pad(L.zeros(1, 2, 3, 4), [1, 1, 1, 1], mode="foo"))
    for shape, n in (((2, 3, 4), 2), ((2, 3, 4), 4), ((1, 2, 3, 4), 4), ((1, 2, 3, 4), 6), ((1, 1, 2, 3, 4), 6)):
        x = rs.randn(*shape)
        for mode in ("reflect", "replicate", "circular"):
            close(ct.nn.functional.pad(ct.tensor(x), [1, 2, 2, 1, 1, 0][:n], mode=mode, value=0.0),
                  torch.nn.functional.pad(torch.tensor(x), [1, 2, 2, 1, 1, 0][:n], mode=mode, value=0.0))


def _loss_calls(m):
    a, b, y = m.tensor([[0.5, -1.0], [2.0, 0.3]]), m.tensor([[0.1, 0.4], [-0.7, 1.2]]), m.tensor([1.0, -1.0])
    F = m.nn.functional
    return {"poisson_nll_loss": lambda kw: F.poisson_nll_loss(a, b.abs(), **kw),
            "cosine_embedding_loss": lambda kw: F.cosine_embedding_loss(a, b, y, **kw),
            "margin_ranking_loss": lambda kw: F.margin_ranking_loss(a[0], b[0], y, **kw),
            "hinge_embedding_loss": lambda kw: F.hinge_embedding_loss(a, m.tensor([[1.0, -1.0], [-1.0, 1.0]]), **kw),
            "triplet_margin_loss": lambda kw: F.triplet_margin_loss(a, b, b.flip(0), **kw),
            "soft_margin_loss": lambda kw: F.soft_margin_loss(a, m.tensor([[1.0, -1.0], [-1.0, 1.0]]), **kw),
            "multilabel_soft_margin_loss": lambda kw: F.multilabel_soft_margin_loss(a, (b > 0).float(), **kw),
            "PoissonNLLLoss": lambda kw: m.nn.PoissonNLLLoss(**kw)(a, b.abs()),
            "SoftMarginLoss": lambda kw: m.nn.SoftMarginLoss(**kw)(a, m.tensor([[1.0, -1.0], [-1.0, 1.0]]))}


@pytest.mark.parametrize("name", sorted(_loss_calls(ct)))
@pytest.mark.parametrize("kw", [dict(size_average=False), dict(reduce=False), dict(size_average=True)])
def test_every_loss_maps_legacy_size_average_and_reduce_as_torch(name, kw):
    """2017-era code passes size_average=/reduce= to every loss: torch maps them onto reduction= (a sum, or the
    unreduced losses) and warns which reduction to use; the maths must follow, not silently take the mean"""
    got = []
    for m in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = _loss_calls(m)[name](kw)
        got.append((out.detach().numpy(), [(x.category, str(x.message)) for x in w]))
    assert got[0][1] == got[1][1] and len(got[0][1]) == 1
    close(got[0][0], got[1][0])


def test_kl_div_mean_warns_as_torch():
    """reduction='mean' (the default) warns that it divides by the support size too; batchmean and the legacy
    arguments do not"""
    for kw, n in ((dict(), 1), (dict(reduction="batchmean"), 0), (dict(size_average=False), 1)):
        got = []
        for m in (ct, torch):
            x = m.log_softmax(m.tensor([[0.2, 0.5, 0.3]]), 1)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                m.nn.functional.kl_div(x, x.exp(), **kw)
                m.nn.KLDivLoss(**kw)(x, x.exp())
            got.append([(x.category, str(x.message)) for x in w])
        assert got[0] == got[1] and len(got[0]) == 2 * n
