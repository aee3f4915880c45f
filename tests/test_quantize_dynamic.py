"""torch.ao.quantization.quantize_dynamic side by side with torch: module types and reprs, outputs (fbgemm's
integer arithmetic reproduced), state_dict keys and saved size, per-channel and float16 variants."""
import io

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore")


def twin(build):
    """The same float model in torch and cthtorch (torch's initial weights copied)."""
    torch.manual_seed(0)
    mt, mc = build(torch), build(ct)
    mc.load_state_dict({k: ct.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return mt.eval(), mc.eval()


def data(shape, seed=0, scale=2.0, shift=0.3):
    a = (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)
    return ct.tensor(a), torch.tensor(a)


def run(mc, mt, xc, xt):
    with torch.no_grad():
        rt = mt(xt)
    rc = mc(xc)
    return rc, rt


@pytest.mark.parametrize("shape", [(16, 64), (5, 3, 64), (1, 64)])
def test_dynamic_linear_equals_torch(shape):
    mt, mc = twin(lambda lib: lib.nn.Sequential(lib.nn.Linear(64, 32), lib.nn.ReLU(), lib.nn.Linear(32, 8)))
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.Linear}, dtype=torch.qint8)
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.Linear}, dtype=ct.qint8)
    assert repr(qc) == repr(qt)
    assert type(qc[0]).__name__ == "Linear" and type(qc[0]).__module__ == "cthtorch.ao.nn.quantized.dynamic.modules.linear"
    assert type(qc[0]) is ct.nn.quantized.dynamic.Linear is ct.ao.nn.quantized.dynamic.Linear
    xc, xt = data(shape)
    rc, rt = run(qc, qt, xc, xt)
    # fbgemm's integer GEMM and fused requantization are reproduced: equal to the last bit
    np.testing.assert_array_equal(rc.detach().numpy(), rt.numpy())
    w_c, b_c = qc[0]._packed_params._weight_bias()
    w_t, b_t = qt[0]._packed_params._weight_bias()
    np.testing.assert_array_equal(w_c.int_repr().numpy(), w_t.int_repr().numpy())
    assert w_c.q_scale() == w_t.q_scale() and repr(qc[0].weight()) == repr(qt[0].weight())
    assert mc[0].weight.dtype == ct.float32 and not hasattr(mc[0], "qconfig")   # not in place: a copy


def test_dynamic_linear_per_channel_and_float16():
    mt, mc = twin(lambda lib: lib.nn.Sequential(lib.nn.Linear(40, 24)))
    xc, xt = data((6, 40), seed=1)
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig})
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.Linear: ct.ao.quantization.per_channel_dynamic_qconfig})
    assert repr(qc) == repr(qt)
    rc, rt = run(qc, qt, xc, xt)
    np.testing.assert_array_equal(rc.detach().numpy(), rt.numpy())
    qt = torch.ao.quantization.quantize_dynamic(mt, dtype=torch.float16)
    qc = ct.ao.quantization.quantize_dynamic(mc, dtype=ct.float16)
    assert repr(qc) == repr(qt)
    rc, rt = run(qc, qt, xc, xt)
    np.testing.assert_allclose(rc.detach().numpy(), rt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(batch_first=True), dict(bidirectional=True)])
def test_dynamic_lstm_matches_torch(kw):
    mt, mc = twin(lambda lib: lib.nn.LSTM(12, 16, **kw))
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.LSTM, torch.nn.Linear}, dtype=torch.qint8)
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.LSTM, ct.nn.Linear}, dtype=ct.qint8)
    assert repr(qc) == repr(qt)
    xc, xt = data((5, 3, 12), seed=2)
    rc, rt = run(qc, qt, xc, xt)
    # the gate matmuls are torch's to the bit; sigmoid/tanh may differ in the last bit, and such a
    # difference can move one element of a later step's hidden state by a quantization step
    for a, b in zip([rc[0], *rc[1]], [rt[0], *rt[1]]):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), atol=1e-5)


def test_state_dict_is_smaller_and_loads_back():
    build = (lambda lib: lib.nn.Sequential(lib.nn.Linear(256, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10)))
    mt, mc = twin(build)
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.Linear}, dtype=ct.qint8)
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.Linear}, dtype=torch.qint8)
    assert list(qc.state_dict()) == list(qt.state_dict())
    sizes = {}
    for name, lib, model in (("float", ct, mc), ("quant", ct, qc), ("torch", torch, qt)):
        buf = io.BytesIO()
        lib.save(model.state_dict(), buf)
        sizes[name] = len(buf.getvalue())
    assert sizes["quant"] < sizes["float"] / 3
    assert abs(sizes["quant"] - sizes["torch"]) < 0.1 * sizes["torch"]
    # a fresh quantized model takes the saved state
    fresh = ct.ao.quantization.quantize_dynamic(build(ct), {ct.nn.Linear}, dtype=ct.qint8)
    fresh.load_state_dict(qc.state_dict())
    xc, _ = data((4, 256))
    np.testing.assert_array_equal(fresh(xc).detach().numpy(), qc(xc).detach().numpy())


def test_quantized_engine_switch_and_qnnpack_numerics():
    assert ct.backends.quantized.engine == torch.backends.quantized.engine == "x86"
    assert sorted(ct.backends.quantized.supported_engines) == sorted(torch.backends.quantized.supported_engines)
    oracle.raises_like(lambda: setattr(ct.backends.quantized, "engine", "foo"),
                       lambda: setattr(torch.backends.quantized, "engine", "foo"))
    mt, mc = twin(lambda lib: lib.nn.Sequential(lib.nn.Linear(64, 32)))
    xc, xt = data((16, 64))
    try:
        torch.backends.quantized.engine = ct.backends.quantized.engine = "qnnpack"
        qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.Linear}, dtype=torch.qint8)
        qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.Linear}, dtype=ct.qint8)
        rc, rt = run(qc, qt, xc, xt)
    finally:
        torch.backends.quantized.engine = ct.backends.quantized.engine = "x86"
    np.testing.assert_array_equal(rc.detach().numpy(), rt.numpy())


@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(batch_first=True, bidirectional=True)])
def test_dynamic_gru_matches_torch(kw):
    mt, mc = twin(lambda lib: lib.nn.GRU(12, 16, **kw))
    qt = torch.ao.quantization.quantize_dynamic(mt, {torch.nn.GRU}, dtype=torch.qint8)
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.GRU}, dtype=ct.qint8)
    assert repr(qc) == repr(qt)
    xc, xt = data((5, 3, 12), seed=4)
    rc, rt = run(qc, qt, xc, xt)
    for a, b in zip(rc, rt):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), atol=1e-5)


def test_dynamic_cells_match_torch():
    def build(lib):
        return lib.nn.ModuleList([lib.nn.LSTMCell(6, 5), lib.nn.GRUCell(6, 5), lib.nn.RNNCell(6, 5),
                                  lib.nn.RNNCell(6, 5, nonlinearity="relu")])
    mt, mc = twin(build)
    spec_t = {torch.nn.LSTMCell, torch.nn.GRUCell, torch.nn.RNNCell}
    qt = torch.ao.quantization.quantize_dynamic(mt, spec_t, dtype=torch.qint8)
    qc = ct.ao.quantization.quantize_dynamic(mc, {ct.nn.LSTMCell, ct.nn.GRUCell, ct.nn.RNNCell}, dtype=ct.qint8)
    assert repr(qc) == repr(qt)
    assert list(qc.state_dict()) == list(qt.state_dict())
    xc, xt = data((3, 6), seed=5)
    hc, ht = data((3, 5), seed=6)
    with torch.no_grad():
        outs_t = [qt[0](xt, (ht, ht)), qt[1](xt, ht), qt[2](xt, ht), qt[3](xt), qt[0](xt)]
    outs_c = [qc[0](xc, (hc, hc)), qc[1](xc, hc), qc[2](xc, hc), qc[3](xc), qc[0](xc)]
    oracle.raises_like(lambda: qc[1](xc[0]), lambda: qt[1](xt[0]))
    for a, b in zip(outs_c, outs_t):
        for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_allclose(u.detach().numpy(), v.numpy(), atol=1e-6)


@pytest.mark.parametrize("dtype", ["qint8", "float16"])
def test_dynamic_layers_refuse_what_torch_kernels_refuse(dtype):
    # fbgemm's dynamic linear takes float32 inputs of two or more dimensions; a 1-d or double input
    # gave a result here
    def layers(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.LSTM(4, 3), L.nn.GRUCell(4, 3))
        return L.ao.quantization.quantize_dynamic(m, {L.nn.Linear, L.nn.LSTM, L.nn.GRUCell},
                                                  dtype=getattr(L, dtype))
    mc, mt = layers(ct), layers(torch)
    cases = [lambda L, m: m[0](L.ones(4)), lambda L, m: m[0](L.ones(2, 4, dtype=L.float64)),
             lambda L, m: m[0](L.ones(2, 4, dtype=L.float16)),
             lambda L, m: m[1](L.ones(2, 1, 4, dtype=L.float64)), lambda L, m: m[2](L.ones(2, 4, dtype=L.float64))]
    for case in cases:
        oracle.raises_like(lambda: case(ct, mc), lambda: case(torch, mt))
