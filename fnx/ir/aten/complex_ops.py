"""Complex numbers: ``complex``, ``polar``, ``real``, ``imag``, ``angle``, ``conj``,
``conj_physical``, ``resolve_conj``.

Decompositions (CompositeImplicit) onto ``prims.complex``/``prims.conj`` and the views
``view_as_real``/``select``: ``real`` and ``imag`` of a complex tensor are views (writing
into them writes the complex tensor), as in PyTorch, and of a real tensor ``real`` is the
tensor itself.  fnx keeps no lazy conjugate bit, so ``conj`` of a complex tensor is a
materialized conjugate (a new tensor, not a view; ``is_conj`` is always False and
``resolve_conj`` returns its input).  Gradients follow PyTorch's convention for complex
inputs (the conjugate Wirtinger derivative, ``dL/dx + i dL/dy``), from the prims'.
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from ..dims import broadcast_shapes
from ..registry import defop

__all__ = ["complex", "polar", "real", "imag", "angle", "conj", "conj_physical",
           "resolve_conj"]

_PARTS = (D.float32, D.float64)


def _composite(schema, fn):
    return defop(schema, decomposition=fn)


def _check_parts(a, b):
    """PyTorch's checks of ``complex``/``polar``: float parts of one dtype."""
    floats = (D.float16, D.float32, D.float64)
    if a.dtype not in floats or b.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.scalar_type} and {b.dtype.scalar_type}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.scalar_type} but got "
                           f"scalar type {b.dtype.scalar_type} for second argument")
    if a.dtype not in _PARTS:
        raise RuntimeError("complex32 (a complex of Half parts) is not supported by fnx")


def _make_complex(re, im):
    shape = list(broadcast_shapes(tuple(re.shape), tuple(im.shape)))
    if list(re.shape) != shape:
        re = aten.expand.default(re, shape)
    if list(im.shape) != shape:
        im = aten.expand.default(im, shape)
    return prims.complex(re, im)


def _complex(real, imag):
    _check_parts(real, imag)
    return _make_complex(real, imag)


def _polar(abs, angle):
    _check_parts(abs, angle)
    return _make_complex(aten.mul.Tensor(abs, aten.cos.default(angle)),
                         aten.mul.Tensor(abs, aten.sin.default(angle)))


complex = _composite("complex(Tensor real, Tensor imag) -> Tensor", _complex)
polar = _composite("polar(Tensor abs, Tensor angle) -> Tensor", _polar)


def _real(self):
    if not self.dtype.is_complex:
        return self
    return aten.select.int(aten.view_as_real.default(self), -1, 0)


def _imag(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return aten.select.int(aten.view_as_real.default(self), -1, 1)


real = _composite("real(Tensor(a) self) -> Tensor(a)", _real)
imag = _composite("imag(Tensor(a) self) -> Tensor(a)", _imag)


def _angle(self):
    if self.dtype.is_complex:
        return aten.atan2.default(prims.imag(self), prims.real(self))
    x = self
    if not x.dtype.is_floating_point:          # integers and bool: the default float dtype
        x = aten._to_copy.default(x, dtype=D.get_default_dtype())
    # pi for negatives, 0 otherwise (also -0.0), NaN stays NaN; the gradient is zero
    signed = aten.where.self(aten.lt.Scalar(x, 0), math.pi, 0.0)
    signed = aten._to_copy.default(signed, dtype=x.dtype)
    return aten.where.self(aten.isnan.default(x), x, signed)


angle = _composite("angle(Tensor self) -> Tensor", _angle)


def _conj(self):
    return prims.conj(self) if self.dtype.is_complex else self


def _conj_physical(self):
    return prims.conj(self) if self.dtype.is_complex else aten.clone.default(self)


conj = _composite("conj(Tensor(a) self) -> Tensor(a)", _conj)
conj_physical = _composite("conj_physical(Tensor self) -> Tensor", _conj_physical)
resolve_conj = _composite("resolve_conj(Tensor(a) self) -> Tensor(a)", lambda self: self)
