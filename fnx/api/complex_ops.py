"""Complex numbers: ``fnx.complex``, ``polar``, ``real``, ``imag``, ``angle``, ``conj``,
``conj_physical``, ``resolve_conj``, ``is_conj``, ``is_complex``, ``adjoint``, and the
Tensor properties ``.real``/``.imag`` (readable and assignable), ``.H`` and ``.mH``.

fnx has no lazy conjugate bit: ``conj`` of a complex tensor returns a materialized
conjugate (a new tensor, not a view), ``is_conj`` is always False and ``resolve_conj``
returns its input.  ``real``/``imag`` of a complex tensor are views, as in PyTorch.
"""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ops import aten

__all__ = ["complex", "polar", "real", "imag", "angle", "conj", "conj_physical",
           "resolve_conj", "is_conj", "is_complex", "adjoint"]


def complex(real, imag):
    """The complex tensor ``real + i imag`` (float32 or float64 parts of one dtype,
    broadcast together).

    >>> import fnx
    >>> fnx.complex(fnx.tensor([1., 2.]), fnx.tensor([3., -1.])).tolist()
    [(1+3j), (2-1j)]
    """
    return aten.complex.default(real, imag)


def polar(abs, angle):
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``.

    >>> import fnx
    >>> z = fnx.polar(fnx.tensor([2.]), fnx.tensor([0.]))
    >>> z.tolist()
    [(2+0j)]
    """
    return aten.polar.default(abs, angle)


def real(input):
    """The real part: a view of a complex tensor (writes reach it); a real tensor itself.

    >>> import fnx
    >>> z = fnx.tensor([1 + 2j, 3 - 4j])
    >>> fnx.real(z).tolist(), z.real.tolist()
    ([1.0, 3.0], [1.0, 3.0])
    """
    return aten.real.default(input)


def imag(input):
    """The imaginary part of a complex tensor, as a view (real tensors raise).

    >>> import fnx
    >>> z = fnx.tensor([1 + 2j, 3 - 4j])
    >>> z.imag.tolist()
    [2.0, -4.0]
    >>> z.imag = fnx.tensor([0., 1.])
    >>> z.tolist()
    [(1+0j), (3+1j)]
    """
    return aten.imag.default(input)


@tensor_method()
def angle(input):
    """The argument of each element (radians); of a real tensor, pi for negatives and 0
    otherwise (integers give the default float dtype).

    >>> import fnx
    >>> [round(v, 4) for v in fnx.angle(fnx.tensor([1j, -1 + 0j])).tolist()]
    [1.5708, 3.1416]
    """
    return aten.angle.default(input)


@tensor_method()
def conj(input):
    """The complex conjugate.  fnx keeps no lazy conjugate bit: for a complex tensor this
    is a new, materialized tensor (PyTorch returns a lazily conjugated view); a real
    tensor is returned itself.

    >>> import fnx
    >>> fnx.tensor([1 + 2j]).conj().tolist()
    [(1-2j)]
    """
    return aten.conj.default(input)


@tensor_method()
def conj_physical(input):
    """The complex conjugate, computed (a copy for real tensors).

    >>> import fnx
    >>> fnx.conj_physical(fnx.tensor([1 - 1j])).tolist()
    [(1+1j)]
    """
    return aten.conj_physical.default(input)


@tensor_method()
def resolve_conj(input):
    """``input`` itself: fnx's conjugates are always materialized.

    >>> import fnx
    >>> x = fnx.tensor([1j])
    >>> fnx.resolve_conj(x) is x
    True
    """
    return aten.resolve_conj.default(input)


@tensor_method()
def is_conj(input) -> bool:
    """Always False: fnx has no lazy conjugate bit (``conj`` materializes).

    >>> import fnx
    >>> fnx.tensor([1j]).conj().is_conj()
    False
    """
    return False


def is_complex(input) -> bool:
    """Whether ``input``'s dtype is complex.

    >>> import fnx
    >>> fnx.is_complex(fnx.tensor([1j])), fnx.is_complex(fnx.tensor([1.]))
    (True, False)
    """
    return input.dtype.is_complex


@tensor_method()
def adjoint(input):
    """The conjugate transpose of the last two dims (``mH``).

    >>> import fnx
    >>> fnx.tensor([[1 + 1j, 2], [3, 4j]]).adjoint().tolist()
    [[(1-1j), (3-0j)], [(2-0j), -4j]]
    """
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return aten.conj.default(aten.transpose.int(input, -2, -1))


def _get_real(self):
    """The real part (a view of a complex tensor; assigning writes it).

    >>> import fnx
    >>> z = fnx.tensor([1 + 2j])
    >>> z.real = fnx.tensor([5.])
    >>> z.real.tolist(), z.tolist()
    ([5.0], [(5+2j)])
    """
    return real(self)


def _get_imag(self):
    """The imaginary part of a complex tensor (a view; assigning writes it).

    >>> import fnx
    >>> fnx.tensor([1 + 2j]).imag.tolist()
    [2.0]
    """
    return imag(self)


def _set_real(self, value):
    """Write ``value`` into the real part (``self.real.copy_(value)``).

    >>> import fnx
    >>> z = fnx.tensor([1j]); z.real = fnx.tensor([3.]); z.tolist()
    [(3+1j)]
    """
    real(self).copy_(value)


def _set_imag(self, value):
    """Write ``value`` into the imaginary part (``self.imag.copy_(value)``).

    >>> import fnx
    >>> z = fnx.tensor([1j]); z.imag = fnx.tensor([3.]); z.tolist()
    [3j]
    """
    imag(self).copy_(value)


def _mH(self):
    """The conjugate transpose of the last two dims (``adjoint``).

    >>> import fnx
    >>> fnx.zeros(5, 2, 3, dtype=fnx.complex64).mH.shape
    fnx.Size([5, 3, 2])
    """
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return adjoint(self)


def _H(self):
    """The conjugate transpose of a matrix (a 0-D or 2-D tensor).

    >>> import fnx
    >>> fnx.tensor([[1j, 2.]]).H.tolist()
    [[-1j], [(2-0j)]]
    """
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.")
    return self if self.ndim == 0 else adjoint(self)


Tensor.real = property(_get_real, _set_real)
Tensor.imag = property(_get_imag, _set_imag)
Tensor.mH = property(_mH)
Tensor.H = property(_H)
