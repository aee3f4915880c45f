"""DLPack exchange (torch.from_dlpack, torch.utils.dlpack.to_dlpack, Tensor.__dlpack__/__dlpack_device__) with
numpy and with torch itself: zero copy both ways, strides, dtypes, 0-d, one-use capsules, errors."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like

torch = oracle.require_torch()


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16", "complex64"])
def test_numpy_round_trip_shares_memory(dt):
    a = (np.arange(12) % 2).astype(dt).reshape(3, 4)
    t = ct.from_dlpack(a)
    assert str(t.dtype) == str(torch.from_dlpack(a).dtype) and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == a.ctypes.data
    b = np.from_dlpack(t.t())
    assert b.ctypes.data == a.ctypes.data and b.strides == a.T.strides
    np.testing.assert_array_equal(b, a.T)


def test_exchange_with_torch_and_capsules():
    c = ct.arange(6.0).reshape(2, 3)
    tt = torch.from_dlpack(c)   # torch reads cthtorch's capsule
    tt[0, 0] = 5.0
    assert c[0, 0].item() == 5.0
    back = ct.from_dlpack(torch.arange(4))   # and cthtorch reads torch's
    assert back.tolist() == [0, 1, 2, 3] and back.dtype == ct.int64
    assert ct.from_dlpack(torch.tensor(True)).item() is True and ct.from_dlpack(torch.tensor(True)).dim() == 0
    cap = ct.utils.dlpack.to_dlpack(c)
    assert ct.from_dlpack(cap)[0, 0].item() == 5.0
    raises_like(lambda: ct.from_dlpack(cap), lambda: torch.from_dlpack(_spent(torch)))   # a capsule is used once
    assert c.__dlpack_device__() == torch.ones(1).__dlpack_device__()
    assert ct.utils.dlpack.DLDeviceType.kDLCPU == torch.utils.dlpack.DLDeviceType.kDLCPU == 1


def _spent(m):
    cap = m.utils.dlpack.to_dlpack(m.ones(1))
    m.from_dlpack(cap)
    return cap


def test_dlpack_errors():
    raises_like(lambda: ct.ones(2, requires_grad=True).__dlpack__(), lambda: torch.ones(2, requires_grad=True).__dlpack__())
    raises_like(lambda: ct.from_dlpack(ct.ones(2, requires_grad=True)),
                lambda: torch.from_dlpack(torch.ones(2, requires_grad=True)))
    with pytest.raises(NotImplementedError, match="bfloat16"):
        ct.ones(2, dtype=ct.bfloat16).__dlpack__()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ct.from_dlpack(torch.ones(2))   # no read-only warning


def test_to_dlpack_takes_a_tensor_requiring_grad():
    """to_dlpack exports a tensor requiring grad as its data, as torch's does (__dlpack__ refuses it)"""
    for m in (ct, torch):
        x = m.arange(3.0).requires_grad_()
        y = m.from_dlpack(m.utils.dlpack.to_dlpack(x))
        assert y.tolist() == [0.0, 1.0, 2.0] and not y.requires_grad
