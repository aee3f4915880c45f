"""kl_divergence against torch for every (p, q) pair torch registers: the
registry holds the same pairs, and each pair's value (finite, or inf where
q's support misses p's) and gradient equal torch's."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from test_torch_api import same

torch = oracle.require_torch()
RS = np.random.RandomState(3)
LOC, POS, POS2, PROB = RS.randn(3), RS.rand(3) + 0.5, RS.rand(3) + 0.5, RS.rand(3) * 0.8 + 0.1
W = RS.randn(3, 2)
W_BATCH = RS.randn(2, 3, 1)
A = RS.randn(3, 3)
COV = A @ A.T + 3 * np.eye(3)

# type name -> makers (L, params as tensors) -> distribution; a few variants so both finite and infinite cases occur
MAKERS = {
    "Normal": [lambda L, t: L.distributions.Normal(t(LOC), t(POS))],
    "Laplace": [lambda L, t: L.distributions.Laplace(t(LOC), t(POS2))],
    "Cauchy": [lambda L, t: L.distributions.Cauchy(t(LOC), t(POS))],
    "Gumbel": [lambda L, t: L.distributions.Gumbel(t(LOC), t(POS2))],
    "Uniform": [lambda L, t: L.distributions.Uniform(t(LOC), t(LOC + 1 + POS)),
                lambda L, t: L.distributions.Uniform(t(PROB * 0.5), t(PROB * 0.5 + 0.3)),
                lambda L, t: L.distributions.Uniform(t(POS), t(POS + POS2))],
    "Exponential": [lambda L, t: L.distributions.Exponential(t(POS))],
    "Gamma": [lambda L, t: L.distributions.Gamma(t(POS + 1), t(POS2))],
    "Beta": [lambda L, t: L.distributions.Beta(t(POS), t(POS2))],
    "Pareto": [lambda L, t: L.distributions.Pareto(t(POS), t(POS2 + 2)),
               lambda L, t: L.distributions.Pareto(t(POS2), t(POS + 0.2))],
    "ContinuousBernoulli": [lambda L, t: L.distributions.ContinuousBernoulli(t(PROB)),
                            lambda L, t: L.distributions.ContinuousBernoulli(t(np.array([0.3, 0.4995, 0.7])))],
    "Bernoulli": [lambda L, t: L.distributions.Bernoulli(t(PROB))],
    "Binomial": [lambda L, t: L.distributions.Binomial(10, t(PROB))],
    "Poisson": [lambda L, t: L.distributions.Poisson(t(POS))],
    "HalfNormal": [lambda L, t: L.distributions.HalfNormal(t(POS))],
    "MultivariateNormal": [lambda L, t: L.distributions.MultivariateNormal(t(LOC), covariance_matrix=t(COV))],
    "LowRankMultivariateNormal": [lambda L, t: L.distributions.LowRankMultivariateNormal(t(LOC), t(W), t(POS)),
                                  lambda L, t: L.distributions.LowRankMultivariateNormal(
                                      t(POS), t(W_BATCH), t(POS2))],
}


def _pairs():
    out = []
    for p_type, q_type in torch.distributions.kl._KL_REGISTRY:
        p, q = p_type.__name__, q_type.__name__
        if p in MAKERS and q in MAKERS:
            for i in range(len(MAKERS[p])):
                for j in range(len(MAKERS[q])):
                    out.append((p, q, i, j))
    return sorted(out)


def test_registry_has_torchs_pairs():
    names = lambda reg: {(a.__name__, b.__name__) for a, b in reg}
    assert names(ct.distributions.kl._KL_REGISTRY) == names(torch.distributions.kl._KL_REGISTRY)


def test_every_concrete_family_is_covered():
    concrete = {t.__name__ for pair in torch.distributions.kl._KL_REGISTRY for t in pair}
    # abstract or covered in test_distributions.py (same-family pairs)
    left = concrete - set(MAKERS) - {"ExponentialFamily", "Categorical", "OneHotCategorical", "Dirichlet",
                                     "Geometric", "Independent", "TransformedDistribution"}
    assert not left


@pytest.mark.parametrize("p,q,i,j", _pairs(), ids=lambda v: str(v))
def test_kl_pair_matches_torch(p, q, i, j):
    outs = []
    for L in (ct, torch):
        params = []

        def t(a, L=L, params=params):
            x = L.tensor(a, requires_grad=True)
            params.append(x)
            return x
        kl = L.distributions.kl_divergence(MAKERS[p][i](L, t), MAKERS[q][j](L, t))
        finite = L.isfinite(kl)
        grads = L.autograd.grad(L.where(finite, kl, L.zeros_like(kl)).sum(), params, allow_unused=True) \
            if kl.requires_grad else [None] * len(params)
        outs.append((kl.detach(), [g if g is not None else L.zeros_like(x) for g, x in zip(grads, params)]))
    (ck, cg), (tk, tg) = outs
    same(ck, tk, 1e-6)
    for a, b in zip(cg, tg):
        same(a, b, 1e-6)


def test_exponential_family_bregman_divergence():
    # the generic fallback, called directly: every concrete family pair has a closed form registered
    outs = []
    for L in (ct, torch):
        p, q = L.distributions.Gamma(L.tensor(POS), L.tensor(POS2)), L.distributions.Gamma(L.tensor(POS2), 2.0)
        outs.append(L.distributions.kl._kl_expfamily_expfamily(p, q))
    same(*outs, 1e-6)
    for L in (ct, torch):
        with pytest.raises(NotImplementedError, match="different exponential families"):
            L.distributions.kl._kl_expfamily_expfamily(L.distributions.Gamma(1.0, 1.0), L.distributions.Poisson(1.0))


def test_lowrank_event_shape_mismatch():
    for L in (ct, torch):
        p = L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3))
        q = L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2))
        with pytest.raises(ValueError, match="different event shapes"):
            L.distributions.kl_divergence(p, q)
