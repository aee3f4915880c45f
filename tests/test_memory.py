"""The allocator's live-byte count returns to its baseline after the
tensor-making paths run, including the error paths."""
import gc

import numpy as np
import pytest

import cthtorch as ct
from cthtorch import _C


def making_paths():
    a = ct.zeros(3, 4)
    b = ct.ones(4, dtype=ct.int32)
    c = ct.full((2, 2), 3.5)
    d = ct.arange(10).view(2, 5).t().contiguous()
    e = ct.tensor([[1, 2], [3, 4]]).float() * 2 + 1
    f = ct.linspace(0, 1, 5).exp().sum()
    g = ct.eye(3)[1:, ::2].clone()
    h = ct.tensor(np.arange(6.0)).reshape(2, 3).to(ct.float16)
    i = ct.empty_strided((2, 2), (1, 2)).fill_(1)
    j = a.mean(0, keepdim=True) - a
    k = ct.ones(2, requires_grad=True)
    (k * k + 1).sum().backward()
    for bad in (lambda: ct.zeros(-1), lambda: ct.ones(2) + ct.ones(3), lambda: ct.ones(2).view(3),
                lambda: ct.tensor([[1], [2, 3]]), lambda: ct.ones(2, 2)[5], lambda: ct.ones(2).item(),
                lambda: ct.zeros(2, dtype=ct.int64).add_(1.5), lambda: ct.empty(2 ** 62, 4)):
        try:
            bad()
        except (RuntimeError, ValueError, IndexError, TypeError):
            pass
    return [a, b, c, d, e, f, g, h, i, j, k]


def test_no_bytes_leak():
    making_paths()   # warm up caches (interned objects, parsed signatures)
    gc.collect()
    base = _C._live_bytes()
    for _ in range(5):
        keep = making_paths()
        assert _C._live_bytes() > base
        del keep
        gc.collect()
    assert _C._live_bytes() == base


def test_large_blocks_are_reused_and_counted():
    gc.collect()
    base = _C._live_bytes()
    x = ct.empty(1 << 22)          # 16 MiB: a large block
    assert _C._live_bytes() == base + (1 << 24)
    p = x.data_ptr()
    del x
    assert _C._live_bytes() == base
    y = ct.empty(1 << 22)
    # the cached block comes back, already paged in; the ASan build (it carries the
    # canary) caches nothing by design: every block comes from its malloc, which
    # quarantines freed memory so that a use after free is caught, not served
    assert (y.data_ptr() == p) != hasattr(_C, "_asan_canary")
    del y
    _C._empty_cache()
