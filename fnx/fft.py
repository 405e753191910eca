"""``fnx.fft``: discrete Fourier transforms, as ``torch.fft``.

Each function calls its ATen op (``fnx.ops.aten.fft_fft``, ...; defined in
``fnx/ir/aten/fft.py``), with PyTorch's arguments: ``n`` (1-dim) or ``s`` (n-dim) pads
with zeros or crops the input along the transformed dims first, ``dim`` picks them, and
``norm`` is ``"backward"`` (the default: the inverse transforms scale by 1/n),
``"ortho"`` (both by 1/sqrt(n)) or ``"forward"`` (the forward transforms by 1/n).
Integer inputs become the default float dtype; real inputs of ``fft`` give complex results
(complex64 for float32).  ``out=`` takes a tensor of the result's category (complex, or
floating point for ``irfft``/``hfft``), resized and cast as PyTorch's.

>>> import fnx
>>> fnx.fft.fft(fnx.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
"""
from __future__ import annotations

from .core.tensor import Tensor
from .ir.aten.fft import TRANSFORMS
from .ir.variants import VARIANTS
from .ops import aten

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_WHAT = {"fft": "the discrete Fourier transform",
         "ifft": "the inverse discrete Fourier transform",
         "rfft": "the Fourier transform of a real signal (the non-negative frequencies)",
         "irfft": "the inverse of ``rfft`` (a real signal from its one-sided spectrum)",
         "hfft": "the Fourier transform of a Hermitian-symmetric signal given by its first "
                 "half (a real spectrum)",
         "ihfft": "the inverse of ``hfft`` (the first half of a Hermitian signal)"}
_EXAMPLE = {"fft": ("fnx.fft.fft(fnx.tensor([1.0, 2.0, 3.0, 4.0]))",
                    "tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])"),
            "ifft": ("fnx.fft.ifft(fnx.tensor([4.0, 0.0, 0.0, 0.0]))",
                     "tensor([1.-0.j, 1.-0.j, 1.-0.j, 1.-0.j])"),
            "rfft": ("fnx.fft.rfft(fnx.tensor([1.0, 2.0, 3.0, 4.0]))",
                     "tensor([10.+0.j, -2.+2.j, -2.+0.j])"),
            "irfft": ("fnx.fft.irfft(fnx.tensor([10.0, -2.0, -2.0]))",
                      "tensor([1., 3., 3., 3.])"),
            "hfft": ("fnx.fft.hfft(fnx.tensor([1.0, 0.0, 0.0]))",
                     "tensor([1., 1., 1., 1.])"),
            "ihfft": ("fnx.fft.ihfft(fnx.tensor([1.0, 1.0, 1.0, 1.0]))",
                      "tensor([1.-0.j, 0.-0.j, 0.-0.j])")}


def _doc(name, what, signature):
    statement, result = _EXAMPLE[name.rstrip("2n")]
    if name != name.rstrip("2n"):
        base = name.rstrip("2n")
        statement = f"fnx.fft.{name}(fnx.ones(2, 4)).shape"
        shape = {"rfft": "[2, 3]", "ihfft": "[2, 3]", "irfft": "[2, 6]", "hfft": "[2, 6]"}
        result = f"fnx.Size({shape.get(base, '[2, 4]')})"
    return (f"{what[0].upper()}{what[1:]}, as ``torch.fft.{name}``{signature}.\n\n"
            f"    >>> import fnx\n    >>> {statement}\n    {result}\n")


def _one(name):
    op = TRANSFORMS[name].__call__
    op_out = VARIANTS[TRANSFORMS[name]]["out"]

    def fn(input: Tensor, n: int | None = None, dim: int = -1,
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
        if out is not None:
            return op_out(input, n, dim, norm, out=out)
        return op(input, n, dim, norm)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, _WHAT[name], " over one dim")
    return fn


def _many(name, default_dim):
    op = TRANSFORMS[name].__call__
    op_out = VARIANTS[TRANSFORMS[name]]["out"]

    def fn(input: Tensor, s=None, dim=default_dim, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
        if out is not None:
            return op_out(input, s, dim, norm, out=out)
        return op(input, s, dim, norm)
    fn.__name__ = fn.__qualname__ = name
    what = _WHAT[name[:-1]]
    fn.__doc__ = _doc(name, what, " over the last two dims" if name.endswith("2")
                      else " over ``dim`` (every dim by default)")
    return fn


fft = _one("fft")
ifft = _one("ifft")
rfft = _one("rfft")
irfft = _one("irfft")
hfft = _one("hfft")
ihfft = _one("ihfft")
fft2 = _many("fft2", (-2, -1))
ifft2 = _many("ifft2", (-2, -1))
rfft2 = _many("rfft2", (-2, -1))
irfft2 = _many("irfft2", (-2, -1))
hfft2 = _many("hfft2", (-2, -1))
ihfft2 = _many("ihfft2", (-2, -1))
fftn = _many("fftn", None)
ifftn = _many("ifftn", None)
rfftn = _many("rfftn", None)
irfftn = _many("irfftn", None)
hfftn = _many("hfftn", None)
ihfftn = _many("ihfftn", None)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of a length-``n`` transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``, as ``torch.fft.fftfreq``.

    >>> import fnx
    >>> fnx.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    out = aten.fft_fftfreq.default(n, d, dtype=dtype, layout=layout, device=device)
    return out.requires_grad_() if requires_grad else out


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of ``rfft`` of a length-``n`` signal:
    ``[0, 1, ..., n // 2] / (d * n)``, as ``torch.fft.rfftfreq``.

    >>> import fnx
    >>> fnx.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    out = aten.fft_rfftfreq.default(n, d, dtype=dtype, layout=layout, device=device)
    return out.requires_grad_() if requires_grad else out


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Moves the zero frequency to the middle: rolls each of ``dim`` (every dim by default)
    by half its size, as ``torch.fft.fftshift``.

    >>> import fnx
    >>> fnx.fft.fftshift(fnx.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return aten.fft_fftshift.default(input, _dims(dim))


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of ``fftshift``, as ``torch.fft.ifftshift``.

    >>> import fnx
    >>> fnx.fft.ifftshift(fnx.fft.fftshift(fnx.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    return aten.fft_ifftshift.default(input, _dims(dim))


def _dims(dim):
    return [dim] if isinstance(dim, int) else dim
