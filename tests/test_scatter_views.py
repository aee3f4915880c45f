"""*_scatter (clone + view + copy_), fill_diagonal_ (strided fills),
index_reduce (scatter_reduce over an expanded index), tril/triu_indices and
lu_unpack's permutation (C kernels) against torch: values, dtypes, errors and
gradients."""
import numpy as np
import pytest

import cthtorch as ct
from cthtorch.autograd import gradcheck, gradgradcheck
from oracle import raises_like, require_torch

torch = require_torch()
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce")

RS = np.random.RandomState(7)
X, Y = RS.randn(4, 5), RS.randn(4, 5)


def same(a, b):
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-9)


def both(f, *arrays, dtype="float64"):
    same(f(ct, *[ct.tensor(a.astype(dtype)) for a in arrays]), f(torch, *[torch.tensor(a.astype(dtype)) for a in arrays]))


VIEW_SCATTER = [
    ("select", lambda L, x, y: L.select_scatter(x, y[0], 0, 1)),
    ("select_neg", lambda L, x, y: x.select_scatter(y[:, 0], -1, -2)),
    ("slice", lambda L, x, y: L.slice_scatter(x, y[:, :2], 1, 1, None, 2)),
    ("slice_default", lambda L, x, y: L.slice_scatter(x, y)),
    ("diagonal", lambda L, x, y: L.diagonal_scatter(x, y[0, :4])),
    ("diagonal_offset", lambda L, x, y: x.diagonal_scatter(y[0, :3], -1)),
    ("as_strided", lambda L, x, y: L.as_strided_scatter(x, y[:2, :2], (2, 2), (1, 2), 1)),
    ("as_strided_noncontig", lambda L, x, y: L.as_strided_scatter(x.t(), y[:2, :2], (2, 2), (1, 2), 1)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name,f", VIEW_SCATTER, ids=[c[0] for c in VIEW_SCATTER])
def test_view_scatter_values(name, f, dtype):
    both(f, X * 3, Y * 3, dtype=dtype)


@pytest.mark.parametrize("name,f", VIEW_SCATTER[:-1], ids=[c[0] for c in VIEW_SCATTER[:-1]])
def test_view_scatter_gradients(name, f):
    x = ct.tensor(X, requires_grad=True)
    y = ct.tensor(Y, requires_grad=True)
    assert gradcheck(lambda a, b: f(ct, a, b), (x, y))
    assert gradgradcheck(lambda a, b: f(ct, a, b), (x, y))


def test_view_scatter_src_dtype_and_gradient_match_torch():
    same(ct.select_scatter(ct.zeros(2, 3), ct.ones(3, dtype=ct.int64), 0, 0),
         torch.select_scatter(torch.zeros(2, 3), torch.ones(3, dtype=torch.int64), 0, 0))
    xs = [L.tensor(X, requires_grad=True) for L in (ct, torch)]
    ys = [L.tensor(Y[0], requires_grad=True) for L in (ct, torch)]
    w = RS.randn(4, 5)
    for L, x, y in zip((ct, torch), xs, ys):
        (L.select_scatter(x, y, 0, 2) * L.tensor(w)).sum().backward()
    same(xs[0].grad, xs[1].grad)
    same(ys[0].grad, ys[1].grad)


@pytest.mark.parametrize("f", [
    lambda L: L.select_scatter(L.zeros(3, 4), L.zeros(3), 0, 0),
    lambda L: L.slice_scatter(L.zeros(3, 4), L.zeros(2, 4), 0, 0, 1),
    lambda L: L.diagonal_scatter(L.zeros(3, 4), L.zeros(4)),
    lambda L: L.as_strided_scatter(L.zeros(3, 4), L.zeros(4), (3,), (1,)),
    lambda L: L.select_scatter(L.zeros(3, 4), L.zeros(4), 2, 0),
])
def test_view_scatter_errors(f):
    raises_like(lambda: f(ct), lambda: f(torch))


FILL = [
    ("square", lambda L: L.tensor(X[:4, :4]).fill_diagonal_(3)),
    ("wide", lambda L: L.tensor(X).fill_diagonal_(3, wrap=True)),
    ("tall", lambda L: L.zeros(11, 3).fill_diagonal_(3)),
    ("tall_wrap", lambda L: L.zeros(11, 3).fill_diagonal_(3, wrap=True)),
    ("tall_wrap_edge", lambda L: L.zeros(4, 3, dtype=L.int32).fill_diagonal_(3, wrap=True)),
    ("cube", lambda L: L.zeros(3, 3, 3).fill_diagonal_(-1)),
    ("transposed_wrap", lambda L: L.zeros(6, 7).t().fill_diagonal_(2, wrap=True)),
    ("bool", lambda L: L.zeros(3, 3, dtype=L.bool).fill_diagonal_(True)),
    ("empty", lambda L: L.zeros(0, 3).fill_diagonal_(1)),
]


@pytest.mark.parametrize("name,f", FILL, ids=[c[0] for c in FILL])
def test_fill_diagonal_(name, f):
    same(f(ct), f(torch))


def test_fill_diagonal_gradient_and_errors():
    x = ct.tensor(X, requires_grad=True)
    assert gradcheck(lambda a: (a * 1).fill_diagonal_(2.0, wrap=True), (x,))
    for f in (lambda L: L.zeros(3).fill_diagonal_(1), lambda L: L.zeros(2, 3, 4).fill_diagonal_(1)):
        raises_like(lambda: f(ct), lambda: f(torch))


INDEX_REDUCE = [
    ("amax", lambda L, x, y: L.index_reduce(x, 0, L.tensor([0, 2, 0]), y[:3], "amax")),
    ("amin_noself", lambda L, x, y: x.index_reduce(1, L.tensor([4, 0, 4]), y[:, :3], "amin", include_self=False)),
    ("mean_noself", lambda L, x, y: x.index_reduce(1, L.tensor([0, 0]), y[:, :2], "mean", include_self=False)),
    ("mean", lambda L, x, y: x.index_reduce(-1, L.tensor([3, 1, 3], dtype=L.int32), y[:, :3], "mean")),
    ("prod", lambda L, x, y: L.index_reduce(x, 0, L.tensor([1, 3, 1, 1]), y, "prod")),
    ("prod_noself", lambda L, x, y: L.index_reduce(x, 0, L.tensor([1, 3]), y[:2], "prod", include_self=False)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("name,f", INDEX_REDUCE, ids=[c[0] for c in INDEX_REDUCE])
def test_index_reduce_values(name, f, dtype):
    both(f, X * 3, Y * 3, dtype=dtype)


@pytest.mark.parametrize("name,f", INDEX_REDUCE, ids=[c[0] for c in INDEX_REDUCE])
def test_index_reduce_gradients(name, f):
    x = ct.tensor(X, requires_grad=True)
    y = ct.tensor(Y, requires_grad=True)
    assert gradcheck(lambda a, b: f(ct, a, b), (x, y))
    xs = [L.tensor(X, requires_grad=True) for L in (ct, torch)]
    ys = [L.tensor(Y, requires_grad=True) for L in (ct, torch)]
    for L, a, b in zip((ct, torch), xs, ys):
        f(L, a, b).sum().backward()
    same(xs[0].grad, xs[1].grad)
    same(ys[0].grad, ys[1].grad)


def test_index_reduce_inplace():
    a, b = ct.tensor(X), torch.tensor(X)
    a.index_reduce_(0, ct.tensor([0, 2]), ct.tensor(Y[:2]), "amax")
    b.index_reduce_(0, torch.tensor([0, 2]), torch.tensor(Y[:2]), "amax")
    same(a, b)


@pytest.mark.parametrize("f", [
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([0, 1]), L.zeros(3, 4), "prod"),
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([0, 1]), L.zeros(2, 5), "prod"),
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([0., 1.]), L.zeros(2, 4), "prod"),
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([0, 1]), L.zeros(2, 4, dtype=L.float64), "prod"),
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([0, 1]), L.zeros(2, 4), "sum"),
    lambda L: L.zeros(3, 4).index_reduce(0, L.tensor([[0, 1]]), L.zeros(2, 4), "amax"),
])
def test_index_reduce_errors(f):
    raises_like(lambda: f(ct), lambda: f(torch))


@pytest.mark.parametrize("args", [(3, 3), (4, 3, 1), (3, 5, -1), (0, 3), (3, 0), (3, 4, 10), (5, 5, -10),
                                  (6, 2, -3), (1, 1)])
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_tri_indices(name, args):
    for dtype in ("int64", "int32"):
        same(getattr(ct, name)(*args, dtype=getattr(ct, dtype)), getattr(torch, name)(*args, dtype=getattr(torch, dtype)))
    assert getattr(ct, name)(*args).is_contiguous()


def test_tri_indices_extreme_offsets():
    # the offset never enters an overflowing sum: past the matrix it keeps or drops every column
    # (torch's own kernel overflows here, so the answer is the small offset's)
    for big, small in ((2 ** 63 - 1, 3), (-2 ** 63, -3)):
        for name in ("tril_indices", "triu_indices"):
            same(getattr(ct, name)(3, 3, big), getattr(torch, name)(3, 3, small))
    with pytest.raises(RuntimeError):   # 4 * 2**62 indices: the count overflows
        ct.triu_indices(4, 2 ** 62)


@pytest.mark.parametrize("f", [lambda L: L.tril_indices(-1, 3), lambda L: L.triu_indices(3, -2),
                               lambda L: L.tril_indices(3, 3, dtype=L.float32)])
def test_tri_indices_errors(f):
    raises_like(lambda: f(ct), lambda: f(torch))


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 4), (0, 3, 3), (1, 1)])
def test_lu_unpack_permutation(shape):
    a = RS.randn(*shape)
    P, L, U = ct.lu_unpack(*ct.linalg.lu_factor(ct.tensor(a)))
    Pt, Lt, Ut = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)))
    for r, e in ((P, Pt), (L, Lt), (U, Ut)):
        same(r, e)
    same(ct.linalg.lu(ct.tensor(a)).P, torch.linalg.lu(torch.tensor(a)).P)


def test_lu_unpack_bad_pivots():
    for L in (ct, torch):
        LU, piv = L.linalg.lu_factor(L.tensor(X[:3, :3]))
        bad = piv.clone()
        bad[1] = 7
        with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and LU.size"):
            L.lu_unpack(LU, bad)


_ONCE_WARNINGS = """
import warnings, {lib} as L
warnings.simplefilter("always")
i = L.tensor([0, 1, 0])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    L.zeros(3).scatter(0, i, 1.0, reduce="add")
    L.zeros(3).scatter(0, i, L.ones(3), reduce="add"); L.zeros(3).scatter_(0, i, L.ones(3), reduce="multiply")
    L.zeros(3).index_reduce(0, i, L.ones(3), "amax"); L.zeros(3).index_reduce_(0, i, L.ones(3), "mean")
    L.index_reduce(L.zeros(3), 0, i, L.ones(3), "prod")
for x in w:
    print(x.category.__name__, x.filename, x.lineno, str(x.message).split(" (Triggered")[0])
"""


def test_scatter_reduce_argument_and_index_reduce_warn_once_like_torch():
    """scatter(reduce=...) with a Tensor src warns its deprecation (a number src does not) and index_reduce its
    beta state, each once per process (GNN aggregations call them every layer), at the user's line"""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = [subprocess.run([sys.executable, "-c", _ONCE_WARNINGS.format(lib=lib)], capture_output=True, text=True,
                           env=env, timeout=120, check=True).stdout for lib in ("cthtorch", "torch")]
    assert outs[0] == outs[1] and outs[0].count("\n") == 2 and "index_reduce() is in beta" in outs[0]
