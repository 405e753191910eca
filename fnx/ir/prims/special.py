"""Special-function prims (``jax.lax``'s): the exponentially scaled modified Bessel functions
``bessel_i0e``/``bessel_i1e``, the regularized incomplete gamma functions ``igamma``
(lower, P(a, x)) and ``igammac`` (upper, Q(a, x)), ``polygamma(m, x)`` (m a float tensor of
whole numbers) and the Hurwitz zeta function ``zeta(x, q)``.

Their derivatives are PyTorch's; like PyTorch, none exists with respect to the order or
shape parameter of igamma/igammac/zeta (a RuntimeError at backward).
"""
from __future__ import annotations

from ...ops import prims as _p
from ._common import like, plus
from .checks import FLOAT
from .elementwise import binary, unary

__all__ = ["bessel_i0e", "bessel_i1e", "igamma", "igammac", "polygamma", "zeta"]


def _not_implemented(what):
    return RuntimeError(f"the derivative for '{what}' is not implemented.")


def _i0e_backward(grad, self):
    # d/dx e^-|x| I0(x) = e^-|x| I1(x) - sign(x) e^-|x| I0(x)
    return _p.mul(grad, _p.sub(_p.bessel_i1e(self), _p.mul(_p.sign(self), _p.bessel_i0e(self))))


def _i1e_backward(grad, self, result):
    # I1' = I0 - I1 / x, so (e^-|x| I1)' = i0e - i1e (sign(x) + 1 / x); 1/2 at x = 0
    zero = _p.eq(self, like(self, 0))
    safe = _p.where(zero, like(self, 1), self)
    d = _p.sub(_p.bessel_i0e(self), _p.mul(result, _p.add(_p.sign(self), _p.div(like(safe, 1),
                                                                              safe))))
    return _p.mul(grad, _p.where(zero, like(self, 0.5), d))


bessel_i0e = unary("bessel_i0e", FLOAT, _i0e_backward)
bessel_i1e = unary("bessel_i1e", FLOAT, _i1e_backward)


def _igamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)."""
    return _p.exp(_p.sub(_p.sub(_p.mul(plus(a, -1), _p.log(x)), x), _p.lgamma(a)))


def _igamma_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("igamma: input")
    return None, _p.mul(grad, _igamma_density(self, other))


def _igammac_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("igammac: input")
    return None, _p.neg(_p.mul(grad, _igamma_density(self, other)))


igamma = binary("igamma", FLOAT, _igamma_backward)
igammac = binary("igammac", FLOAT, _igammac_backward)


def _polygamma_backward(grad, self, other, needs_input_grad):
    # the order is a whole number: no gradient; d/dx psi^(m)(x) = psi^(m+1)(x)
    return None, _p.mul(grad, _p.polygamma(plus(self, 1), other))


def _zeta_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("zeta: input")
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return None, _p.mul(grad, _p.neg(_p.mul(self, _p.zeta(plus(self, 1), other))))


polygamma = binary("polygamma", FLOAT, _polygamma_backward)
zeta = binary("zeta", FLOAT, _zeta_backward)
