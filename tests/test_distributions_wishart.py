"""distributions.Wishart against torch: the three parametrizations, batch/df broadcast, log_prob, entropy, mean,
mode, variance, the exponential-family entropy, expand, gradients, errors; samples by their moments."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import same

torch = oracle.require_torch()


def spd(p, batch=(), seed=0):
    a = np.random.RandomState(seed).randn(*batch, p, p)
    return a @ np.swapaxes(a, -1, -2) + p * np.eye(p)


def make(m, df, kind, S):
    kw = {"covariance_matrix": m.tensor(S)} if kind == "cov" else (
        {"precision_matrix": m.tensor(np.linalg.inv(S))} if kind == "prec" else
        {"scale_tril": m.tensor(np.linalg.cholesky(S))})
    return m.distributions.Wishart(m.tensor(df) if isinstance(df, np.ndarray) else df, **kw)


@pytest.mark.parametrize("kind", ["cov", "prec", "tril"])
@pytest.mark.parametrize("df,batch", [(5.0, ()), (4.5, (2,)), (np.array([3.5, 6.0]), (2,)), (np.array([4.0, 7.0]), ())])
def test_wishart_values(kind, df, batch):
    S = spd(3, batch)
    dc, dt = make(ct, df, kind, S), make(torch, df, kind, S)
    assert tuple(dc.batch_shape) == tuple(dt.batch_shape) and tuple(dc.event_shape) == tuple(dt.event_shape)
    X = spd(3, tuple(dt.batch_shape), seed=1)
    same(dc.log_prob(ct.tensor(X)), dt.log_prob(torch.tensor(X)), 1e-10)
    # torch's mean/mode/variance fail for a number df with batch dims (df.view(batch + (1, 1))); the same
    # distribution with df given as a batch-shaped tensor is the reference there
    ref = dt if not isinstance(df, float) or not batch else make(torch, np.full(batch, df), kind, S)
    for attr in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        same(getattr(dc, attr), getattr(ref, attr), 1e-10)
    assert tuple(dc.df.shape) == tuple(dt.df.shape)
    same(dc.entropy(), dt.entropy(), 1e-10)
    # the exponential family's own entropy formula agrees with the closed form
    same(ct.distributions.ExponentialFamily.entropy(dc), dt.entropy(), 1e-9)
    e_c, e_t = dc.expand((4,) + tuple(dc.batch_shape)), dt.expand((4,) + tuple(dt.batch_shape))
    same(e_c.log_prob(ct.tensor(X)), e_t.log_prob(torch.tensor(X)), 1e-10)
    assert tuple(e_c.sample().shape) == tuple(e_t.sample().shape)


def test_wishart_sample_moments_and_grad():
    ct.manual_seed(0)
    S = spd(3)
    d = ct.distributions.Wishart(6.0, covariance_matrix=ct.tensor(S))
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 3, 3) and x.dtype == ct.float64
    assert bool(ct.distributions.constraints.positive_definite.check(x).all())
    np.testing.assert_allclose(x.mean(0).numpy(), 6.0 * S, rtol=0.05, atol=0.3)
    np.testing.assert_allclose(x.var(0).numpy(), d.variance.numpy(), rtol=0.15, atol=2.0)
    # rsample is differentiable in the scale and the degrees of freedom
    L = ct.tensor(np.linalg.cholesky(S), requires_grad=True)
    df = ct.tensor(5.0, dtype=ct.float64, requires_grad=True)
    ct.distributions.Wishart(df, scale_tril=L).rsample((3,)).sum().backward()
    assert L.grad is not None and bool(ct.isfinite(L.grad).all()) and df.grad is not None
    # log_prob's gradients equal torch's
    Lt = torch.tensor(np.linalg.cholesky(S), requires_grad=True)
    dft = torch.tensor(5.0, dtype=torch.float64, requires_grad=True)
    L.grad, df.grad = None, None
    X = spd(3, seed=2)
    ct.distributions.Wishart(df, scale_tril=L).log_prob(ct.tensor(X)).backward()
    torch.distributions.Wishart(dft, scale_tril=Lt).log_prob(torch.tensor(X)).backward()
    same(L.grad, Lt.grad, 1e-9)
    same(df.grad, dft.grad, 1e-9)


def test_wishart_errors():
    S = ct.tensor(spd(3))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        ct.distributions.Wishart(2.0, covariance_matrix=S)
    with pytest.raises(AssertionError):
        ct.distributions.Wishart(4.0, covariance_matrix=S, scale_tril=S)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        ct.distributions.Wishart(4.0, covariance_matrix=ct.ones(3))
    with pytest.warns(UserWarning, match="Low df"):
        ct.distributions.Wishart(2.5, covariance_matrix=S)
    d = ct.distributions.Wishart(4.0, covariance_matrix=S, validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(-S)
    assert repr(d.arg_constraints["df"]) == repr(torch.distributions.Wishart(
        4.0, covariance_matrix=torch.tensor(spd(3))).arg_constraints["df"])
