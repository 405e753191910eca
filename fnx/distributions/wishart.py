"""``Wishart(df, covariance_matrix | precision_matrix | scale_tril)``."""
from __future__ import annotations

import math

from .. import api as fnx
from .. import linalg
from ..core.tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_shape, lazy_property


def _mvlgamma(a, p):
    # log of the multivariate gamma function Gamma_p(a)
    out = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + fnx.lgamma(a - j / 2)
    return out


def _mvdigamma(a, p):
    # d/da log Gamma_p(a)
    out = 0
    for j in range(p):
        out = out + fnx.digamma(a - j / 2)
    return out


class Wishart(Distribution):
    """The Wishart distribution over ``p x p`` positive definite matrices: the scatter
    matrix ``sum_k x_k x_k^T`` of ``df`` draws of ``N(0, covariance_matrix)`` (``df``
    may be any real ``> p - 1``). ``rsample`` uses the Bartlett decomposition.

    >>> import fnx
    >>> d = fnx.distributions.Wishart(fnx.tensor(4.0), fnx.eye(2))
    >>> d.mean
    tensor([[4., 0.],
            [0., 4.]])
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _param_event_dims = {"covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                      if m is not None)
        name = "scale_tril" if scale_tril is not None else \
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix"
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        p = matrix.shape[-1]
        if not isinstance(df, fnx.Tensor):
            df = fnx.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        batch_shape = broadcast_shape(tuple(matrix.shape[:-2]), tuple(df.shape))
        self.df = df.expand(batch_shape)
        setattr(self, name, matrix.expand(batch_shape + (p, p)))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        if self._validate_args and not bool((self.df > p - 1).all()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))
        # Bartlett: A_ii^2 ~ Chi2(df - i), i = 0 .. p-1
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - fnx.arange(
            p, dtype=self.df.dtype, device=self.df.device), validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.df = self.df.expand(batch_shape)
        p = self.event_shape[-1]
        new._dist_chi2 = self._dist_chi2.expand(tuple(batch_shape) + (p,))
        for name in ("scale_tril", "covariance_matrix", "precision_matrix"):
            if name not in self.__dict__:
                new.__dict__.pop(name, None)
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return linalg.inv(self.covariance_matrix)

    @property
    def mean(self):
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        p = self._event_shape[-1]
        factor = self.df - p - 1
        factor = fnx.where(factor > 0, factor, fnx.full_like(factor, float("nan")))
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def rsample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        shape = self._extended_shape(sample_shape)
        noise = fnx.randn(shape, dtype=self.df.dtype, device=self.df.device).tril(-1)
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        a = noise + fnx.diag_embed(diag)
        la = self._unbroadcasted_scale_tril @ a
        return la @ la.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        value_log_det = 2 * linalg.cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 X) = ||L^-1 chol(X)||_F^2
        shape = broadcast_shape(tuple(self._unbroadcasted_scale_tril.shape[:-2]),
                                tuple(value.shape[:-2]))
        solved = linalg.solve_triangular(
            self._unbroadcasted_scale_tril.expand(shape + (p, p)),
            linalg.cholesky(value).expand(shape + (p, p)), upper=False)
        trace = solved.pow(2).flatten(-2).sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det) - _mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * value_log_det - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
