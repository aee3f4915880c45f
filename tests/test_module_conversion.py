"""nn.Module conversions (.double(), .half(), .to(dtype)) keep the Parameter objects, as torch's _apply does;
torch.__future__'s overwrite and swap switches; the default device's context manager. Against torch."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def _linear_with_grad(L):
    m = L.nn.Linear(3, 2)
    m.weight.grad = L.ones(2, 3)
    return m


@pytest.mark.parametrize("convert", ["double", "half", "bfloat16", "to64", "float"])
def test_conversion_keeps_parameter_and_grad_objects(convert):
    def run(L):
        m = _linear_with_grad(L)
        w, g, b = m.weight, m.weight.grad, m.bias
        opt = L.optim.SGD(m.parameters(), lr=0.5)   # built before the conversion, as programs do
        m = m.to(L.float64) if convert == "to64" else getattr(m, convert)()
        res = (m.weight is w, m.weight.grad is g, m.bias is b, str(m.weight.dtype), str(m.weight.grad.dtype),
               type(m.weight).__name__, m.weight.requires_grad, m.weight.is_leaf)
        before = m.weight.detach().double().clone()
        opt.step()   # the optimizer still reaches the (converted) parameter
        moved = bool((m.weight.detach().double() - before).abs().sum() > 0)
        return res + (moved,)
    assert run(ct) == run(torch)


@pytest.mark.parametrize("switch, expect", [
    ("overwrite", (False, False, "torch.float64", "torch.float64", "Parameter", False)),   # new objects
    ("swap", (True, True, "torch.float64", "torch.float64", "Parameter", False))])        # contents swapped in
def test_future_switches(switch, expect):
    def run(L):
        setter = getattr(L.__future__, "set_%s_module_params_on_conversion" % switch)
        setter(True)
        try:
            m = _linear_with_grad(L)
            w, g = m.weight, m.weight.grad
            m.double()
            return (m.weight is w, m.weight.grad is g, str(m.weight.dtype), str(m.weight.grad.dtype),
                    type(m.weight).__name__, m.weight.grad.requires_grad)
        finally:
            setter(False)
    assert run(ct) == run(torch) == expect


def test_conversion_values_and_training_after_double():
    x = np.random.RandomState(0).rand(4, 3)
    tm = torch.nn.Linear(3, 2)
    cm = ct.nn.Linear(3, 2)
    cm.load_state_dict({k: ct.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    outs = []
    for L, m in ((ct, cm), (torch, tm)):
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        m.double()
        m(L.tensor(x)).sum().backward()
        opt.step()
        outs.append(m.weight.detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


def test_has_compatible_shallow_copy_type():
    for L in (ct, torch):
        a = L.randn(2)
        s = L.randn(2, 2).to_sparse()
        assert L._has_compatible_shallow_copy_type(a, a.double())
        assert not L._has_compatible_shallow_copy_type(a, s)
        assert L._has_compatible_shallow_copy_type(s, s)
    oracle.raises_like(lambda: ct._has_compatible_shallow_copy_type(ct.ones(1), 1),
                       lambda: torch._has_compatible_shallow_copy_type(torch.ones(1), 1))
    oracle.raises_like(lambda: ct._has_compatible_shallow_copy_type(1, ct.ones(1)),
                       lambda: torch._has_compatible_shallow_copy_type(1, torch.ones(1)))


def _default_device_sequence(L):
    out = [str(L.get_default_device())]
    with L.device("meta") as d:
        out.append(str(d))
        out.append(str(L.get_default_device()))
        with L.device("cpu"):
            out.append(str(L.get_default_device()))
            out.append(str(L.zeros(1).device))
            with L.device("meta"):
                out.append(str(L.get_default_device()))
                out.append(str(L.zeros(1).device))
            out.append(str(L.get_default_device()))
        out.append(str(L.get_default_device()))
    out.append(str(L.get_default_device()))
    L.set_default_device("meta")
    out.append(str(L.get_default_device()))
    with L.device("cpu"):
        out.append(str(L.get_default_device()))
    out.append(str(L.get_default_device()))
    L.set_default_device(None)
    out.append(str(L.get_default_device()))
    out.append(str(L.zeros(1).device))
    return out


def test_device_contexts_restore_the_previous_default():
    from cthtorch._ops import torch_api
    try:
        assert _default_device_sequence(ct) == _default_device_sequence(torch)
    finally:
        ct.set_default_device(None)
        torch.set_default_device(None)
    assert torch_api._device_state.saved == []


def _default_device_in_threads(L):
    """What a thread started under set_default_device('meta') / `with device('meta')` makes, and the caller."""
    import threading
    out = []

    def probe():
        out.append((str(L.zeros(1).device), str(L.get_default_device())))

    def in_thread():
        t = threading.Thread(target=probe)
        t.start()
        t.join()
    L.set_default_device("meta")
    try:
        in_thread()
        out.append(str(L.zeros(1).device))
    finally:
        L.set_default_device(None)
    with L.device("meta"):
        in_thread()
        out.append(str(L.zeros(1).device))
    return out


def test_default_device_is_per_thread():
    # torch's default device is thread-local: another thread keeps making cpu tensors
    assert _default_device_in_threads(ct) == _default_device_in_threads(torch)


def test_unsupported_default_device_leaves_state_alone():
    with pytest.raises(NotImplementedError, match="only the cpu and meta devices"):
        with ct.device("cuda"):
            pass
    with pytest.raises(NotImplementedError, match="only the cpu and meta devices"):
        ct.set_default_device("cuda:0")
    from cthtorch._ops import torch_api
    assert str(ct.get_default_device()) == "cpu" and torch_api._device_state.saved == []
    with ct.device("cpu"):
        assert str(ct.ones(1).device) == "cpu"
    assert str(ct.get_default_device()) == "cpu"
