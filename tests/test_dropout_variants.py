"""Dropout's identity cases and the channel-wise variants against torch:
the same object back when nothing is dropped, the same masks from the same
seed (dropout2d reads 3-D input as (N, C, L), as torch 2.13 does), the same
warnings and errors, and in-place forms that keep autograd history."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


@pytest.mark.parametrize("case", [dict(p=0.5, training=False), dict(p=0.0, training=True)])
def test_dropout_returns_its_input_when_nothing_drops(case):
    for L in (torch, ct):
        x = L.ones(4, 3, requires_grad=True)
        assert L.nn.functional.dropout(x, **case) is x
        assert L.nn.functional.dropout2d(L.ones(2, 3, 4, 4), **case).shape == (2, 3, 4, 4)
    m = ct.nn.Dropout(0.3).eval()
    x = ct.ones(5)
    assert m(x) is x
    ct.manual_seed(0)
    torch.manual_seed(0)
    ct.nn.functional.dropout(ct.ones(100), 0.0)   # draws nothing, as torch
    np.testing.assert_array_equal(ct.rand(4).numpy(), torch.rand(4).numpy())


@pytest.mark.parametrize("fn,shape", [("dropout1d", (2, 3, 5)), ("dropout1d", (3, 5)), ("dropout2d", (2, 3, 4, 4)),
                                      ("dropout2d", (3, 4, 4)), ("dropout3d", (2, 3, 2, 2, 2)),
                                      ("dropout3d", (3, 2, 2, 2))])
@pytest.mark.parametrize("inplace", [False, True])
def test_channel_dropout_masks_match_torch(fn, shape, inplace):
    out = []
    for L in (torch, ct):
        L.manual_seed(7)
        x = L.ones(*shape)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = getattr(L.nn.functional, fn)(x, 0.5, True, inplace)
        out.append((r.numpy().copy(), x.numpy().copy(), [str(m.message) for m in w]))
    for a, b in zip(out[0], out[1]):
        if isinstance(a, list):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


def test_channel_dropout_errors_and_inplace_history():
    for L in (torch, ct):
        with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
            L.nn.functional.dropout1d(L.ones(2, 3, 4, 5))
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            L.nn.functional.dropout3d(L.ones(2, 3, 2, 2, 2), 1.5)
    x = ct.ones(2, 3, 4, 4, requires_grad=True)
    y = x * 2
    ct.manual_seed(1)
    ct.nn.functional.dropout2d(y, 0.5, True, True).sum().backward()
    tx = torch.ones(2, 3, 4, 4, requires_grad=True)
    ty = tx * 2
    torch.manual_seed(1)
    torch.nn.functional.dropout2d(ty, 0.5, True, True).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
