"""``torch.special``'s Bessel and Airy functions: ``special_bessel_j0``/``j1``,
``special_bessel_y0``/``y1``, ``special_modified_bessel_i0``/``i1``/``k0``/``k1``,
``special_scaled_modified_bessel_k0``/``k1`` (``e^x K(x)``), ``special_spherical_bessel_j0``
(``sin(x)/x``) and ``special_airy_ai``, each with its ``out=`` form (no in-place form, as
PyTorch).

Integers and bools compute in the default float dtype; complex and half inputs are refused
with PyTorch's CPU message.  They decompose to the Bessel prims (``fnx/ir/prims/bessel.py``)
and ``bessel_i0e``/``bessel_i1e``; like PyTorch's, they have no derivative.
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims
from ..registry import nondifferentiable
from .special import FAMILIES, _scaled_up, _unary_decomposition, pointwise_family, real_meta

__all__ = ["BESSEL"]

# the ATen op's name after ``special_``
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
          "airy_ai"]


def _meta(name):
    base = real_meta(name, 1)

    def meta(self):
        if self.dtype in (D.float16, D.bfloat16):
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{self.dtype.scalar_type}'")
        return base(self)
    meta.__name__ = f"_{name}_meta"
    return meta


for _name in BESSEL:
    _op = pointwise_family(f"special_{_name}", "default", "Tensor self", _meta(_name), False)
    nondifferentiable(*FAMILIES[_op].values())


def _direct(name, prim):
    _unary_decomposition(f"special_{name}")(lambda self: prim(self))


for _name, _prim in [("bessel_j0", prims.bessel_j0), ("bessel_j1", prims.bessel_j1),
                     ("bessel_y0", prims.bessel_y0), ("bessel_y1", prims.bessel_y1),
                     ("scaled_modified_bessel_k0", prims.bessel_k0e),
                     ("scaled_modified_bessel_k1", prims.bessel_k1e),
                     ("airy_ai", prims.airy_ai)]:
    _direct(_name, _prim)


@_unary_decomposition("special_modified_bessel_i0")
def _i0(self):
    return _scaled_up(self, prims.bessel_i0e(self))


@_unary_decomposition("special_modified_bessel_i1")
def _i1(self):
    return _scaled_up(self, prims.bessel_i1e(self))


def _unscaled_k(scaled):
    # K(x) = e^-x (e^x K(x)): 0 at +inf (e^-inf is 0), inf at 0, NaN below 0 from the prim
    def k(self):
        return prims.mul(prims.exp(prims.neg(self)), scaled(self))
    return k


_unary_decomposition("special_modified_bessel_k0")(_unscaled_k(prims.bessel_k0e))
_unary_decomposition("special_modified_bessel_k1")(_unscaled_k(prims.bessel_k1e))


def _like(x, value):
    return prims.full(list(x.shape), value, dtype=x.dtype, device=x.device)


@_unary_decomposition("special_spherical_bessel_j0")
def _spherical_j0(self):
    # sin(x)/x: 1 at 0, 0 at +-inf (where sin is NaN)
    zero = prims.eq(self, _like(self, 0.0))
    safe = prims.where(zero, _like(self, 1.0), self)
    r = prims.where(zero, _like(self, 1.0), prims.div(prims.sin(safe), safe))
    inf = prims.eq(prims.abs(self), _like(self, float("inf")))
    return prims.where(inf, _like(self, 0.0), r)
