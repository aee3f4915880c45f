"""cthtorch.distributions: PyTorch's torch.distributions API (parameterized
distributions, constraints, transforms, kl_divergence) on cthtorch ops, so
rsample/log_prob/entropy are differentiable."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .continuous_bernoulli import ContinuousBernoulli
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .geometric import Geometric
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .logistic_normal import LogisticNormal
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .student_t import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution", "ExponentialFamily",
    "Exponential", "ExpRelaxedCategorical", "Gamma", "Geometric", "HalfNormal", "Independent", "Laplace", "LogNormal",
    "LogitRelaxedBernoulli", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "TransformedDistribution", "Uniform", "Gumbel", "HalfCauchy", "InverseGamma", "Pareto", "StudentT",
    "Weibull", "FisherSnedecor", "Kumaraswamy", "LogisticNormal", "NegativeBinomial", "ContinuousBernoulli",
    "GeneralizedPareto", "VonMises", "LowRankMultivariateNormal", "LKJCholesky", "Wishart",
    "kl_divergence", "register_kl", "biject_to", "transform_to",
]
__all__.extend(transforms.__all__)
