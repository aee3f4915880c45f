"""var/std/var_mean/std_mean with a correction at or past the number of reduced elements: torch divides by
max(0, N - correction) (nan for 0/0, inf for a spread over no degrees of freedom) and warns once, naming the op,
at the caller's line. Compared with torch 2.13."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()


def run(L, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(L)   # the warning's line is this one
    line = run.__code__.co_firstlineno + 4
    return r, [(x.category, str(x.message).split(" (Triggered")[0], x.lineno == line, x.filename == __file__)
               for x in w]


CASES = [
    ("var c0", lambda L: L.tensor([1., 2.]).var(correction=2)),
    ("var c3", lambda L: L.tensor([1., 2.]).var(correction=3)),
    ("var ones c2", lambda L: L.ones(2).var(correction=2)),
    ("std 1", lambda L: L.tensor([3.]).std()),
    ("std c5", lambda L: L.tensor([1., 4.]).std(correction=5)),
    ("var dim", lambda L: L.ones(3, 1).var(1)),
    ("var unbiased", lambda L: L.ones(1, 3).var(0, True)),
    ("torch.var", lambda L: L.var(L.tensor([2.]))),
    ("torch.std dim", lambda L: L.std(L.tensor([[2., 5.]]), 0)),
    ("var empty", lambda L: L.ones(0).var()),
    ("var f64", lambda L: L.tensor([1., 7.], dtype=L.float64).var(correction=2)),
    ("var_mean", lambda L: L.var_mean(L.tensor([1.]))[0]),
    ("std_mean", lambda L: L.std_mean(L.tensor([[1.], [2.]]), 1)[0]),
    ("var_mean grad", lambda L: L.var_mean(L.tensor([1.], requires_grad=True))[0]),
    ("fine", lambda L: L.tensor([1., 2., 4.]).var(correction=2)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_degrees_of_freedom_as_torch(name, fn):
    (c, cw), (t, tw) = run(ct, fn), run(torch, fn)
    np.testing.assert_array_equal(np.asarray(c.tolist()), np.asarray(t.tolist()))
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert [(w[0].__name__,) + w[1:] for w in cw] == [(w[0].__name__,) + w[1:] for w in tw]


def test_the_warning_is_torchs_text():
    with pytest.warns(UserWarning, match=r"^var\(\): degrees of freedom is <= 0\. Correction should be strictly less "
                                          r"than the reduction factor \(input numel divided by output numel\)\."):
        ct.ones(1).var()
