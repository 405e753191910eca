"""``MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)``."""
from __future__ import annotations

import math

from .. import api as fnx
from .. import linalg
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, lazy_property


def batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^{-1} x`` for a lower Cholesky factor ``bL`` and vectors ``bx``, batched."""
    shape = broadcast_shape(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    L = bL.expand(shape + (n, n))
    x = bx.expand(shape + (n,)).unsqueeze(-1)
    return linalg.solve_triangular(L, x, upper=False).squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor of the covariance).

    >>> import fnx
    >>> d = fnx.distributions.MultivariateNormal(fnx.zeros(2), fnx.eye(2))
    >>> d.event_shape, round(d.log_prob(fnx.zeros(2)).item(), 4)
    (fnx.Size([2]), -1.8379)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _param_event_dims = {"loc": 1, "covariance_matrix": 2, "precision_matrix": 2,
                         "scale_tril": 2}

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix)
                      if m is not None)
        name = "scale_tril" if scale_tril is not None else \
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix"
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = broadcast_shape(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        setattr(self, name, matrix.expand(batch_shape + (n, n)))
        self.loc = loc.expand(batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape
                                                     + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return linalg.inv(self.covariance_matrix)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = fnx.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
