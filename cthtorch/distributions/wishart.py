import math
import warnings
from numbers import Number

import cthtorch as torch

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG2 = math.log(2)


def _mvdigamma(x, p):
    """d/dx log Gamma_p(x) = sum_i digamma(x - i/2), i < p"""
    if not bool(x.gt((p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    half_steps = torch.arange(p, dtype=x.dtype, device=x.device) / 2
    return torch.digamma(x.unsqueeze(-1) - half_steps).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of X X^T for df Gaussian columns of
    covariance Sigma. Sampled by Bartlett's decomposition: L A (L A)^T with A lower triangular, sqrt(chi2(df - i)) on
    its diagonal and standard normals below."""
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = param.size(-1)
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is not None:
                setattr(self, name, m.expand(batch_shape + (-1, -1)))
        # the instance's own copy: df's bound depends on this distribution's dimension
        self.arg_constraints = dict(self.arg_constraints, df=constraints.greater_than(p - 1))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)
        self._make_chi2()

    def _make_chi2(self):
        """the chi2 laws of Bartlett's diagonal: df - i degrees of freedom for row i"""
        p = self._event_shape[-1]
        steps = torch.arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=self.df.device)
        self._dist_chi2 = Chi2(df=(self.df.unsqueeze(-1) - steps).expand(self._batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._batch_shape = batch_shape
        new._make_chi2()
        new._validate_args = self._validate_args
        return new

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        return self._full(torch.cholesky_solve(eye, L))

    def _df_matrix(self, x=None):
        return (self.df if x is None else x).expand(self._batch_shape).reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, torch.full_like(factor, math.nan), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=torch.Size()):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=torch.finfo(self.df.dtype).eps)
        A = torch.diag_embed(diag)
        rows, cols = torch.tril_indices(p, p, offset=-1)
        below = torch.randn(torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,), dtype=A.dtype,
                            device=A.device)
        A = _put_below(A, rows, cols, below)
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def rsample(self, sample_shape=torch.Size(), max_try_correction=None):
        """Samples that come out singular (df close to p - 1, or rounding) are drawn again, up to
        max_try_correction (10) times, with a warning."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                redo = self._bartlett_sampling(singular[singular].shape)
                sample = sample.clone()
                sample[singular] = redo
                still = self._singular(redo)
                singular = singular.clone()
                singular[singular.clone()] = still
                if not bool(singular.any()):
                    break
        return sample

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        return bad.amax(self._batch_dims) if self._batch_shape else bad

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_logdet = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = torch.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG2 / 2 + half_logdet) - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        half_logdet = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG2 / 2 + half_logdet) + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df.expand(self._batch_shape) - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        a = y + (p + 1) / 2
        return a * (-torch.linalg.slogdet(-2 * x).logabsdet + _LOG2 * p) + torch.mvlgamma(a, p=p)


def _put_below(A, rows, cols, below):
    """A with A[..., rows[k], cols[k]] = below[..., k] (differentiable in A's diagonal part)"""
    p = A.shape[-1]
    flat = rows * p + cols
    B = torch.zeros(below.shape[:-1] + (p * p,), dtype=A.dtype, device=A.device)
    B = B.index_copy(-1, flat, below) if below.shape[-1] else B
    return A + B.reshape(below.shape[:-1] + (p, p))
