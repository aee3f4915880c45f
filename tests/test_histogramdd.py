"""torch.histogramdd against torch: int and per-dimension bins, range, tensor edges, weights, density,
batch-shaped input, points on and outside the edges, NaN, errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like, same

torch = oracle.require_torch()


def both(a, dtype="float32"):
    a = np.asarray(a, dtype=dtype)
    return ct.tensor(a), torch.tensor(a)


CASES = [
    dict(bins=[2, 3]), dict(bins=2), dict(bins=(4, 1)), dict(bins=[2, 3], range=[0.0, 2.0, 0.0, 2.0]),
    dict(bins=[2, 3], range=[0.0, 2.0, 0.0, 2.0], density=True), dict(bins=5, density=True),
]


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_histogramdd_int_bins(kw, dt):
    pts = np.random.RandomState(0).randn(50, 2)
    pts[:3] = [[0.0, 1.0], [2.0, 3.0], [3.0, 0.5]]
    c, t = both(pts, dt)
    same(ct.histogramdd(c, **kw), torch.histogramdd(t, **kw), 1e-5 if dt == "float32" else 1e-12)


def test_histogramdd_weights_edges_batch():
    pts = np.random.RandomState(1).rand(4, 6, 3) * 4
    c, t = both(pts, "float64")
    wc, wt = both(np.random.RandomState(2).rand(4, 6), "float64")
    same(ct.histogramdd(c, bins=[2, 3, 4], weight=wc), torch.histogramdd(t, bins=[2, 3, 4], weight=wt), 1e-12)
    ec = [ct.tensor([0.0, 1.0, 4.0], dtype=ct.float64), ct.tensor([0.5, 2.0], dtype=ct.float64),
          ct.tensor([0.0, 1.0, 2.0, 3.0], dtype=ct.float64)]
    et = [torch.tensor(e.tolist(), dtype=torch.float64) for e in ec]
    same(ct.histogramdd(c, bins=ec), torch.histogramdd(t, bins=et), 1e-12)
    same(ct.histogramdd(c, bins=ec, weight=wc, density=True), torch.histogramdd(t, bins=et, weight=wt, density=True),
         1e-12)


def test_histogramdd_edges_of_the_data():
    for pts in ([[1.0, 1.0]] * 3, np.zeros((0, 2)), [[float("inf"), 0.0], [1.0, 2.0]]):
        c, t = both(pts)
        if np.isinf(np.asarray(pts)).any():
            raises_like(lambda: ct.histogramdd(c, bins=2), lambda: torch.histogramdd(t, bins=2))
            same(ct.histogramdd(c, bins=2, range=[0, 1, 0, 2]), torch.histogramdd(t, bins=2, range=[0, 1, 0, 2]))
        else:
            same(ct.histogramdd(c, bins=2), torch.histogramdd(t, bins=2))
    c, t = both([[float("nan"), 1.0], [0.5, 0.5]])   # NaN is dropped when the range is given
    same(ct.histogramdd(c, bins=2, range=[0, 1, 0, 1]), torch.histogramdd(t, bins=2, range=[0, 1, 0, 1]))


def test_histogramdd_errors_and_grad():
    c, t = both([[0.0, 1], [2, 3], [1, 1], [3, 0.5]])
    for kw in (dict(bins=[2, 3, 4]), dict(bins=2, range=[0.0, 1.0]), dict(bins=2, range=[1.0, 0.0, 0, 1]),
               dict(bins=0)):
        raises_like(lambda: ct.histogramdd(c, **kw), lambda: torch.histogramdd(t, **kw))
    raises_like(lambda: ct.histogramdd(c, bins=2, weight=ct.ones(3)),
                lambda: torch.histogramdd(t, bins=2, weight=torch.ones(3)))
    raises_like(lambda: ct.histogramdd(c[0], bins=2), lambda: torch.histogramdd(t[0], bins=2))
    raises_like(lambda: ct.histogramdd(c.int(), bins=2), lambda: torch.histogramdd(t.int(), bins=2))
    raises_like(lambda: ct.histogramdd(ct.tensor([[float("nan"), 1.0]]), bins=2),
                lambda: torch.histogramdd(torch.tensor([[float("nan"), 1.0]]), bins=2))
    c.requires_grad_(), t.requires_grad_()
    h = ct.histogramdd(c, bins=2)
    assert h.hist.requires_grad and all(e.requires_grad for e in h.bin_edges)
    raises_like(lambda: ct.histogramdd(c, bins=2).hist.sum().backward(),
                lambda: torch.histogramdd(t, bins=2).hist.sum().backward())
