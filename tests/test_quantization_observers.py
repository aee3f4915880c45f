"""torch.ao.quantization observers, fake-quantize modules and qconfigs, side by side with torch: the
parameters they compute (bit for bit), their outputs and gradients, their reprs."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore")


def batches(shape=(8, 3, 5)):
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(shape) * s + o).astype(np.float32) for s, o in ((1, 0), (2, 1), (0.5, -3), (3, .2))]


OBSERVERS = [
    ("MinMaxObserver", {}), ("MinMaxObserver", dict(dtype="qint8", qscheme="per_tensor_symmetric")),
    ("MinMaxObserver", dict(quant_min=0, quant_max=127)), ("MinMaxObserver", dict(reduce_range=True)),
    ("MinMaxObserver", dict(dtype="quint8", qscheme="per_tensor_symmetric")),
    ("MovingAverageMinMaxObserver", {}), ("MovingAverageMinMaxObserver", dict(averaging_constant=0.3, dtype="qint8")),
    ("PerChannelMinMaxObserver", dict(ch_axis=1)),
    ("PerChannelMinMaxObserver", dict(dtype="qint8", qscheme="per_channel_symmetric")),
    ("MovingAveragePerChannelMinMaxObserver", dict(ch_axis=2)),
    ("PerChannelMinMaxObserver", dict(qscheme="per_channel_affine_float_qparams")),
    ("HistogramObserver", {}), ("HistogramObserver", dict(reduce_range=True)),
    ("HistogramObserver", dict(dtype="qint8", qscheme="per_tensor_symmetric")),
    ("HistogramObserver", dict(bins=64)),
]


def build(mod, lib, name, kw):
    return getattr(mod, name)(**{a: (getattr(lib, b) if isinstance(b, str) else b) for a, b in kw.items()})


@pytest.mark.parametrize("name,kw", OBSERVERS)
def test_observer_qparams_equal_torch(name, kw):
    oc = build(ct.ao.quantization.observer, ct, name, kw)
    ot = build(torch.ao.quantization.observer, torch, name, kw)
    sc, zc = oc.calculate_qparams()   # before any data: the defaults, with torch's warning
    st, zt = ot.calculate_qparams()
    oracle.same(sc, st)
    oracle.same(zc, zt)
    for d in batches():
        assert oc(ct.tensor(d)) is not None
        ot(torch.tensor(d))
        sc, zc = oc.calculate_qparams()
        st, zt = ot.calculate_qparams()
        np.testing.assert_array_equal(sc.numpy(), st.numpy())
        np.testing.assert_array_equal(zc.numpy(), zt.numpy())
        assert str(sc.dtype) == str(st.dtype) and str(zc.dtype) == str(zt.dtype)
    assert repr(oc) == repr(ot)
    assert set(oc.state_dict()) == set(ot.state_dict())


def test_observer_argument_errors_match_torch():
    obs_c, obs_t = ct.ao.quantization.observer, torch.ao.quantization.observer
    oracle.raises_like(lambda: obs_c.MinMaxObserver(qscheme=ct.per_channel_affine),
                       lambda: obs_t.MinMaxObserver(qscheme=torch.per_channel_affine))
    oracle.raises_like(lambda: obs_c.MinMaxObserver(quant_min=3, quant_max=100),
                       lambda: obs_t.MinMaxObserver(quant_min=3, quant_max=100))
    oracle.raises_like(lambda: obs_c.PerChannelMinMaxObserver(qscheme=ct.per_tensor_affine),
                       lambda: obs_t.PerChannelMinMaxObserver(qscheme=torch.per_tensor_affine))


FAKE_QUANTS = ["default_fake_quant", "default_weight_fake_quant", "default_per_channel_weight_fake_quant",
               "default_fused_act_fake_quant", "default_fused_wt_fake_quant",
               "default_fused_per_channel_wt_fake_quant", "default_histogram_fake_quant"]


@pytest.mark.parametrize("name", FAKE_QUANTS)
def test_fake_quantize_modules_train_as_torch(name):
    fc, ft = getattr(ct.ao.quantization, name)(), getattr(torch.ao.quantization, name)()
    assert repr(fc) == repr(ft)
    for i, d in enumerate(batches((4, 3, 5))):
        if i == 3:   # frozen observer: the last parameters stay
            fc.apply(ct.ao.quantization.disable_observer)
            ft.apply(torch.ao.quantization.disable_observer)
        xc, xt = ct.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
        yc, yt = fc(xc), ft(xt)
        yc.sum().backward()
        yt.sum().backward()
        np.testing.assert_array_equal(yc.detach().numpy(), yt.detach().numpy())
        np.testing.assert_array_equal(xc.grad.numpy(), xt.grad.numpy())
        np.testing.assert_array_equal(fc.scale.numpy(), ft.scale.numpy())
        np.testing.assert_array_equal(fc.zero_point.numpy(), ft.zero_point.numpy())
    assert repr(fc) == repr(ft)
    fc.apply(ct.ao.quantization.disable_fake_quant)
    x = ct.tensor(batches()[0])
    assert fc(x) is x


def test_qconfigs_name_torch_observers():
    qc, qt = ct.ao.quantization, torch.ao.quantization

    def shape(qconfig):
        # (factory class name, its bound arguments) for activation and weight, printed as torch prints them
        def one(f):
            p = getattr(f, "p", None)
            if p is None:
                return (f.__name__, "")
            return (p.func.__name__, str(sorted((k, getattr(v, "__name__", str(v))) for k, v in p.keywords.items())))
        return one(qconfig.activation), one(qconfig.weight)
    for backend in ("x86", "fbgemm", "qnnpack", "onednn"):
        assert shape(qc.get_default_qconfig(backend)) == shape(qt.get_default_qconfig(backend))
        for version in (0, 1):
            assert shape(qc.get_default_qat_qconfig(backend, version)) == shape(qt.get_default_qat_qconfig(backend, version))
    for name in ("default_qconfig", "default_dynamic_qconfig", "default_per_channel_qconfig", "default_qat_qconfig",
                 "float16_dynamic_qconfig", "per_channel_dynamic_qconfig", "default_qat_qconfig_v2"):
        assert shape(getattr(qc, name)) == shape(getattr(qt, name)), name
    oracle.raises_like(lambda: qc.get_default_qconfig("arm"), lambda: qt.get_default_qconfig("arm"))
    oracle.raises_like(lambda: qc.QConfig(activation=qc.MinMaxObserver(), weight=qc.MinMaxObserver),
                       lambda: qt.QConfig(activation=qt.MinMaxObserver(), weight=qt.MinMaxObserver))
    assert ct.quantization.get_default_qconfig is qc.get_default_qconfig
    assert ct.ao.quantization.observer.MinMaxObserver is ct.quantization.MinMaxObserver


def test_torch_quantization_module_paths():
    import importlib
    for name in ("observer", "fake_quantize", "qconfig", "quantize", "stubs", "fuse_modules",
                 "quantization_mappings", "fuser_method_mappings", "quantize_fx", "qconfig_mapping"):
        old = importlib.import_module("cthtorch.quantization." + name)
        new = importlib.import_module("cthtorch.ao.quantization." + name)
        for attr in getattr(new, "__all__", []):
            assert getattr(old, attr) is getattr(new, attr)
    assert ct.quantization.fuse_modules is ct.ao.quantization.fuse_modules   # the function, not the module
    assert ct.quantization.observer.MinMaxObserver is ct.ao.quantization.MinMaxObserver


def test_qconfig_mapping_records_and_fx_says_it_is_missing():
    mapping = ct.ao.quantization.get_default_qconfig_mapping("x86").set_object_type(ct.nn.Linear, None)
    expected = torch.ao.quantization.get_default_qconfig_mapping("x86")
    assert str(mapping.global_qconfig).replace("cthtorch", "torch") == str(expected.global_qconfig)
    assert mapping.object_type_qconfigs[ct.nn.Linear] is None
    again = ct.ao.quantization.QConfigMapping.from_dict(mapping.to_dict())
    assert again.to_dict() == mapping.to_dict()
    from cthtorch.ao.quantization.quantize_fx import prepare_fx
    with pytest.raises(NotImplementedError, match="FX graph-mode"):
        prepare_fx(ct.nn.Linear(2, 2), mapping, (ct.randn(1, 2),))


@pytest.mark.parametrize("expr", [
    "q.get_default_qconfig('fbgemm')", "q.get_default_qconfig('qnnpack')", "q.get_default_qat_qconfig('fbgemm')",
    "q.get_default_qat_qconfig('x86')", "q.default_dynamic_qconfig", "q.float16_dynamic_qconfig",
    "q.default_qconfig", "q.HistogramObserver", "q.FakeQuantize"])
def test_qconfig_and_observer_classes_print_torch_paths(expr):
    assert repr(eval(expr, {"q": ct.ao.quantization})) == repr(eval(expr, {"q": torch.ao.quantization}))


def test_observers_printed_as_torch_still_pickle_as_cthtorch():
    import io
    import pickle

    class MyObserver(ct.ao.quantization.MinMaxObserver):
        pass

    # only cthtorch's own classes take torch's printed path; a user's subclass prints where it lives
    assert repr(MyObserver) == "<class '%s.%s'>" % (__name__, MyObserver.__qualname__)
    obs = ct.ao.quantization.HistogramObserver(reduce_range=True)
    obs(ct.tensor([[0.5, -1.0, 2.0]]))
    fq = ct.ao.quantization.FakeQuantize()
    for m in (obs, fq):
        back = pickle.loads(pickle.dumps(m))
        buf = io.BytesIO()
        ct.save(m, buf)
        buf.seek(0)
        loaded = ct.load(buf, weights_only=False)
        assert type(back) is type(m) and type(loaded) is type(m)
        assert back.state_dict().keys() == loaded.state_dict().keys() == m.state_dict().keys()
        for k, v in m.state_dict().items():
            assert back.state_dict()[k].tolist() == loaded.state_dict()[k].tolist() == v.tolist()
    assert (obs.min_val.item(), obs.max_val.item()) == (-1.0, 2.0)
