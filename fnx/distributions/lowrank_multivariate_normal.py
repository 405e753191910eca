"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``."""
from __future__ import annotations

import math

from .. import api as fnx
from .. import linalg
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shape, lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal with covariance ``W W^T + diag(D)``, ``W = cov_factor`` of
    shape ``(n, rank)`` and ``D = cov_diag``: ``log_prob`` and ``entropy`` cost
    ``O(n rank^2)`` through the Woodbury identity and the matrix determinant lemma.

    >>> import fnx
    >>> d = fnx.distributions.LowRankMultivariateNormal(fnx.zeros(2), fnx.zeros(2, 1),
    ...                                                  fnx.ones(2))
    >>> round(d.log_prob(fnx.zeros(2)).item(), 4)
    -1.8379
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _param_event_dims = {"loc": 1, "cov_factor": 2, "cov_diag": 1}

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if cov_diag.dim() < 1 or cov_diag.shape[-1] != n:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(n,)}")
        try:
            batch_shape = broadcast_shape(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                          tuple(cov_diag.shape[:-1]))
        except ValueError as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
                             ) from e
        rank = cov_factor.shape[-1]
        self.loc = loc.expand(batch_shape + (n,))
        self.cov_factor = cov_factor.expand(batch_shape + (n, rank))
        self.cov_diag = cov_diag.expand(batch_shape + (n,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        # after validation: a nonpositive cov_diag is a ValueError, not a Cholesky failure
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        for name in ("scale_tril", "covariance_matrix", "precision_matrix"):
            new.__dict__.pop(name, None)
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        cov = w @ w.mT + fnx.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1, C = I + W^T D^-1 W
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv = w.mT / d.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = fnx.diag_embed(d.reciprocal()) - a.mT @ a
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        w = self._unbroadcasted_cov_factor
        eps_w = fnx.randn(tuple(shape[:-1]) + (w.shape[-1],), dtype=self.loc.dtype,
                          device=self.loc.device)
        eps_d = fnx.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (w @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        # matrix determinant lemma: log|W W^T + D| = log|C| + log|D|
        cap_log_det = 2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return cap_log_det + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        # x^T (W W^T + D)^-1 x = x^T D^-1 x - |L^-1 W^T D^-1 x|^2, L L^T = C
        wt_dinv = w.mT / d.unsqueeze(-2)
        wt_dinv_x = (wt_dinv @ diff.unsqueeze(-1))
        shape = broadcast_shape(tuple(self._capacitance_tril.shape[:-2]),
                                tuple(wt_dinv_x.shape[:-2]))
        rank = w.shape[-1]
        lower = self._capacitance_tril.expand(shape + (rank, rank))
        solved = linalg.solve_triangular(lower, wt_dinv_x.expand(shape + (rank, 1)),
                                         upper=False)
        mahalanobis = (diff.pow(2) / d).sum(-1) - solved.squeeze(-1).pow(2).sum(-1)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + mahalanobis + self._log_det())

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * (k * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


def _capacitance_tril(w, d):
    # the Cholesky factor of C = I + W^T D^-1 W
    m = w.shape[-1]
    wt_dinv = w.mT / d.unsqueeze(-2)
    capacitance = wt_dinv @ w + fnx.eye(m, dtype=w.dtype, device=w.device)
    return linalg.cholesky(capacitance)
