"""Eager static quantization and quantization-aware training side by side with torch: fuse_modules,
prepare / calibrate / convert, prepare_qat / train / convert. The converted models print as torch's and
their integer arithmetic (fbgemm's) gives torch's outputs."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore")


def make_static(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(s):
            super().__init__()
            s.quant = lib.ao.quantization.QuantStub()
            s.conv = nn.Conv2d(3, 8, 3, padding=1)
            s.bn = nn.BatchNorm2d(8)
            s.relu = nn.ReLU()
            s.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
            s.relu2 = nn.ReLU()
            s.pool = nn.AdaptiveAvgPool2d(1)
            s.fc = nn.Linear(8, 16)
            s.relu3 = nn.ReLU()
            s.fc2 = nn.Linear(16, 5)
            s.skip = nn.quantized.FloatFunctional()
            s.dequant = lib.ao.quantization.DeQuantStub()

        def forward(s, x):
            x = s.relu(s.bn(s.conv(s.quant(x))))
            y = s.relu2(s.conv2(x))
            y = s.pool(s.skip.add(y, y)).flatten(1)
            return s.dequant(s.fc2(s.relu3(s.fc(y))))
    return M()


def twins(build):
    torch.manual_seed(0)
    mt, mc = build(torch), build(ct)
    with torch.no_grad():
        mt.bn.running_mean.uniform_(-0.5, 0.5)
        mt.bn.running_var.uniform_(0.5, 2)
    mc.load_state_dict({k: ct.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return mt, mc


def images(n, shape, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("backend", ["x86", "qnnpack", None])
def test_post_training_static_quantization_matches_torch(backend):
    mt, mc = twins(make_static)
    calib, (test,) = images(3, (4, 3, 12, 12), 0), images(1, (2, 3, 12, 12), 1)
    results = {}
    for lib, m in ((torch, mt), (ct, mc)):
        aq = lib.ao.quantization
        m.eval()
        m.qconfig = aq.get_default_qconfig(backend) if backend else aq.default_qconfig
        fused = aq.fuse_modules(m, [["conv", "bn", "relu"], ["conv2", "relu2"], ["fc", "relu3"]])
        prepared = aq.prepare(fused)
        for c in calib:
            prepared(lib.tensor(c))
        q = aq.convert(prepared)
        x = lib.tensor(test)
        with torch.no_grad():
            results[lib.__name__] = (q, q(x).numpy(), q.conv(q.quant(x)), fused)
    qc, yc, conv_c, fused_c = results["cthtorch"]
    qt, yt, conv_t, fused_t = results["torch"]
    assert repr(fused_c) == repr(fused_t)
    # the observers' parameters are torch's; the last layer's may differ in the float32 last bit (its
    # calibration input went through float matmuls), so its line is compared without its scale digits
    lines_c, lines_t = repr(qc).split("\n"), repr(qt).split("\n")
    for a, b in zip(lines_c, lines_t):
        if "(fc2)" in a:
            a, b = a.split("scale=")[0], b.split("scale=")[0]
        assert a == b
    assert (conv_c.q_scale(), conv_c.q_zero_point()) == (conv_t.q_scale(), conv_t.q_zero_point())
    ints_c, ints_t = conv_c.int_repr().numpy(), conv_t.int_repr().numpy()
    if backend == "qnnpack":
        # 8-bit activations on torch's x86 engine: fbgemm sums uint8*int8 pairs in saturating int16
        # (why torch reduces the range there); cthtorch's sums are exact, so rare elements differ
        assert (ints_c != ints_t).mean() < 0.01
        np.testing.assert_allclose(yc, yt, atol=0.1)
    else:
        np.testing.assert_array_equal(ints_c, ints_t)
        # one quantization step of the output layer at most
        np.testing.assert_allclose(yc, yt, atol=1.01 * qt.fc2.scale)
    assert type(qc.conv).__module__ == "cthtorch.ao.nn.intrinsic.quantized.modules"
    assert set(qc.state_dict()) == set(qt.state_dict())


def test_quantization_aware_training_matches_torch():
    mt, mc = twins(make_static)
    batches = images(4, (4, 3, 12, 12), 2)
    labels = [np.random.default_rng(i).integers(0, 5, 4) for i in range(4)]
    (test,) = images(1, (2, 3, 12, 12), 3)
    results = {}
    for lib, m in ((torch, mt), (ct, mc)):
        aq = lib.ao.quantization
        fused = aq.fuse_modules_qat(m.train(), [["conv", "bn", "relu"], ["conv2", "relu2"], ["fc", "relu3"]])
        fused.qconfig = aq.get_default_qat_qconfig("x86")
        prepared = aq.prepare_qat(fused.train())
        opt = lib.optim.SGD(prepared.parameters(), lr=0.1)
        losses = []
        for x, y in zip(batches, labels):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(prepared(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        prepared.apply(aq.disable_observer)
        prepared.eval()
        q = aq.convert(prepared)
        # the module tree (the float observers' statistics differ in float32 last bits: conv sums)
        tree = [(name, type(mod).__name__) for name, mod in prepared.named_modules()]
        results[lib.__name__] = (tree, losses, q(lib.tensor(test)).detach().numpy(),
                                 [type(mod).__name__ for mod in q.modules()])
    rc, rt = results["cthtorch"], results["torch"]
    assert rc[0] == rt[0] and rc[3] == rt[3]
    np.testing.assert_allclose(rc[1], rt[1], rtol=1e-5)
    np.testing.assert_allclose(rc[2], rt[2], atol=0.01)


def test_fuse_modules_errors_and_types():
    for lib in (torch, ct):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Linear(4, 4))
        fused = lib.ao.quantization.fuse_modules(m.eval(), ["0", "1", "2"])
        assert type(fused[0]).__name__ == "ConvReLU2d" and type(fused[1]).__name__ == "Identity"
    for lib in (torch, ct):   # the message names the module classes (torch's or cthtorch's)
        with pytest.raises(AssertionError, match="did not find fuser method for: "):
            lib.ao.quantization.fuse_modules(lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(2, 2)), ["0", "1"])


def test_quantized_module_needs_quantized_input():
    qlinear = ct.ao.nn.quantized.Linear(4, 2)
    with pytest.raises(NotImplementedError, match="quantized tensor"):
        qlinear(ct.randn(3, 4))
    assert repr(qlinear) == repr(torch.ao.nn.quantized.Linear(4, 2))


def test_scripting_a_quantized_model_says_it_cannot():
    model = ct.nn.Sequential(ct.ao.quantization.QuantStub(), ct.nn.Linear(4, 2), ct.ao.quantization.DeQuantStub())
    model.qconfig = ct.ao.quantization.default_qconfig
    prepared = ct.ao.quantization.prepare(model.eval())
    prepared(ct.randn(3, 4))
    quantized = ct.ao.quantization.convert(prepared)
    with pytest.raises(NotImplementedError, match="submodule '0'.*TorchScript"):
        ct.jit.script(quantized)
    with pytest.raises(NotImplementedError, match="DynamicQuantizedLinear|Linear"):
        ct.jit.script(ct.ao.quantization.quantize_dynamic(ct.nn.Sequential(ct.nn.Linear(4, 2))))
    ct.jit.script(model)   # the float model still compiles


def test_quantized_norms_and_activations_match_torch():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(lib.ao.quantization.QuantStub(), nn.BatchNorm2d(3), nn.Hardswish(), nn.LeakyReLU(0.1),
                             nn.ELU(), nn.LayerNorm([4, 4]), nn.GroupNorm(1, 3), lib.ao.quantization.DeQuantStub())
    torch.manual_seed(0)
    mt, mc = build(torch), build(ct)
    with torch.no_grad():
        mt[1].running_mean.uniform_(-1, 1)
        mt[1].weight.uniform_(0.5, 2)
    mc.load_state_dict({k: ct.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    (x,) = images(1, (2, 3, 4, 4), 4)
    results = {}
    for lib, m in ((torch, mt), (ct, mc)):
        m.qconfig = lib.ao.quantization.get_default_qconfig("x86")
        prepared = lib.ao.quantization.prepare(m.eval())
        prepared(lib.tensor(x))
        q = lib.ao.quantization.convert(prepared)
        h, layers = q[0](lib.tensor(x)), []
        for k in range(1, 7):
            h = q[k](h)
            layers.append((h.int_repr().numpy(), h.q_scale(), h.q_zero_point()))
        results[lib.__name__] = (repr(q), list(q.state_dict()), layers)
    rc, rt = results["cthtorch"], results["torch"]
    assert rc[0] == rt[0] and rc[1] == rt[1]
    # the observers saw float outputs that may differ from torch's in the last bit, so a scale may be
    # one float32 ulp off and an integer one step off
    for (ic, sc, zc), (it, st, zt) in zip(rc[2], rt[2]):
        assert np.abs(ic.astype(int) - it.astype(int)).max() <= 1
        assert zc == zt and abs(sc - st) <= 1e-6 * st


def test_qfunctional_mul_and_mul_scalar_match_torch():
    # a converted model's FloatFunctional.mul runs QFunctional.mul (it was missing: AttributeError)
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5,)).astype(np.float32) * 4
    out = {}
    for lib in (torch, ct):
        f = lib.ao.nn.quantized.QFunctional()
        f.scale, f.zero_point = 0.037, 61
        qa = lib.quantize_per_tensor(lib.tensor(a), 0.02, 120, lib.quint8)
        qb = lib.quantize_per_tensor(lib.tensor(b), 0.05, 128, lib.quint8)
        sa = lib.quantize_per_tensor(lib.tensor(a), 0.02, -3, lib.qint8)
        res = [f.mul(qa, qb), f.mul(qa, qa)]
        res += [f.mul_scalar(q, y) for q in (qa, sa) for y in (2.5, 0.0, -1.5, 3)]
        out[lib.__name__] = [(r.int_repr().numpy(), r.q_scale(), r.q_zero_point(), str(r.dtype)) for r in res]
    for (ic, sc, zc, dc), (it, st, zt, dt) in zip(out["cthtorch"], out["torch"]):
        np.testing.assert_array_equal(ic, it)
        assert (sc, zc, dc) == (st, zt, dt)


def test_prepare_leaves_dropout_unobserved():
    # torch's prepare() skips nn.Dropout children (its quantized twin needs no parameters)
    reprs = []
    for lib in (torch, ct):
        m = lib.nn.Sequential(lib.ao.quantization.QuantStub(), lib.nn.Linear(4, 4), lib.nn.Dropout(0.2),
                              lib.ao.quantization.DeQuantStub()).eval()
        m.qconfig = lib.ao.quantization.default_qconfig
        p = lib.ao.quantization.prepare(m)
        reprs.append((list(p.state_dict()), hasattr(p[2], "activation_post_process")))
    assert reprs[0] == reprs[1]


def test_prepare_qat_gives_known_range_activations_fixed_fake_quant():
    # in training mode torch gives Sigmoid / Hardsigmoid / Softmax / Tanh children fixed-parameter fake
    # quantization (their output range is known); they had no observer, so QAT trained on other numbers
    def build(lib):
        nn = lib.nn
        return nn.Sequential(lib.ao.quantization.QuantStub(), nn.Linear(6, 6), nn.Sigmoid(), nn.Linear(6, 6),
                             nn.Tanh(), nn.Linear(6, 4), nn.Softmax(dim=1), nn.Hardsigmoid(),
                             lib.ao.quantization.DeQuantStub())
    torch.manual_seed(0)
    mt, mc = build(torch), build(ct)
    mc.load_state_dict({k: ct.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    (x,) = images(1, (5, 6), 3)
    out = {}
    for lib, m in ((torch, mt), (ct, mc)):
        m.train()
        m.qconfig = lib.ao.quantization.get_default_qat_qconfig("x86")
        p = lib.ao.quantization.prepare_qat(m)
        y = p(lib.tensor(x))
        kinds = [(name, type(mod).__name__) for name, mod in p.named_modules()]
        out[lib.__name__] = (kinds, list(p.state_dict()), y.detach().numpy())
    assert out["cthtorch"][:2] == out["torch"][:2]
    # the linear layers' float32 sums may differ in the last bit: one step of the last fixed grid at most
    np.testing.assert_allclose(out["cthtorch"][2], out["torch"][2], atol=1.01 / 256)


def test_convert_with_a_users_mapping_class():
    # a mapping entry whose from_float takes only the module (as older user code writes it) raised TypeError
    out = []
    for lib in (torch, ct):
        class Doubled(lib.nn.Module):
            def __init__(s, lin):
                super().__init__()
                s.lin = lin

            def forward(s, x):
                return s.lin(x) * 2

            @classmethod
            def from_float(cls, mod):
                return cls(lib.nn.Linear(mod.in_features, mod.out_features))
        m = lib.nn.Sequential(lib.nn.Linear(3, 2))
        m[0].qconfig = lib.ao.quantization.default_qconfig
        q = lib.ao.quantization.convert(m, mapping={lib.nn.Linear: Doubled})
        out.append([type(x).__name__ for x in q.modules()])
    assert out[0] == ["Sequential", "Doubled", "Linear"]
    assert out[0] == out[1]
