"""``LKJCholesky(dim, concentration=1.0)``."""
from __future__ import annotations

import math

from .. import api as fnx
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, tiny


class LKJCholesky(Distribution):
    """The LKJ distribution over ``dim x dim`` correlation matrices ``C`` (density
    proportional to ``det(C)^(concentration - 1)``), expressed on their lower Cholesky
    factors ``L``. Sampling is the onion method (Lewandowski, Kurowicka & Joe, 2009).

    >>> import fnx
    >>> d = fnx.distributions.LKJCholesky(3, fnx.tensor(2.0))
    >>> L = d.sample()
    >>> L.shape, bool(fnx.distributions.constraints.corr_cholesky.check(L))
    (fnx.Size([3, 3]), True)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        event_shape = Size((dim, dim))
        # onion method: the squared norm of row i's off-diagonal part (i >= 1) is
        # Beta(i/2, c + (dim - 1 - i)/2); row 0 has none (its entry is a placeholder).
        # PyTorch 2.x uses Beta(i - 1/2, ...) here, which oversamples large correlations
        # in rows i >= 2 (their marginals then miss the LKJ law 2 Beta(b, b) - 1).
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = fnx.arange(self.dim - 1, dtype=self.concentration.dtype,
                            device=self.concentration.device)
        offset = fnx.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0, validate_args=False)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            u = fnx.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = u.norm(dim=-1, keepdim=True)
            # row 0 has no off-diagonal part (its norm is 0: avoid 0 / 0)
            first_row = fnx.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            u = fnx.where(first_row, fnx.zeros_like(u), u / fnx.where(first_row,
                                                                       fnx.ones_like(norm),
                                                                       norm))
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny(w.dtype)).sqrt()
            return w + fnx.diag_embed(diag)

    def log_prob(self, value):
        # p(L) ∝ prod_{i=2}^{dim} L_ii^(dim - i + 2 (c - 1)), normalized as in LKJ (2009)
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = fnx.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = fnx.lgamma(alpha) * dm1
        numerator = _mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)


def _mvlgamma(a, p):
    # log of the multivariate gamma function Gamma_p(a)
    out = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + fnx.lgamma(a - j / 2)
    return out
