"""``VonMises(loc, concentration)``."""
from __future__ import annotations

import math

from .. import api as fnx
from .. import special
from ..core.grad_mode import no_grad
from ..core.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, stops_early

# Best & Fisher's proposal is accepted with probability > 0.65 for every concentration, so
# an element is still unaccepted after 64 vectorized rounds with probability < 1e-11.
_ROUNDS = 64


def _log_i0(x):
    # log I0(x) without overflow: i0e(x) = exp(-|x|) I0(x)
    return fnx.log(special.i0e(x)) + x.abs()


class VonMises(Distribution):
    """The von Mises (circular normal) distribution on ``[-pi, pi)`` with mean direction
    ``loc`` and concentration ``kappa``; ``mean``/``variance`` are the circular ones.

    >>> import fnx
    >>> d = fnx.distributions.VonMises(fnx.tensor([0.0]), fnx.tensor([2.0]))
    >>> round(d.variance.item(), 4)
    0.3022
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * fnx.cos(value - self.loc) - math.log(2 * math.pi) - _log_i0(k)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # circular variance 1 - I1(k) / I0(k)
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)

    def sample(self, sample_shape=Size()):
        """Best & Fisher (1979) rejection sampling, vectorized; computed in float64."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            k = self.concentration.double().expand(shape)
            tau = 1 + (1 + 4 * k * k).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * k)
            # for tiny k, r = (1 + rho^2) / (2 rho) loses all precision: use its series
            r = fnx.where(k < 1e-5, 1 / k + k, (1 + rho * rho) / (2 * rho))
            out = fnx.zeros(shape, dtype=fnx.float64, device=k.device)
            done = fnx.zeros(shape, dtype=fnx.bool, device=k.device)
            for _ in range(_ROUNDS):
                u1 = fnx.rand(shape, dtype=fnx.float64, device=k.device)
                u2 = fnx.rand(shape, dtype=fnx.float64, device=k.device)
                u3 = fnx.rand(shape, dtype=fnx.float64, device=k.device)
                z = fnx.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                theta = fnx.sign(u3 - 0.5) * fnx.acos(f.clamp(min=-1, max=1))
                out = fnx.where(accept & ~done, theta, out)
                done = done | accept
                if stops_early() and bool(done.all()):
                    break
            loc = self.loc.double().expand(shape)
            x = fnx.remainder(out + loc + math.pi, 2 * math.pi) - math.pi
            return x.to(self.loc.dtype)
