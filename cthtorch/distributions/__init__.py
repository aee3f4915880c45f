"""cthtorch.distributions: PyTorch's torch.distributions API (parameterized
distributions, constraints, transforms, kl_divergence) on cthtorch ops, so
rsample/log_prob/entropy are differentiable."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "ExponentialFamily",
    "Exponential", "ExpRelaxedCategorical", "Gamma", "Geometric", "Independent", "Laplace", "LogNormal",
    "LogitRelaxedBernoulli", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "TransformedDistribution", "Uniform", "kl_divergence", "register_kl",
]
__all__.extend(transforms.__all__)
