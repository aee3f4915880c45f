"""torch.signal.windows against torch: every window, symmetric and periodic,
float32/float64, the trivial lengths, requires_grad, and the argument errors."""
import pytest

import cthtorch as ct
import oracle
from test_torch_api import same

torch = oracle.require_torch()
W = lambda L: L.signal.windows  # noqa: E731
CALLS = [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 2.5}),
    ("gaussian", {}), ("gaussian", {"std": 0.4}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}), ("kaiser", {}),
    ("kaiser", {"beta": 3.5}), ("nuttall", {}),
]


@pytest.mark.parametrize("name,kw", CALLS, ids=[f"{n}{i}" for i, (n, _) in enumerate(CALLS)])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
def test_window_matches_torch(name, kw, sym, M):
    for dt in ("float32", "float64"):
        c = getattr(W(ct), name)(M, sym=sym, dtype=getattr(ct, dt), **kw)
        t = getattr(W(torch), name)(M, sym=sym, dtype=getattr(torch, dt), **kw)
        same(c, t, 1e-6 if dt == "float32" else 1e-12)
    assert getattr(W(ct), name)(M, sym=sym, **kw).dtype == ct.float32


def test_exponential_center_and_grad():
    same(W(ct).exponential(9, center=2.0, sym=False, dtype=ct.float64),
         W(torch).exponential(9, center=2.0, sym=False, dtype=torch.float64), 1e-12)
    w = W(ct).hann(8, requires_grad=True)
    assert w.requires_grad == W(torch).hann(8, requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [
    lambda L: W(L).hann(-1), lambda L: W(L).hann(5, dtype=L.int64), lambda L: W(L).gaussian(5, std=0.0),
    lambda L: W(L).exponential(5, tau=-1.0), lambda L: W(L).exponential(5, center=1.0),
    lambda L: W(L).kaiser(5, beta=-1.0), lambda L: W(L).general_cosine(5, a=None),
    lambda L: W(L).general_cosine(5, a=0.5), lambda L: W(L).general_cosine(5, a=[]),
    lambda L: W(L).bartlett(5, layout=L.sparse_coo),
])
def test_errors_like_torch(call):
    oracle.raises_like(lambda: call(ct), lambda: call(torch))


def test_namespace():
    import cthtorch.signal.windows as cw
    assert sorted(cw.__all__) == sorted(torch.signal.windows.__all__)
    assert ct.signal.windows is cw
