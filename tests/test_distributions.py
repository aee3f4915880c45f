"""cthtorch.distributions against torch.distributions: log_prob, entropy,
mean, variance, cdf values and gradients on the same parameters; sample
shapes, dtypes and support; sample moments under a fixed seed; validation
errors; kl_divergence."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from test_torch_api import same

torch = oracle.require_torch()
RS = np.random.RandomState(0)
LOC = RS.randn(3)
POS = RS.rand(3) + 0.5
POS2 = RS.rand(3) + 0.5
PROB = RS.rand(3) * 0.8 + 0.1
LOGITS = RS.randn(2, 4)
SIMPLEX = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
CONC = RS.rand(2, 4) + 0.5
A = RS.randn(3, 3)
COV = A @ A.T + 3 * np.eye(3)
TRIL = np.linalg.cholesky(COV)
CB_PROBS = np.array([0.2, 0.4995, 0.8])
COV_FACTOR = RS.randn(2, 3, 2)


def D(L):
    return L.distributions


# name -> (constructor(L, *params), params, a value in the support)
CASES = {
    "Normal": (lambda L, a, b: D(L).Normal(a, b), [LOC, POS], RS.randn(3)),
    "Uniform": (lambda L, a, b: D(L).Uniform(a, a + b), [LOC, POS], LOC + 0.3 * POS),
    "Laplace": (lambda L, a, b: D(L).Laplace(a, b), [LOC, POS], RS.randn(3)),
    "Cauchy": (lambda L, a, b: D(L).Cauchy(a, b), [LOC, POS], RS.randn(3)),
    "HalfNormal": (lambda L, b: D(L).HalfNormal(b), [POS], POS2),
    "Chi2": (lambda L, k: D(L).Chi2(k), [POS * 3], POS2),
    "Multinomial": (lambda L, lg: D(L).Multinomial(5, logits=lg), [LOGITS], np.array([[1.0, 0, 2, 2], [0, 5, 0, 0]])),
    "Mixture": (lambda L, lg, m, s: D(L).MixtureSameFamily(D(L).Categorical(logits=lg), D(L).Normal(m, s)),
                [LOGITS, CONC - 1, CONC], RS.randn(3, 2)),
    "MixtureMVN": (lambda L, lg, m: D(L).MixtureSameFamily(
        D(L).Categorical(logits=lg), D(L).MultivariateNormal(m, scale_tril=L.eye(3, dtype=L.float64) * 2)),
        [LOGITS[0], RS.randn(4, 3)], RS.randn(3)),
    "Exponential": (lambda L, r: D(L).Exponential(r), [POS], POS2),
    "LogNormal": (lambda L, a, b: D(L).LogNormal(a, b), [LOC, POS], POS2),
    "Gamma": (lambda L, a, b: D(L).Gamma(a, b), [POS, POS2], POS2),
    "Beta": (lambda L, a, b: D(L).Beta(a, b), [POS, POS2], PROB),
    "Dirichlet": (lambda L, c: D(L).Dirichlet(c), [CONC], SIMPLEX),
    "Bernoulli_probs": (lambda L, p: D(L).Bernoulli(probs=p), [PROB], np.array([0.0, 1.0, 1.0])),
    "Bernoulli_logits": (lambda L, lg: D(L).Bernoulli(logits=lg), [LOC], np.array([0.0, 1.0, 1.0])),
    "Geometric": (lambda L, p: D(L).Geometric(probs=p), [PROB], np.array([0.0, 2.0, 5.0])),
    "Poisson": (lambda L, r: D(L).Poisson(r), [POS], np.array([0.0, 2.0, 5.0])),
    "Binomial": (lambda L, p: D(L).Binomial(10, probs=p), [PROB], np.array([0.0, 4.0, 10.0])),
    "Categorical_probs": (lambda L, p: D(L).Categorical(probs=p), [SIMPLEX], np.array([0, 3])),
    "Categorical_logits": (lambda L, lg: D(L).Categorical(logits=lg), [LOGITS], np.array([1, 2])),
    "OneHotCategorical": (lambda L, lg: D(L).OneHotCategorical(logits=lg), [LOGITS], np.eye(4)[[1, 3]]),
    "MVN_scale_tril": (lambda L, m, s: D(L).MultivariateNormal(m, scale_tril=s), [LOC, TRIL], RS.randn(2, 3)),
    "MVN_cov": (lambda L, m, c: D(L).MultivariateNormal(m, covariance_matrix=c), [LOC, COV], RS.randn(2, 3)),
    "MVN_precision": (lambda L, m, p: D(L).MultivariateNormal(m, precision_matrix=p), [LOC, np.linalg.inv(COV)],
                      RS.randn(3)),
    "Independent": (lambda L, a, b: D(L).Independent(D(L).Normal(a, b), 1), [LOC, POS], RS.randn(2, 3)),
    "Affine": (lambda L, a, b: D(L).TransformedDistribution(
        D(L).Normal(a, b), [D(L).transforms.AffineTransform(1.5, -2.0), D(L).transforms.TanhTransform()]),
        [LOC, POS], np.array([-0.5, 0.1, 0.7])),
    "Sigmoid": (lambda L, a, b: D(L).TransformedDistribution(D(L).Normal(a, b), D(L).transforms.SigmoidTransform()),
                [LOC, POS], PROB),
    "RelaxedBernoulli": (lambda L, p: D(L).RelaxedBernoulli(L.tensor(0.7, dtype=L.float64), probs=p), [PROB], PROB),
    "RelaxedOneHot": (lambda L, lg: D(L).RelaxedOneHotCategorical(L.tensor(0.7, dtype=L.float64), logits=lg),
                      [LOGITS], SIMPLEX),
    "Gumbel": (lambda L, a, b: D(L).Gumbel(a, b), [LOC, POS], RS.randn(3)),
    "HalfCauchy": (lambda L, b: D(L).HalfCauchy(b), [POS], POS2),
    "Weibull": (lambda L, s, k: D(L).Weibull(s, k + 1), [POS, POS2], POS2),
    "Pareto": (lambda L, s, a: D(L).Pareto(s, a + 2), [POS, POS2], POS + POS2),
    "InverseGamma": (lambda L, a, b: D(L).InverseGamma(a + 5, b), [POS, POS2], POS2),
    "StudentT": (lambda L, df, a, b: D(L).StudentT(df + 2, a, b), [POS, LOC, POS2], RS.randn(3)),
    "FisherSnedecor": (lambda L, a, b: D(L).FisherSnedecor(a * 4, b + 9), [POS, POS2], POS2),
    "Kumaraswamy": (lambda L, a, b: D(L).Kumaraswamy(a + 1, b + 1), [POS, POS2], PROB),
    "LogisticNormal": (lambda L, a, b: D(L).LogisticNormal(a, b), [LOGITS[:, :3], CONC[:, :3]], SIMPLEX),
    "NegativeBinomial": (lambda L, n, p: D(L).NegativeBinomial(n * 3, probs=p), [POS, PROB], np.array([0.0, 2.0, 5.0])),
    "NegativeBinomial_logits": (lambda L, n, lg: D(L).NegativeBinomial(n * 3, logits=lg), [POS, LOC],
                                np.array([1.0, 0.0, 4.0])),
    # 0.4995 is inside the band around 1/2 where the Taylor expansions stand in for the closed forms
    "ContinuousBernoulli": (lambda L, p: D(L).ContinuousBernoulli(p), [CB_PROBS], PROB),
    "ContinuousBernoulli_logits": (lambda L, lg: D(L).ContinuousBernoulli(logits=lg), [LOC], PROB),
    # float32: torch 2.13's GeneralizedPareto raises on float64 parameters (isclose against a float32 zero)
    "GeneralizedPareto": (lambda L, a, b, c: D(L).GeneralizedPareto(a.float(), b.float(), c.float() - 0.8),
                          [LOC, POS, PROB], (LOC + 0.3 * POS).astype(np.float32)),
    "GeneralizedPareto_c0": (lambda L, a, b: D(L).GeneralizedPareto(a.float(), b.float(), 0.0), [LOC, POS],
                             (LOC + 0.3 * POS).astype(np.float32)),
    "VonMises": (lambda L, a, b: D(L).VonMises(a, b * 3), [LOC, POS], RS.randn(3)),
    "LowRankMVN": (lambda L, m, w, d: D(L).LowRankMultivariateNormal(m, w, d), [LOC, COV_FACTOR, POS],
                   RS.randn(2, 3)),
}
# no closed form in torch either (Poisson: no carrier measure)
NO_ENTROPY = {"FisherSnedecor", "LogisticNormal", "Affine", "Sigmoid", "RelaxedBernoulli", "RelaxedOneHot", "Poisson", "Mixture",
              "MixtureMVN", "NegativeBinomial", "NegativeBinomial_logits", "VonMises"}


def build(L, name):
    ctor, params, value = CASES[name]
    ps = [L.tensor(p, requires_grad=True) for p in params]
    return ctor(L, *ps), ps, L.tensor(value)


def grads_of(out, ps, L):
    w = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=out.dtype)
    gs = L.autograd.grad((out * w).sum(), ps, allow_unused=True)
    return [g if g is not None else L.zeros_like(p) for g, p in zip(gs, ps)]


def compare(name, method, tol=1e-6):
    outs = []
    for L in (ct, torch):
        d, ps, v = build(L, name)
        out = method(d, v)
        outs.append((out, grads_of(out, ps, L) if out.requires_grad else None))
    (co, cg), (to, tg) = outs
    same(co, to, tol)
    if tg is not None:
        assert cg is not None
        same(cg, tg, tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob(name):
    compare(name, lambda d, v: d.log_prob(v))


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in NO_ENTROPY))
def test_entropy(name):
    compare(name, lambda d, v: d.entropy())


@pytest.mark.parametrize("name", sorted(NO_ENTROPY))
def test_no_entropy(name):
    for L in (ct, torch):
        with pytest.raises(NotImplementedError):
            build(L, name)[0].entropy()


MOMENTS = sorted(n for n in CASES if not n.startswith(("Affine", "Sigmoid", "Relaxed", "Multinomial", "LogisticNormal")))


@pytest.mark.parametrize("name", MOMENTS)
def test_mean_variance_stddev(name):
    for prop in ("mean", "variance", "stddev"):
        if name.startswith(("Categorical", "Cauchy", "HalfCauchy")):
            # nan/inf-filled, no gradient
            same(getattr(build(ct, name)[0], prop), getattr(build(torch, name)[0], prop))
            continue
        compare(name, lambda d, v: getattr(d, prop))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Exponential", "LogNormal", "Gamma", "Cauchy",
                                  "HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto", "ContinuousBernoulli",
                                  "ContinuousBernoulli_logits", "GeneralizedPareto", "GeneralizedPareto_c0"])
def test_cdf(name):
    # Gamma: igamma has no derivative in its first argument (in torch either)
    compare(name, lambda d, v: d.cdf(v).detach() if name == "Gamma" else d.cdf(v))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Exponential", "LogNormal", "Cauchy", "HalfNormal",
                                  "HalfCauchy", "Gumbel", "Weibull", "ContinuousBernoulli", "GeneralizedPareto",
                                  "GeneralizedPareto_c0"])
def test_icdf(name):
    compare(name, lambda d, v: d.icdf(v.new_tensor([0.1, 0.5, 0.93])))


@pytest.mark.parametrize("name", MOMENTS)
def test_mode(name):
    if name == "Kumaraswamy":
        # torch 2.13's Kumaraswamy.mode is nan everywhere (log1p(-concentration0)); ours is the closed form
        # ((a - 1) / (a b - 1)) ** (1 / a): check it is where the density peaks
        d = build(ct, name)[0]
        m = d.mode.detach()
        for eps in (1e-3, -1e-3):
            assert bool((d.log_prob(m).detach() > d.log_prob(m + eps).detach()).all())
        return
    if name.startswith(("Mixture", "ContinuousBernoulli")):
        for L in (ct, torch):
            with pytest.raises(NotImplementedError, match="does not implement mode"):
                build(L, name)[0].mode
        return
    a, b = build(ct, name)[0].mode, build(torch, name)[0].mode
    same(a.detach() if a.dtype.is_floating_point else a, b.detach() if b.dtype.is_floating_point else b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shape_dtype_support(name):
    ct.manual_seed(0)
    d, t = build(ct, name)[0], build(torch, name)[0]
    assert d.batch_shape == t.batch_shape and d.event_shape == t.event_shape
    for shape in [(), (5,), (2, 3)]:
        s, ts = d.sample(shape), t.sample(shape)
        assert tuple(s.shape) == tuple(ts.shape) and str(s.dtype) == str(ts.dtype)
        assert not s.requires_grad
        assert bool(d.support.check(s).all())
    if t.has_rsample:
        assert d.has_rsample
        r = d.rsample((4,))
        assert r.requires_grad and tuple(r.shape) == tuple(t.rsample((4,)).shape)


# name -> (distribution, its mean and variance from torch)
STATS = ["Normal", "Uniform", "Laplace", "Exponential", "Gamma", "Beta", "Dirichlet", "Bernoulli_probs",
         "Geometric", "Poisson", "Binomial", "Categorical_logits", "OneHotCategorical", "MVN_cov", "LogNormal", "HalfNormal", "Chi2", "Multinomial", "Mixture", "MixtureMVN",
         "Gumbel", "Weibull", "InverseGamma", "StudentT", "Kumaraswamy", "FisherSnedecor", "NegativeBinomial",
         "ContinuousBernoulli", "GeneralizedPareto", "LowRankMVN"]


@pytest.mark.parametrize("name", STATS)
def test_sample_moments(name):
    ct.manual_seed(1)
    d, t = build(ct, name)[0], build(torch, name)[0]
    s = d.sample((20000,)).double()
    if name.startswith("Categorical"):
        freq = np.stack([(s == k).double().mean(0).tolist() for k in range(4)], -1)
        np.testing.assert_allclose(freq, t.probs.detach().numpy(), atol=0.02)
        return
    mean, var = t.mean.detach().numpy(), t.variance.detach().numpy()
    np.testing.assert_allclose(np.array(s.mean(0).tolist()), mean, atol=0.05 * np.sqrt(var).max() + 1e-3, rtol=0.03)
    # LogNormal's heavy tail makes the sample variance noisy
    np.testing.assert_allclose(np.array(s.var(0).tolist()), var, rtol=0.3 if name == "LogNormal" else 0.1, atol=1e-3)


def test_rsample_gradients_match_expectation():
    # d/dtheta E[f(x)] by reparameterization against the closed form
    ct.manual_seed(2)
    loc, scale = ct.tensor([0.5], requires_grad=True), ct.tensor([2.0], requires_grad=True)
    x = ct.distributions.Normal(loc, scale).rsample((50000,))
    (x ** 2).mean().backward()                                    # E = loc^2 + scale^2
    assert abs(loc.grad.item() - 1.0) < 0.1 and abs(scale.grad.item() - 4.0) < 0.1
    conc = ct.tensor([3.0], dtype=ct.float64, requires_grad=True)
    g = ct.distributions.Gamma(conc, ct.tensor([2.0], dtype=ct.float64)).rsample((50000,))
    g.mean().backward()                                           # E = conc / rate
    assert abs(conc.grad.item() - 0.5) < 0.02
    c = ct.tensor([1.5, 2.5], dtype=ct.float64, requires_grad=True)
    dr = ct.distributions.Dirichlet(c).rsample((50000,))
    dr[:, 0].mean().backward()                                    # E = c0 / (c0 + c1)
    assert np.allclose(c.grad.tolist(), [2.5 / 16, -1.5 / 16], atol=0.01)


def test_categorical_policy_gradient_shape():
    # the REINFORCE pattern from the RL examples
    logits = ct.randn(5, 3, requires_grad=True)
    m = ct.distributions.Categorical(logits=logits)
    a = m.sample()
    assert a.dtype == ct.int64 and a.shape == (5,)
    loss = -(m.log_prob(a) * ct.ones(5)).sum() - 0.01 * m.entropy().sum()
    loss.backward()
    assert logits.grad.shape == (5, 3)


KL_PAIRS = [
    ("Normal", lambda L: (D(L).Normal(L.tensor(LOC), L.tensor(POS)), D(L).Normal(L.tensor(LOC[::-1].copy()), 1.5))),
    ("Categorical", lambda L: (D(L).Categorical(logits=L.tensor(LOGITS)), D(L).Categorical(probs=L.tensor(SIMPLEX[::-1].copy())))),
    ("OneHot", lambda L: (D(L).OneHotCategorical(logits=L.tensor(LOGITS)), D(L).OneHotCategorical(probs=L.tensor(SIMPLEX[::-1].copy())))),
    ("Bernoulli", lambda L: (D(L).Bernoulli(L.tensor(PROB)), D(L).Bernoulli(L.tensor([0.5, 0.0, 1.0])))),
    ("Uniform", lambda L: (D(L).Uniform(L.tensor(LOC), L.tensor(LOC + 1)), D(L).Uniform(L.tensor(LOC - 1), L.tensor(LOC + 0.5)))),
    ("Beta", lambda L: (D(L).Beta(L.tensor(POS), L.tensor(POS2)), D(L).Beta(L.tensor(POS2), L.tensor(POS)))),
    ("Gamma", lambda L: (D(L).Gamma(L.tensor(POS), L.tensor(POS2)), D(L).Gamma(L.tensor(POS2), L.tensor(POS)))),
    ("Dirichlet", lambda L: (D(L).Dirichlet(L.tensor(CONC)), D(L).Dirichlet(L.tensor(CONC[:, ::-1].copy())))),
    ("Exponential", lambda L: (D(L).Exponential(L.tensor(POS)), D(L).Exponential(L.tensor(POS2)))),
    ("Laplace", lambda L: (D(L).Laplace(L.tensor(LOC), L.tensor(POS)), D(L).Laplace(L.tensor(POS), L.tensor(POS2)))),
    ("Poisson", lambda L: (D(L).Poisson(L.tensor(POS)), D(L).Poisson(L.tensor(POS2)))),
    ("Geometric", lambda L: (D(L).Geometric(L.tensor(PROB)), D(L).Geometric(L.tensor(PROB[::-1].copy())))),
    ("Binomial", lambda L: (D(L).Binomial(10, L.tensor(PROB)), D(L).Binomial(10, L.tensor(PROB[::-1].copy())))),
    ("MVN", lambda L: (D(L).MultivariateNormal(L.tensor(LOC), covariance_matrix=L.tensor(COV)),
                       D(L).MultivariateNormal(L.tensor(POS), scale_tril=L.tensor(np.diag(POS2)).expand(2, 3, 3)))),
    ("Independent", lambda L: (D(L).Independent(D(L).Normal(L.tensor(LOC), L.tensor(POS)), 1),
                               D(L).Independent(D(L).Normal(L.tensor(POS), L.tensor(POS2)), 1))),
    ("LogNormal", lambda L: (D(L).LogNormal(L.tensor(LOC), L.tensor(POS)), D(L).LogNormal(L.tensor(POS), L.tensor(POS2)))),
]


@pytest.mark.parametrize("name,make", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergence(name, make):
    same(D(ct).kl_divergence(*make(ct)), D(torch).kl_divergence(*make(torch)))


def test_kl_gradient_and_registry():
    outs = []
    for L in (ct, torch):
        m = L.tensor(LOC, requires_grad=True)
        kl = D(L).kl_divergence(D(L).Normal(m, L.tensor(POS)), D(L).Normal(0.0, 1.0)).sum()
        outs.append(L.autograd.grad(kl, m)[0])
    same(*outs)
    with pytest.raises(NotImplementedError, match="No KL"):
        D(ct).kl_divergence(D(ct).Cauchy(0.0, 1.0), D(ct).Normal(0.0, 1.0))
    # two exponential families without a closed form: the Bregman fallback refuses, as torch's
    oracle.raises_like(lambda: D(ct).kl_divergence(D(ct).Normal(0.0, 1.0), D(ct).Poisson(1.0)),
                       lambda: D(torch).kl_divergence(D(torch).Normal(0.0, 1.0), D(torch).Poisson(1.0)))

    class MyNormal(D(ct).Normal):
        pass

    @D(ct).register_kl(MyNormal, D(ct).Normal)
    def _kl(p, q):
        return ct.tensor(42.0)
    try:
        assert D(ct).kl_divergence(MyNormal(0.0, 1.0), D(ct).Normal(0.0, 1.0)).item() == 42.0
    finally:   # the registry is global: later tests compare it with torch's
        del D(ct).kl._KL_REGISTRY[MyNormal, D(ct).Normal]
        D(ct).kl._KL_MEMOIZE.clear()
    assert D(ct).kl_divergence(D(ct).Normal(0.0, 1.0), D(ct).Normal(0.0, 1.0)).item() == 0.0


def err(f):
    with pytest.raises(Exception) as e:
        f()
    return type(e.value), str(e.value).split("\n")[0]


ERRORS = [
    lambda L: D(L).Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: D(L).Normal(0.0, 1.0).log_prob(0.5),
    lambda L: D(L).Bernoulli(probs=L.tensor([0.2, 1.5])),
    lambda L: D(L).Bernoulli(L.tensor([0.3])).log_prob(L.tensor([0.5])),
    lambda L: D(L).Categorical(L.tensor([0.3, 0.7]), logits=L.tensor([0.0, 1.0])),
    lambda L: D(L).Categorical(probs=L.tensor(0.3)),
    lambda L: D(L).Categorical(logits=L.tensor([[0.0, 1.0]])).log_prob(L.tensor([2])),
    lambda L: D(L).Categorical(logits=L.tensor([[0.0, 1.0]] * 2)).log_prob(L.tensor([0, 1, 1])),
    lambda L: D(L).Normal(L.tensor([0.0, 1.0]), 1.0).log_prob(L.tensor([1.0, 2.0, 3.0])),
    lambda L: D(L).Uniform(1.0, 0.0),
    lambda L: D(L).Dirichlet(L.tensor(1.0)),
    lambda L: D(L).Geometric(L.tensor([0.0, 0.5])),
    lambda L: D(L).MultivariateNormal(L.tensor(0.0), L.eye(1)),
    lambda L: D(L).MultivariateNormal(L.zeros(2)),
    lambda L: D(L).MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda L: D(L).MultivariateNormal(L.zeros(2), covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: D(L).MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
    lambda L: D(L).Independent(D(L).Normal(0.0, 1.0), 1),
    lambda L: D(L).TransformedDistribution(D(L).Normal(0.0, 1.0), 3),
    lambda L: D(L).transforms.ExpTransform(cache_size=2),
    lambda L: D(L).Distribution.set_default_validate_args(3),
    lambda L: D(L).Poisson(L.tensor([1.0])).log_prob(L.tensor([0.5])),
    lambda L: D(L).Gamma(L.tensor([1.0]), L.tensor([0.0])),
    lambda L: D(L).Beta(1.0, 1.0).log_prob(L.tensor(1.5)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_validation_errors(i):
    assert err(lambda: ERRORS[i](ct)) == err(lambda: ERRORS[i](torch))


def test_validate_args_off():
    d = D(ct).Normal(0.0, -1.0, validate_args=False)
    assert d.log_prob(ct.tensor(0.5)).isnan().item()
    D(ct).Distribution.set_default_validate_args(False)
    try:
        D(ct).Bernoulli(probs=ct.tensor([2.0]))
    finally:
        D(ct).Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D(ct).Bernoulli(probs=ct.tensor([2.0]))


def test_repr_expand_and_enumerate():
    for L in (ct, torch):
        d = D(L).Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0]))
        e = d.expand((3, 2))
        assert e.batch_shape == (3, 2) and e.sample().shape == (3, 2)
    assert repr(D(ct).Normal(0.0, 1.0)) == repr(D(torch).Normal(0.0, 1.0))
    assert repr(D(ct).Categorical(logits=ct.zeros(2, 3))) == repr(D(torch).Categorical(logits=torch.zeros(2, 3)))
    for make in (lambda L: D(L).Bernoulli(L.tensor([0.2, 0.7])), lambda L: D(L).Categorical(logits=L.zeros(2, 3)),
                 lambda L: D(L).Binomial(3, L.tensor([0.2, 0.7])), lambda L: D(L).OneHotCategorical(L.ones(2, 3))):
        same(make(ct).enumerate_support(), make(torch).enumerate_support())
        same(make(ct).enumerate_support(False), make(torch).enumerate_support(False))
    same(D(ct).Binomial(3, ct.tensor([0.2, 0.7])).entropy(), D(torch).Binomial(3, torch.tensor([0.2, 0.7])).entropy())


def test_transforms():
    T = D(ct).transforms
    x = ct.tensor(RS.randn(4), dtype=ct.float64)
    tx = torch.tensor(x.tolist(), dtype=torch.float64)
    for name, args in [("ExpTransform", ()), ("SigmoidTransform", ()), ("TanhTransform", ()),
                       ("AffineTransform", (0.5, -3.0)), ("SoftplusTransform", ()), ("AbsTransform", ()),
                       ("PowerTransform", (2.0,))]:
        t, tt = getattr(T, name)(*args), getattr(torch.distributions.transforms, name)(*args)
        xi, txi = (x.abs(), tx.abs()) if name == "PowerTransform" else (x, tx)
        y, ty = t(xi), tt(txi)
        same(y, ty)
        same(t.inv(y), tt.inv(ty))
        if name != "AbsTransform":
            same(t.log_abs_det_jacobian(xi, y), tt.log_abs_det_jacobian(txi, ty))
        assert repr(t) == repr(tt)
    c, tc = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]), \
        torch.distributions.transforms.ComposeTransform([torch.distributions.transforms.ExpTransform(),
                                                         torch.distributions.transforms.AffineTransform(1.0, 2.0)])
    same(c(x), tc(tx))
    same(c.log_abs_det_jacobian(x, c(x)), tc.log_abs_det_jacobian(tx, tc(tx)))
    same(c.inv(c(x)), tx)
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv == T.ExpTransform().inv
    sm = T.SoftmaxTransform()
    same(sm(x), torch.distributions.transforms.SoftmaxTransform()(tx))


def test_constraints():
    C, TC = D(ct).constraints, torch.distributions.constraints
    v = [-1.0, 0.0, 0.5, 1.0, 2.5, float("nan")]
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer",
                 "positive_integer"):
        same(getattr(C, name).check(ct.tensor(v)), getattr(TC, name).check(torch.tensor(v)))
        assert repr(getattr(C, name)) == repr(getattr(TC, name))
    for c, tc in [(C.integer_interval(0, 2), TC.integer_interval(0, 2)), (C.interval(-1, 1), TC.interval(-1, 1)),
                  (C.greater_than(0.5), TC.greater_than(0.5)), (C.less_than(1.0), TC.less_than(1.0)),
                  (C.half_open_interval(0, 1), TC.half_open_interval(0, 1)),
                  (C.greater_than_eq(0.0), TC.greater_than_eq(0.0))]:
        same(c.check(ct.tensor(v)), tc.check(torch.tensor(v)))
        assert repr(c) == repr(tc)
    m = [SIMPLEX, COV, TRIL, A, -COV]
    for name in ("simplex", "lower_cholesky", "lower_triangular", "positive_definite", "symmetric", "square",
                 "positive_semidefinite", "real_vector"):
        for a in m:
            same(getattr(C, name).check(ct.tensor(a)), getattr(TC, name).check(torch.tensor(a)))
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert repr(C.independent(C.real, 1)) == repr(TC.independent(TC.real, 1))


def test_utils():
    U, TU = D(ct).utils, torch.distributions.utils
    p = ct.tensor(SIMPLEX)
    same(U.probs_to_logits(p), TU.probs_to_logits(torch.tensor(SIMPLEX)))
    same(U.logits_to_probs(ct.tensor(LOGITS)), TU.logits_to_probs(torch.tensor(LOGITS)))
    same(U.probs_to_logits(ct.tensor(PROB), True), TU.probs_to_logits(torch.tensor(PROB), True))
    a, b = U.broadcast_all(ct.tensor([1.0, 2.0]), 3.0)
    assert a.shape == b.shape == (2,) and b.dtype == ct.float32
    vec = ct.arange(6.0)
    same(U.vec_to_tril_matrix(vec), TU.vec_to_tril_matrix(torch.arange(6.0)))
    same(U.tril_matrix_to_vec(U.vec_to_tril_matrix(vec)), torch.arange(6.0))


def test_biject_to():
    R, TR = D(ct).constraint_registry, torch.distributions.constraint_registry
    x = ct.tensor(RS.randn(2, 3))
    for c, tc in [(D(ct).constraints.positive, torch.distributions.constraints.positive),
                  (D(ct).constraints.interval(-2.0, 3.0), torch.distributions.constraints.interval(-2.0, 3.0)),
                  (D(ct).constraints.unit_interval, torch.distributions.constraints.unit_interval),
                  (D(ct).constraints.greater_than(1.0), torch.distributions.constraints.greater_than(1.0)),
                  (D(ct).constraints.real_vector, torch.distributions.constraints.real_vector)]:
        t, tt = R.biject_to(c), TR.biject_to(tc)
        y = t(x)
        same(y, tt(torch.tensor(x.tolist(), dtype=torch.float64)))
        assert bool(c.check(y).all())
        same(t.inv(y), x.tolist() and torch.tensor(x.tolist(), dtype=torch.float64))
    y = R.transform_to(D(ct).constraints.simplex)(x)
    assert bool(D(ct).constraints.simplex.check(y).all())


def test_private_gamma_and_dirichlet_samplers():
    """torch._standard_gamma / torch._sample_dirichlet (mixup in torchvision's reference scripts): the same
    shapes, dtypes and law as torch's (their streams: test_gamma_family_follows_torchs_stream)."""
    ct.manual_seed(0)
    alpha = ct.tensor([0.2, 0.2])
    s = ct._sample_dirichlet(alpha)
    ref = torch._sample_dirichlet(torch.tensor([0.2, 0.2]))
    assert s.shape == ref.shape and str(s.dtype) == str(ref.dtype) and abs(s.sum().item() - 1) < 1e-6
    many = ct._sample_dirichlet(ct.tensor([2.0, 1.0, 1.0], dtype=ct.float64).expand(20000, 3))
    assert many.dtype == ct.float64 and ct.allclose(many.sum(-1), ct.ones(20000, dtype=ct.float64))
    assert ct.allclose(many.mean(0), ct.tensor([0.5, 0.25, 0.25], dtype=ct.float64), atol=0.01)
    # a small concentration: the gammas are drawn in float64, so float32 rows are nearly one-hot, as torch's
    # (float32 draws underflow to tiny and normalized to exactly uniform rows)
    small = ct._sample_dirichlet(ct.full((2000, 3), 1e-2))
    near_one_hot = (small.max(-1).values > 0.99).float().mean().item()
    ref = torch._sample_dirichlet(torch.full((2000, 3), 1e-2))
    assert small.dtype == ct.float32 and abs(near_one_hot - (ref.max(-1).values > 0.99).float().mean().item()) < 0.05
    a = ct.full((20000,), 3.0, requires_grad=True)
    g = ct._standard_gamma(a)
    assert g.shape == a.shape and (g > 0).all() and abs(g.mean().item() - 3.0) < 0.05
    g.sum().backward()                  # implicit reparameterization: d/dalpha E[g] = 1
    assert abs(a.grad.mean().item() - 1.0) < 0.05
    g1, g2 = ct.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert ct._standard_gamma(ct.ones(6), generator=g1).tolist() == torch._standard_gamma(torch.ones(6), generator=g2).tolist()
    assert ct._sample_dirichlet(ct.ones(2, 3), g1).tolist() == torch._sample_dirichlet(torch.ones(2, 3), g2).tolist()


GAMMA_FAMILY = [
    lambda L, dt: L._standard_gamma(L.tensor([float("nan"), -1, 0, float("inf"), -0.5, 1e-30, 0.3, 0.999, 1.0,
                                              2.5, 5.0, 100.0], dtype=dt)),
    lambda L, dt: L._standard_gamma(L.tensor([[0.5], [3.0]], dtype=dt).expand(2, 40).t()),
    lambda L, dt: L._sample_dirichlet(L.tensor([[0.1, 2.0, 1.0], [30.0, 0.5, 4.0]], dtype=dt)),
    lambda L, dt: L._sample_dirichlet(L.tensor([1e-30, 1e-30, 2.0], dtype=dt)),
    lambda L, dt: L.distributions.Gamma(L.tensor([0.5, 2.0, 7.0], dtype=dt), L.tensor([1.0, 2.0, 3.0], dtype=dt)).sample((4,)),
    lambda L, dt: L.distributions.Chi2(L.tensor([3.0, 1.0], dtype=dt)).sample((5,)),
    lambda L, dt: L.distributions.Beta(L.tensor([0.5, 2.0], dtype=dt), L.tensor([1.0, 3.0], dtype=dt)).sample((3,)),
    lambda L, dt: L.distributions.Dirichlet(L.tensor([0.5, 2.0, 1.0], dtype=dt)).sample((3,)),
    lambda L, dt: L.distributions.Gamma(L.tensor([0.5, 2.0], dtype=dt, requires_grad=True), 2.0).rsample((3,)),
    lambda L, dt: L.distributions.Dirichlet(L.tensor([0.5, 2.0, 1.0], dtype=dt, requires_grad=True)).rsample((3,)),
    lambda L, dt: L.distributions.Beta(L.tensor([0.5, 2.0], dtype=dt, requires_grad=True), 3.0).rsample((3,)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", range(len(GAMMA_FAMILY)))
def test_gamma_family_follows_torchs_stream(k, dtype):
    """torch's CPU gamma sampler step for step (Marsaglia-Tsang on its normal and uniform draws, float32
    alphas boosted in float): a seed gives torch's numbers exactly for _standard_gamma, _sample_dirichlet and
    the distributions built on them, with and without gradient, and leaves the generator where torch's
    is (the cached Box-Muller normal included: the randn after agrees too)"""
    for seed in (0, 1, 7):
        ct.manual_seed(seed)
        torch.manual_seed(seed)
        a = GAMMA_FAMILY[k](ct, getattr(ct, dtype))
        b = GAMMA_FAMILY[k](torch, getattr(torch, dtype))
        assert str(a.dtype) == str(b.dtype) and a.tolist() == b.tolist()
        assert ct.randn(3, dtype=ct.float64).tolist() == torch.randn(3, dtype=torch.float64).tolist()


def test_small_gamma_and_beta_draws_take_torchs_stream():
    """a few elements (MixUp's Beta(a, a), a < 1 boosted included) are drawn one at a time as torch's serial
    kernel draws them: the seeded values equal torch's"""
    for alpha in ([0.3], [0.3, 0.3, 2.0], [1.0, 5.0]):
        ct.manual_seed(1)
        torch.manual_seed(1)
        got = ct._standard_gamma(ct.tensor(alpha, dtype=ct.float64))
        want = torch._standard_gamma(torch.tensor(alpha, dtype=torch.float64))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for a in (0.2, 0.4, 1.0):
        ct.manual_seed(7)
        torch.manual_seed(7)
        got = ct.distributions.Beta(ct.tensor([a]), ct.tensor([a])).sample(())
        want = torch.distributions.Beta(torch.tensor([a]), torch.tensor([a])).sample(())
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_standard_gamma_and_dirichlet_edge_inputs_like_torch():
    """Integer input is torch's NotImplementedError; an alpha that is not
    positive (no draw is ever accepted) gives the smallest normal, as torch
    gives, instead of a sampler that never ends; inf alpha gives inf"""
    for name, kernel in (("_standard_gamma", "gamma_cpu"), ("_sample_dirichlet", "dirichlet")):
        for lib in (ct, torch):
            with pytest.raises(NotImplementedError, match='"%s" not implemented for \'Long\'' % kernel):
                getattr(lib, name)(lib.full((1,), -128.0).to(lib.int64))
    for vals in ([-1.0, 0.0, -128.0], [float("nan"), float("inf")]):
        a = ct._standard_gamma(ct.tensor(vals)).numpy()
        b = torch._standard_gamma(torch.tensor(vals)).numpy()
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ct._sample_dirichlet(ct.full((3,), -1.0)).numpy(),
                                  torch._sample_dirichlet(torch.full((3,), -1.0)).numpy())


@pytest.mark.parametrize("make", [lambda D: D.Gumbel(0., -1.), lambda D: D.StudentT(-1.), lambda D: D.Pareto(1., 0.),
                                  lambda D: D.Weibull(1., -2.), lambda D: D.HalfCauchy(-1.),
                                  lambda D: D.InverseGamma(-1., 1.),
                                  lambda D: D.Pareto(D.Normal(0., 1.).mean.new_ones(2), 3.).log_prob(
                                      D.Normal(0., 1.).mean.new_tensor([0.5, 2.]))])
def test_added_distributions_validate_like_torch(make):
    oracle.raises_like(lambda: make(ct.distributions), lambda: make(torch.distributions))


@pytest.mark.parametrize("name", ["Gumbel", "HalfCauchy", "Weibull", "Pareto", "InverseGamma", "StudentT",
                                  "FisherSnedecor", "Kumaraswamy"])
def test_added_distributions_expand_and_repr(name):
    d, t = build(ct, name)[0].expand((4, 3)), build(torch, name)[0].expand((4, 3))
    assert d.batch_shape == t.batch_shape
    assert repr(d) == repr(t)
    assert tuple(d.sample((2,)).shape) == tuple(t.sample((2,)).shape) == (2, 4, 3)
    v = ct.tensor(CASES[name][2])
    same(d.log_prob(v), t.log_prob(torch.tensor(CASES[name][2])), 1e-6)


def test_stick_breaking_transform_matches_torch():
    x = RS.randn(4, 3)
    c, t = ct.distributions.StickBreakingTransform(), torch.distributions.StickBreakingTransform()
    cx, tx = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cy, ty = c(cx), t(tx)
    same(cy, ty, 1e-10)
    same(c.inv(cy.detach()), tx.detach(), 1e-8)
    same(c.log_abs_det_jacobian(cx, cy), t.log_abs_det_jacobian(tx, ty), 1e-10)
    assert c.forward_shape((4, 3)) == t.forward_shape((4, 3)) and c.inverse_shape((4, 4)) == t.inverse_shape((4, 4))
    assert c.bijective and c == ct.distributions.StickBreakingTransform()
    same(ct.autograd.grad(cy.pow(2).sum(), cx)[0], torch.autograd.grad(ty.pow(2).sum(), tx)[0], 1e-10)
    d, td = build(ct, "LogisticNormal")[0], build(torch, "LogisticNormal")[0]
    assert d.event_shape == td.event_shape and tuple(d.rsample((5,)).shape) == (5, 2, 4)
    assert bool(d.support.check(d.sample((3,))).all())


def test_reshape_transform_matches_torch():
    c, t = ct.distributions.ReshapeTransform((2, 3), (6,)), torch.distributions.ReshapeTransform((2, 3), (6,))
    assert repr(c.domain) == repr(t.domain) and repr(c.codomain) == repr(t.codomain)
    x = RS.randn(4, 2, 3)
    cy, ty = c(ct.tensor(x)), t(torch.tensor(x))
    same(cy, ty, 0)
    same(c.inv(cy), torch.tensor(x), 0)
    same(c.log_abs_det_jacobian(ct.tensor(x), cy), t.log_abs_det_jacobian(torch.tensor(x), ty), 0)
    assert tuple(c.forward_shape((4, 2, 3))) == tuple(t.forward_shape((4, 2, 3)))
    assert tuple(c.inverse_shape((4, 6))) == tuple(t.inverse_shape((4, 6)))
    assert c.with_cache().in_shape == c.in_shape and c.bijective
    for f in (lambda D, r: D.ReshapeTransform((2, 3), (5,)), lambda D, r: r.forward_shape((3, 3)),
              lambda D, r: r.inverse_shape((5,))):
        oracle.raises_like(lambda: f(ct.distributions, c), lambda: f(torch.distributions, t))
    d = ct.distributions.TransformedDistribution(ct.distributions.Independent(ct.distributions.Normal(
        ct.zeros(2, 3), ct.ones(2, 3)), 2), c)
    td = torch.distributions.TransformedDistribution(torch.distributions.Independent(torch.distributions.Normal(
        torch.zeros(2, 3), torch.ones(2, 3)), 2), t)
    assert d.event_shape == td.event_shape
    v = RS.randn(6).astype("float32")
    same(d.log_prob(ct.tensor(v)), td.log_prob(torch.tensor(v)), 1e-6)


# seeded draws that reduce to rand/randn (icdf of uniforms, Best-Fisher rejection, W eps_W + sqrt(D) eps_D) are torch's
DRAWS = ["ContinuousBernoulli", "GeneralizedPareto", "GeneralizedPareto_c0", "VonMises", "LowRankMVN"]


@pytest.mark.parametrize("name", DRAWS)
def test_seeded_draws_match_torch(name):
    outs = []
    for L in (ct, torch):
        L.manual_seed(7)
        d = build(L, name)[0]
        outs.append(d.sample((4,)))
        if d.has_rsample:
            outs.append(d.rsample((2,)))
    half = len(outs) // 2
    for a, b in zip(outs[:half], outs[half:]):
        same(a.detach(), b.detach(), 1e-6)


@pytest.mark.parametrize("name", ["NegativeBinomial", "ContinuousBernoulli", "GeneralizedPareto", "VonMises",
                                  "LowRankMVN"])
def test_new_distributions_expand_and_repr(name):
    shape = (4,) + tuple(build(torch, name)[0].batch_shape)
    d, t = build(ct, name)[0].expand(shape), build(torch, name)[0].expand(shape)
    assert d.batch_shape == t.batch_shape and d.event_shape == t.event_shape
    assert repr(d) == repr(t)
    assert tuple(d.sample((2,)).shape) == tuple(t.sample((2,)).shape)
    v = CASES[name][2]
    same(d.log_prob(ct.tensor(v)), t.log_prob(torch.tensor(v)), 1e-6)


def test_lowrank_mvn_matrices_and_errors():
    for attr in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        same(getattr(build(ct, "LowRankMVN")[0], attr).detach(), getattr(build(torch, "LowRankMVN")[0], attr).detach())
    for f in (lambda L: D(L).LowRankMultivariateNormal(L.tensor(0.0), L.ones(1, 1), L.ones(1)),
              lambda L: D(L).LowRankMultivariateNormal(L.zeros(3), L.ones(3), L.ones(3)),
              lambda L: D(L).LowRankMultivariateNormal(L.zeros(3), L.ones(2, 1), L.ones(3)),
              lambda L: D(L).LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(2)),
              lambda L: D(L).LowRankMultivariateNormal(L.zeros(2, 3), L.ones(3, 3, 1), L.ones(3)),
              lambda L: D(L).NegativeBinomial(L.tensor([-1.0]), L.tensor([0.5])),
              lambda L: D(L).ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
              lambda L: D(L).VonMises(0.0, -1.0),
              lambda L: D(L).GeneralizedPareto(0.0, 1.0, -0.5).log_prob(L.tensor(3.0))):
        oracle.raises_like(lambda: f(ct), lambda: f(torch), first_line=True)


NEW_TRANSFORMS = [
    ("CorrCholesky", lambda T: T.CorrCholeskyTransform(), (2, 6)),
    ("LowerCholesky", lambda T: T.LowerCholeskyTransform(), (2, 3, 3)),
    ("PositiveDefinite", lambda T: T.PositiveDefiniteTransform(), (2, 3, 3)),
    ("Cat", lambda T: T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0), T.SigmoidTransform()], dim=1,
                                     lengths=[1, 2, 2]), (3, 5)),
    ("Cat_event", lambda T: T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1), T.SigmoidTransform()],
                                           dim=-1, lengths=[2, 3]), (3, 5)),
    ("Stack", lambda T: T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1), (3, 2)),
    ("CDF", lambda T: T.CumulativeDistributionTransform(T.__dict__["_dist"]), (4,)),
]


@pytest.mark.parametrize("name,make,shape", NEW_TRANSFORMS, ids=[t[0] for t in NEW_TRANSFORMS])
def test_new_transforms_match_torch(name, make, shape):
    x = RS.randn(*shape)
    outs = []
    for L in (ct, torch):
        T = D(L).transforms
        T._dist = D(L).Normal(L.tensor(0.5, dtype=L.float64), L.tensor(2.0, dtype=L.float64))
        t = make(T)
        xx = L.tensor(x, requires_grad=True)
        y = t(xx)
        ldj = t.log_abs_det_jacobian(xx, y) if name not in ("LowerCholesky", "PositiveDefinite") else y.sum() * 0
        w = L.cos(L.arange(y.numel(), dtype=y.dtype)).reshape(y.shape)
        g = L.autograd.grad((y * w).sum() + ldj.sum(), xx)[0]
        outs.append((y, t.inv(y), ldj, g, tuple(t.forward_shape(shape)), t.bijective, t.domain.event_dim,
                     t.codomain.event_dim, repr(t.codomain)))
        del T._dist
    for a, b in zip(*outs):
        if isinstance(a, ct.Tensor):
            same(a.detach(), b.detach(), 1e-6)
        else:
            assert a == b


def test_new_constraint_registrations():
    C, TC = D(ct).constraints, torch.distributions.constraints
    x = RS.randn(2, 3)
    for reg, c, tc in [("biject_to", C.corr_cholesky, TC.corr_cholesky), ("biject_to", C.simplex, TC.simplex),
                       ("transform_to", C.positive_definite, TC.positive_definite),
                       ("transform_to", C.lower_cholesky, TC.lower_cholesky),
                       ("biject_to", C.cat([C.positive, C.real], 1, [1, 2]), TC.cat([TC.positive, TC.real], 1, [1, 2])),
                       ("transform_to", C.stack([C.unit_interval, C.positive, C.real], 1),
                        TC.stack([TC.unit_interval, TC.positive, TC.real], 1))]:
        t, tt = getattr(D(ct), reg)(c), getattr(torch.distributions, reg)(tc)
        assert type(t).__name__ == type(tt).__name__
        xi = x if "Cholesky" not in type(t).__name__ and "Definite" not in type(t).__name__ else RS.randn(2, 3, 3)
        same(t(ct.tensor(xi)), tt(torch.tensor(xi)))


def test_lkj_cholesky_matches_torch():
    x = RS.randn(2, 6)
    outs = []
    for L in (ct, torch):
        conc = L.tensor([0.7, 2.5], dtype=L.float64, requires_grad=True)
        d = L.distributions.LKJCholesky(4, conc)
        v = L.distributions.transforms.CorrCholeskyTransform()(L.tensor(x))
        lp = d.log_prob(v)
        outs.append((lp, L.autograd.grad(lp.sum(), conc)[0], d.expand((5, 2)).batch_shape, repr(d)))
    (a, ga, ba, ra), (b, gb, bb, rb) = outs
    same(a.detach(), b.detach())
    same(ga, gb)
    assert ba == bb and ra == rb
    oracle.raises_like(lambda: ct.distributions.LKJCholesky(1), lambda: torch.distributions.LKJCholesky(1))


def test_lkj_cholesky_samples():
    # correlations of the onion method's draws: each off-diagonal one has variance 1 / (2 eta + dim - 1)
    ct.manual_seed(3)
    d = ct.distributions.LKJCholesky(3, ct.tensor([0.5, 2.0], dtype=ct.float64))
    L = d.sample((20000,))
    assert tuple(L.shape) == (20000, 2, 3, 3) and bool(d.support.check(L).all())
    C = L @ L.mT
    var = C[..., 0, 1].pow(2).mean(0)
    np.testing.assert_allclose(var.tolist(), [1 / (2 * 0.5 + 2), 1 / (2 * 2.0 + 2)], rtol=0.05)


def test_generalized_pareto_uniform_case_matches_torch():
    # concentration -1 is the uniform law on [loc, loc + scale]: at the upper end its log density is still
    # -log(scale) (the exponent 1/c + 1 is 0, and 0 * log(0) must not make a NaN)
    vals = []
    for L in (ct, torch):
        d = D(L).GeneralizedPareto(L.tensor([0.0, 0.0]), L.tensor([2.0, 2.0]), L.tensor([-1.0, -0.5]))
        vals.append([d.log_prob(L.tensor([v, v])) for v in (0.0, 1.0, 2.0)])
    for c, t in zip(*vals):
        same(c, t)
    assert float(vals[0][2][0]) == pytest.approx(-np.log(2.0))


def test_sample_n_warns_as_torchs_deprecation():
    """torch marks sample_n @deprecated(FutureWarning): the warning points at the caller's line"""
    import warnings
    got = {}
    for lib in (ct, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = lib.distributions.Normal(lib.zeros(2), 1.0).sample_n(3)
        got[lib.__name__] = ([(x.category, str(x.message), x.filename) for x in w], tuple(s.shape))
    assert got["cthtorch"] == got["torch"]
    assert got["torch"][0][0][2] == __file__
