"""Convolution and batch norm on the GPU through cuDNN (src/THC/THCCudnn.cu),
and libTHC's own kernels where cuDNN is switched off or declines: values and
gradients against cthtorch's CPU path. torch.backends.cudnn's flags (enabled,
benchmark, deterministic, allow_tf32) are checked here without a GPU too: they
reach libATen, and their defaults and API follow PyTorch's."""
import pytest

import cthtorch as torch
import cthtorch.nn as nn
import cthtorch.nn.functional as F
from cthtorch import _C
from cthtorch.backends import cudnn

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.fixture(autouse=True)
def restore_flags():
    """every test starts from torch's defaults and leaves them so"""
    cudnn.set_flags(True, False, 10, False, True)
    torch.use_deterministic_algorithms(False)
    yield
    cudnn.set_flags(True, False, 10, False, True)
    torch.use_deterministic_algorithms(False)


def c_flags():
    return dict(zip(("enabled", "benchmark", "deterministic", "allow_tf32"), _C._cuda._cudnn_flags()))


# ---------------------------------------------------------------- flags (no GPU needed)
def test_flag_defaults_match_torch():
    import oracle
    t = oracle.require_torch()
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
        assert getattr(cudnn, name) == getattr(t.backends.cudnn, name), name
    assert c_flags() == {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
    assert {str(d) for d in cudnn.CUDNN_TENSOR_DTYPES} == {str(d) for d in t.backends.cudnn.CUDNN_TENSOR_DTYPES}


def test_flags_reach_libaten():
    cudnn.benchmark = True
    cudnn.allow_tf32 = False
    assert c_flags() == {"enabled": True, "benchmark": True, "deterministic": False, "allow_tf32": False}
    assert cudnn.benchmark is True and cudnn.allow_tf32 is False
    cudnn.enabled = 0          # stored as a bool, as torch's setter
    assert cudnn.enabled is False and c_flags()["enabled"] is False
    cudnn.deterministic = True
    assert c_flags()["deterministic"] is True


def test_flags_context_and_set_flags():
    import oracle
    t = oracle.require_torch()
    with cudnn.flags():                     # torch's defaults for the block: enabled=False
        assert c_flags()["enabled"] is False and cudnn.enabled is False
        with cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):
            assert c_flags() == {"enabled": True, "benchmark": True, "deterministic": True, "allow_tf32": False}
        assert c_flags()["enabled"] is False and c_flags()["benchmark"] is False
    assert c_flags() == {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
    with t.backends.cudnn.flags():
        assert t.backends.cudnn.enabled is False   # the oracle agrees on flags()' defaults
    orig = cudnn.set_flags(_benchmark=True)
    assert orig[0] is True and orig[1] is False and cudnn.benchmark is True and cudnn.enabled is True
    cudnn.set_flags(*orig)
    assert cudnn.benchmark is False


def test_deterministic_algorithms_reach_cudnn():
    # as PyTorch: cuDNN keeps to deterministic algorithms under either switch,
    # and torch.backends.cudnn.deterministic itself stays as set
    torch.use_deterministic_algorithms(True)
    assert c_flags()["deterministic"] is True and cudnn.deterministic is False
    torch.use_deterministic_algorithms(False)
    assert c_flags()["deterministic"] is False
    cudnn.deterministic = True
    torch.use_deterministic_algorithms(False)
    assert c_flags()["deterministic"] is True


def test_availability_and_acceptable():
    x = torch.randn(2, 3)
    assert cudnn.is_acceptable(x) is False          # a CPU tensor
    if not torch.cuda.is_available():
        assert cudnn.is_available() is False and cudnn.version() is None
        return
    v = cudnn.version()
    assert isinstance(v, int) and v >= 90000 and cudnn.is_available()
    xg = x.cuda()
    assert cudnn.is_acceptable(xg) is True
    assert cudnn.is_acceptable(xg.long()) is False
    cudnn.enabled = False
    assert cudnn.is_acceptable(xg) is False


# ---------------------------------------------------------------- convolution on the GPU
def rel_err(gpu_t, cpu_t, floor=1e-30):
    """max |difference| over max |reference| (convolutions sum many products), the
    reference's scale taken as at least floor"""
    g, c = gpu_t.detach().cpu().double(), cpu_t.detach().double()
    assert g.shape == c.shape, (g.shape, c.shape)
    return ((g - c).abs().max() / c.abs().max().clamp(min=floor)).item()


def counts():
    return _C._cuda._cudnn_counts()


CASES = [  # (N, C, H, W), (O, C/G, KH, KW), stride, padding, dilation, groups, bias
    ((2, 3, 9, 10), (4, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 4, 11, 8), (6, 2, 3, 2), 2, (1, 0), 1, 2, False),
    ((1, 6, 12, 12), (6, 1, 3, 3), 1, 2, 2, 6, True),           # depthwise, dilated
    ((3, 8, 7, 7), (5, 8, 1, 1), 1, 0, 1, 1, False),             # 1x1
    ((2, 3, 16, 16), (8, 3, 7, 7), 2, 3, 1, 1, False),           # ResNet's stem, smaller
    ((2, 4, 10, 9), (4, 2, 3, 3), (2, 1), (0, 2), (1, 2), 2, True),
]


def run_conv(case, dt, device, seed=0):
    xs, ws, stride, padding, dilation, groups, has_bias = case
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*xs, generator=g, dtype=torch.float64)
    w = torch.randn(*ws, generator=g, dtype=torch.float64)
    b = torch.randn(ws[0], generator=g, dtype=torch.float64) if has_bias else None
    leaves = [t.to(dt).to(device).requires_grad_() for t in ([x, w] + ([b] if has_bias else []))]
    y = F.conv2d(leaves[0], leaves[1], leaves[2] if has_bias else None, stride, padding, dilation, groups)
    go = torch.randn(y.shape, generator=g, dtype=torch.float64).to(dt).to(device)
    y.backward(go)
    return [y] + [t.grad for t in leaves]


@gpu
@pytest.mark.parametrize("case", CASES)
# float32 without TF32 still allows Winograd/FFT algorithms, whose rounding is a few 1e-6 of the largest value
@pytest.mark.parametrize("dt,tf32,tol", [(torch.float64, False, 1e-12), (torch.float32, False, 5e-5),
                                         (torch.float32, True, 5e-3), (torch.float16, False, 5e-3),
                                         (torch.bfloat16, False, 3e-2)])
def test_conv_matches_cpu(case, dt, tf32, tol):
    cudnn.allow_tf32 = tf32
    ref = run_conv(case, torch.float64, "cpu")       # the same (rounded) operands, in float64 on the CPU
    before = counts()
    out = run_conv(case, dt, "cuda")
    assert counts()[0] >= before[0] + 3, "forward, grad input and grad weight all go through cuDNN"
    for o, r in zip(out, ref):
        assert o.is_cuda and o.dtype == dt
        assert rel_err(o, r) < tol, (rel_err(o, r), dt)


@gpu
@pytest.mark.parametrize("case", CASES)
def test_conv_fallback_when_disabled(case):
    """cudnn.enabled = False forces libTHC's im2col path: the same values, no cuDNN call"""
    ref = run_conv(case, torch.float64, "cpu")
    cudnn.enabled = False
    before = counts()
    out = run_conv(case, torch.float64, "cuda")
    assert counts() == before
    for o, r in zip(out, ref):
        assert rel_err(o, r) < 1e-12


@gpu
@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_conv_benchmark_and_deterministic(dt):
    case = ((4, 16, 20, 20), (32, 16, 3, 3), 1, 1, 1, 1, True)
    ref = run_conv(case, torch.float64, "cpu")
    cudnn.allow_tf32 = False
    cudnn.benchmark = True                # Find*Ex per shape, then the cached choice
    first = run_conv(case, dt, "cuda")
    again = run_conv(case, dt, "cuda")
    tol = 1e-12 if dt == torch.float64 else 5e-5
    for o, a, r in zip(first, again, ref):
        assert rel_err(o, r) < tol and rel_err(a, r) < tol
    cudnn.benchmark = False
    cudnn.deterministic = True
    runs = [run_conv(case, dt, "cuda") for _ in range(3)]
    for o in runs[1:]:
        for a, b in zip(o, runs[0]):
            assert torch.equal(a.cpu(), b.cpu()), "deterministic algorithms give the same bits"
    for o, r in zip(runs[0], ref):
        assert rel_err(o, r) < tol
    cudnn.benchmark = True               # benchmark and deterministic together
    for o, r in zip(run_conv(case, dt, "cuda"), ref):
        assert rel_err(o, r) < tol


@gpu
def test_conv_module_trains_the_same_with_and_without_cudnn():
    def run(enabled):
        cudnn.enabled = enabled
        torch.manual_seed(5)
        m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 3, stride=2),
                          nn.Flatten(), nn.Linear(4 * 7 * 7, 3)).double().cuda()
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        g = torch.Generator().manual_seed(6)
        x, y = torch.randn(6, 3, 16, 16, generator=g, dtype=torch.float64).cuda(), torch.randint(0, 3, (6,), generator=g).cuda()
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    with_cudnn, without = run(True), run(False)
    for a, b in zip(with_cudnn, without):
        assert abs(a - b) < 1e-9, (with_cudnn, without)


# ---------------------------------------------------------------- batch norm on the GPU
def run_bn(shape, dt, device, training, affine=True, seed=1):
    g = torch.Generator().manual_seed(seed)
    C = shape[1]
    x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 2 + 0.5)
    w = torch.rand(C, generator=g, dtype=torch.float64) + 0.5
    b = torch.randn(C, generator=g, dtype=torch.float64)
    rm, rv = torch.randn(C, generator=g, dtype=torch.float64), torch.rand(C, generator=g, dtype=torch.float64) + 0.5
    leaves = [t.to(dt).to(device).requires_grad_() for t in ([x, w, b] if affine else [x])]
    rm, rv = rm.to(dt).to(device), rv.to(dt).to(device)
    y = F.batch_norm(leaves[0], rm, rv, *(leaves[1:] if affine else (None, None)), training=training, momentum=0.2,
                     eps=1e-5)
    go = torch.randn(y.shape, generator=g, dtype=torch.float64).to(dt).to(device)
    y.backward(go)
    return [y, rm, rv] + [t.grad for t in leaves]


BN_SHAPES = [(4, 3, 5, 6), (3, 4, 7), (8, 64, 28, 28), (2, 5, 1, 1)]


@gpu
@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("enabled", [True, False])
def test_batch_norm_matches_cpu(shape, training, enabled):
    """float32 through cuDNN (enabled) or the own multi-block kernels; float64 always the own kernels"""
    cudnn.enabled = enabled
    for dt, tol in ((torch.float32, 5e-5), (torch.float64, 1e-12)):
        ref = run_bn(shape, torch.float64, "cpu", training)
        before = counts()
        out = run_bn(shape, dt, "cuda", training)
        took = counts()[0] - before[0]
        assert took == (2 if enabled and dt == torch.float32 and training else
                        1 if enabled and dt == torch.float32 else 0), (took, dt, training)
        for o, r in zip(out, ref):
            assert o.is_cuda and o.dtype == dt
            # errors relative to the O(1) scale of grad_output and y: with 2 values per channel
            # (2, 5, 1, 1) the input gradient is a ~1e-4 remainder of O(1) terms that cancel, and
            # float32 keeps it only to ~1e-6 absolute (torch's own float32 kernel: 2e-6)
            assert rel_err(o, r, floor=1.0) < tol, (rel_err(o, r, floor=1.0), dt, training)


@gpu
def test_batch_norm_without_affine_or_stats_falls_back():
    """cuDNN needs weight and bias: without them the own kernels run, with the same results"""
    ref = run_bn((4, 6, 9, 9), torch.float64, "cpu", True, affine=False)
    before = counts()
    out = run_bn((4, 6, 9, 9), torch.float32, "cuda", True, affine=False)
    assert counts()[0] == before[0] and counts()[1] > before[1]
    for o, r in zip(out, ref):
        assert rel_err(o, r) < 2e-5
    # track_running_stats=False in training: cuDNN takes it without running stats
    x = torch.randn(4, 6, 9, 9)
    m = nn.BatchNorm2d(6, track_running_stats=False)
    close_y = m(x)
    yg = m.cuda()(x.cuda())
    assert rel_err(yg, close_y) < 2e-5


@gpu
def test_batch_norm_module_running_stats():
    torch.manual_seed(3)
    m = nn.BatchNorm2d(16, momentum=0.3)
    mg = nn.BatchNorm2d(16, momentum=0.3).cuda()
    for i in range(3):
        x = torch.randn(8, 16, 12, 12) * (i + 1) + i
        m(x)
        mg(x.cuda())
    assert int(mg.num_batches_tracked) == 3
    assert rel_err(mg.running_mean, m.running_mean) < 1e-5
    assert rel_err(mg.running_var, m.running_var) < 1e-5
    m.eval()
    mg.eval()
    x = torch.randn(4, 16, 12, 12)
    assert rel_err(mg(x.cuda()), m(x)) < 1e-5
