"""torch.testing.assert_close's and the deprecated assert_allclose's verdicts and messages against torch: the
mismatch report (counts, greatest absolute/relative difference and its index, the tolerances), equality for
zero tolerances and integers, one-number tensors, NaNs, and assert_allclose's older per-dtype tolerances,
dtype-free comparison and FutureWarning."""
import warnings

import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

CASES = [([1.0, 2.0], [1.0, 2.1], {}), ([[1.0, 2.0], [3, 4]], [[1.0, 2.1], [3, 5]], {}), ([1, 2], [1, 3], {}),
         ([1.0, float("nan")], [1.0, float("nan")], {}), ([1.0, 2.0], [1.0, 2.1], dict(rtol=0.0, atol=0.0)),
         ([[1.0, 2.0]], [[1.5, 2.0]], dict(rtol=1e-3, atol=1e-3)), (1.0, 1.5, {}), (3, 4, {}),
         ([1.0, 2.0], [1.0, 2.00001], {}), ([1.0, 2.0], [1.0, 2.1], dict(msg="boom")),
         # complex: compared with their dtype's tolerances, differences by modulus; bools as integers
         ([1 + 1j, 2j], [1 + 1j, 3j], {}), ([1 + 1j, 2j], [1 + 1j, 2j + 1e-6], {}), (1 + 1j, 1 + 2j, {}),
         ([1 + 1j, float("nan")], [1 + 1j, 3j], {}), ([[True, False]], [[False, True]], {}), (True, False, {})]


def _outcome(f):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f()
        return "ok", [type(x.message).__name__ for x in w]
    except Exception as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("k", range(len(CASES)))
def test_assert_close_and_allclose_match_torch(k):
    a, b, kw = CASES[k]
    for name in ("assert_close", "assert_allclose"):
        mine = _outcome(lambda: getattr(ct.testing, name)(ct.tensor(a), ct.tensor(b), **kw))
        ref = _outcome(lambda: getattr(torch.testing, name)(torch.tensor(a), torch.tensor(b), **kw))
        assert mine == ref


def test_allclose_dtypes_and_tolerances():
    for f in (lambda L: L.testing.assert_allclose(L.tensor([1, 2]), L.tensor([1.0, 2.0])),
              lambda L: L.testing.assert_allclose([1.0, float("nan")], [1.0, float("nan")]),
              lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), [1.0, 2.00001]),
              lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0], dtype=L.float16),
                                                  L.tensor([1.0, 2.01], dtype=L.float16)),
              lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0], dtype=L.bfloat16),
                                                  L.tensor([1.0, 2.01], dtype=L.bfloat16)),
              lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0], dtype=L.float64),
                                                  L.tensor([1.0, 2.00002], dtype=L.float64)),
              lambda L: L.testing.assert_allclose(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1]), rtol=0.1)):
        assert _outcome(lambda: f(ct)) == _outcome(lambda: f(torch))


# pairs beyond two tensors of one dtype: Python numbers (float64 tolerances), sequences and mappings (the report
# names the failing item), a tensor against a number, and dtypes that differ under check_dtype=False
PAIRS = [lambda L: (1.0, 1.0 + 1e-6, {}), lambda L: (1, 2, {}), lambda L: (1, 1.0, {}), lambda L: (True, False, {}),
         lambda L: ([1.0, [2.0, 3.0]], [1.0, [2.0, 3.5]], {}),
         lambda L: ({"a": 1.0, "b": L.ones(2)}, {"a": 1.0, "b": L.zeros(2)}, {}),
         lambda L: ([L.ones(2)], [L.ones(3)], {}), lambda L: ([1.0, 2.0], [1.0, 2.5], dict(msg="boom")),
         lambda L: (L.ones(2), 1.0, {}), lambda L: (1.0, L.ones(()), {}),
         lambda L: (L.tensor([1.0], dtype=L.float64), L.tensor([1.0 + 1e-6]), dict(check_dtype=False)),
         lambda L: (L.tensor([1.0], dtype=L.float64), L.tensor([1.1]), dict(check_dtype=False)),
         lambda L: (L.tensor([1]), L.tensor([1.0 + 1e-6]), dict(check_dtype=False))]


@pytest.mark.parametrize("k", range(len(PAIRS)))
def test_assert_close_pairs_match_torch(k):
    mine = _outcome(lambda: ct.testing.assert_close(*PAIRS[k](ct)[:2], **PAIRS[k](ct)[2]))
    ref = _outcome(lambda: torch.testing.assert_close(*PAIRS[k](torch)[:2], **PAIRS[k](torch)[2]))
    assert mine == ref
