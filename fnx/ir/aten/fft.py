"""``torch.fft``: the discrete Fourier transforms (``fft_fft``, ``fft_rfftn``, ...), the
sample frequencies and the shifts, as PyTorch defines them.

Every transform decomposes, as PyTorch's do, to three ops that carry a normalization:
``_fft_c2c`` (complex to complex, defined here), and the core ``_fft_r2c`` / ``_fft_c2r``
(``fnx/ir/aten/nn/fft.py``), which decompose to the unnormalized prims ``fft_c2c``,
``fft_r2c`` and ``fft_c2r``.  Gradients flow through those (the prims carry the formulas).

The public ops resize the input along each transformed dim first (``n``/``s``: zero-pad
or crop), promote it (integers and bools to the default float dtype; a real input to a
complex-only transform becomes complex) and turn ``norm`` into the normalization number
of the direction (0: none, 1: 1/sqrt(n), 2: 1/n).
"""
from __future__ import annotations

import math

from ...core import dtype as D
from ...ops import aten, prims
from ..backend_select import backend_select, device_arg
from ..dims import wrap_dim
from ..registry import TensorMeta, defop, nondifferentiable
from .factory import OPTS, dtype_arg

__all__ = ["norm_mode"]


# ---------------------------------------------------------------------------- arguments

def norm_mode(norm, forward: bool) -> int:
    """PyTorch's normalization number for ``norm`` in the transform's direction.

    >>> norm_mode(None, True), norm_mode("backward", False), norm_mode("ortho", True)
    (0, 2, 1)
    """
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _one_dim(x, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, x.ndim)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _promote(name, x, *, require_complex=False, require_real=False):
    """Integers and bools become the default float dtype (PyTorch's promote_tensor_fft);
    half types have no CPU FFT; a real input of a complex-only transform becomes complex."""
    d = x.dtype
    if require_real and d.is_complex:
        what = "real-valued" if name.endswith("n") else "real"
        raise RuntimeError(f"{name} expects a {what} input tensor, but got {d.scalar_type}")
    if not (d.is_floating_point or d.is_complex):
        x = aten._to_copy.default(x, dtype=D.get_default_dtype())
    elif d in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {d.scalar_type}")
    if require_complex and not x.dtype.is_complex:
        x = aten._to_copy.default(x, dtype=x.dtype.to_complex())
    return x


def _resize(x, dims, sizes):
    """Crop or zero-pad ``x`` along each of ``dims`` to ``sizes`` (-1 keeps the size)."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n == -1 or n == have:
            continue
        if n < have:
            x = aten.slice.Tensor(x, d, 0, n)
        else:
            x = aten.constant_pad_nd.default(x, [0, 0] * (x.ndim - 1 - d) + [0, n - have], 0)
    return x


def _check_nonempty(x, dims):
    for d in dims:
        _check_points(x.shape[d])


def _shape_and_dims(name, x, s, dim):
    """PyTorch's canonical (sizes, dims) of an n-dim transform: ``dim`` None means the last
    ``len(s)`` dims (every dim without ``s``); ``s`` None means the dims' sizes; -1 in ``s``
    keeps a size."""
    if dim is not None:
        dims = [_one_dim(x, d) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dim is not None:
            if len(s) != len(dims):
                raise RuntimeError("When given, dim and shape arguments must have the same "
                                   "length")
        else:
            if len(s) > x.ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{x.ndim} dimensions.")
            dims = list(range(x.ndim - len(s), x.ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
        for n in sizes:
            _check_points(n)
        return sizes, dims
    if dim is None:
        dims = list(range(x.ndim))
    return [x.shape[d] for d in dims], dims


# ---------------------------------------------------------------------------- _fft_c2c

def _c2c_meta(self, dim, normalization, forward):
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2c: expected a complex input, got {self.dtype.scalar_type}")
    dims = [wrap_dim(d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("_fft_c2c: dims must be unique")
    if normalization not in (0, 1, 2):
        raise RuntimeError(f"Invalid normalization mode: {normalization}")
    return TensorMeta(tuple(self.shape), self.dtype)


def _scale(out, n, normalization):
    if normalization == 0:
        return out
    return aten.mul.Scalar(out, 1.0 / (math.sqrt(n) if normalization == 1 else n))


def _c2c(self, dim, normalization, forward):
    _c2c_meta(self, dim, normalization, forward)
    dims = [wrap_dim(d, self.ndim) for d in dim]
    if not dims:
        return prims.convert_element_type(self, self.dtype)      # a fresh copy
    out = prims.fft_c2c(self, dims, forward)
    return _scale(out, math.prod(self.shape[d] for d in dims), normalization)


fft_c2c = defop("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
                meta=_c2c_meta, decomposition=_c2c)


# ---------------------------------------------------------------------------- the transforms

def _c2c_or_r2c(name, x, dims, norm, forward):
    """fft/ifft/fftn/ifftn: a real input takes the two-sided r2c (PyTorch's path), whose
    inverse is the conjugate of the forward transform of a real signal."""
    _check_nonempty(x, dims)
    if x.dtype.is_complex:
        return fft_c2c(x, dims, norm_mode(norm, forward), forward)
    out = aten._fft_r2c.default(x, dims, norm_mode(norm, forward), False)
    return out if forward else prims.conj(out)


def _r2c(name, x, dims, norm, forward):
    """rfft (forward) and ihfft (backward: the conjugate of the forward half spectrum)."""
    _check_nonempty(x, dims)
    out = aten._fft_r2c.default(x, dims, norm_mode(norm, forward), True)
    return out if forward else prims.conj(out)


def _c2r(name, x, dims, sizes, last, norm, forward):
    """irfft (backward) and hfft (forward: the c2r of the conjugate input)."""
    _check_points(last)
    x = _resize(x, dims, list(sizes) + [last // 2 + 1])
    _check_nonempty(x, dims)
    if forward:
        x = prims.conj(x)
    return aten._fft_c2r.default(x, dims, norm_mode(norm, forward), last)


def _fft1(name, forward):
    def fn(self, n=None, dim=-1, norm=None):
        x = _promote(name, self)
        d = _one_dim(x, dim)
        if n is not None:
            _check_points(n)
            x = _resize(x, [d], [n])
        return _c2c_or_r2c(name, x, [d], norm, forward)
    return fn


def _rfft1(name, forward):
    def fn(self, n=None, dim=-1, norm=None):
        x = _promote(name, self, require_real=True)
        d = _one_dim(x, dim)
        if n is not None:
            _check_points(n)
            x = _resize(x, [d], [n])
        return _r2c(name, x, [d], norm, forward)
    return fn


def _irfft1(name, forward):
    def fn(self, n=None, dim=-1, norm=None):
        x = _promote(name, self, require_complex=True)
        d = _one_dim(x, dim)
        last = 2 * (x.shape[d] - 1) if n is None else n
        return _c2r(name, x, [d], [], last, norm, forward)
    return fn


def _fftn(name, forward):
    def fn(self, s=None, dim=None, norm=None):
        x = _promote(name, self)
        sizes, dims = _shape_and_dims(name, x, s, dim)
        return _c2c_or_r2c(name, _resize(x, dims, sizes), dims, norm, forward)
    return fn


def _rfftn(name, forward):
    def fn(self, s=None, dim=None, norm=None):
        x = _promote(name, self, require_real=True)
        sizes, dims = _shape_and_dims(name, x, s, dim)
        return _r2c(name, _resize(x, dims, sizes), dims, norm, forward)
    return fn


def _irfftn(name, forward):
    def fn(self, s=None, dim=None, norm=None):
        x = _promote(name, self, require_complex=True)
        sizes, dims = _shape_and_dims(name, x, s, dim)
        if not dims:
            raise RuntimeError(f"{name} must transform at least one axis")
        last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else sizes[-1]
        return _c2r(name, x, dims, sizes[:-1], last, norm, forward)
    return fn


_1D = "(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"
_2D = "(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"
_ND = "(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"

# name, builder of the 1-dim op, of the n-dim ops, forward direction
_FAMILIES = [("fft", _fft1, _fftn, True), ("ifft", _fft1, _fftn, False),
             ("rfft", _rfft1, _rfftn, True), ("ihfft", _rfft1, _rfftn, False),
             ("irfft", _irfft1, _irfftn, False), ("hfft", _irfft1, _irfftn, True)]
TRANSFORMS = {}
for _name, _one, _many, _fwd in _FAMILIES:
    TRANSFORMS[_name] = defop(f"fft_{_name}{_1D}", decomposition=_one(_name, _fwd))
    _nd = _many(_name + "n", _fwd)
    TRANSFORMS[_name + "2"] = defop(f"fft_{_name}2{_2D}", decomposition=_nd)
    TRANSFORMS[_name + "n"] = defop(f"fft_{_name}n{_ND}", decomposition=_nd)


# ---------------------------------------------------------------------------- frequencies, shifts

def _freq_meta(name, count):
    def meta(n, d=1.0, *, dtype=None, layout=None, device=None, pin_memory=None):
        if n < 0:
            raise RuntimeError(f"{name}: n must be non-negative, got {n}")
        dt = dtype_arg(name, dtype, D.get_default_dtype())
        if not dt.is_floating_point:
            raise RuntimeError(f"{name}: expected a floating dtype, got {dt.scalar_type}")
        return TensorMeta((count(n),), dt)
    return meta


def _reciprocal(v):
    """1 / v with C's infinities at zero (PyTorch computes the scale in double)."""
    return math.copysign(math.inf, v) if v == 0 else 1.0 / v


def _fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n), as PyTorch computes it."""
    m = fftfreq.meta(n, d, dtype=dtype)
    i = aten.arange.default(n, dtype=D.int64, device=device_arg(device))
    i = aten.where.self(aten.ge.Scalar(i, (n + 1) // 2), aten.sub.Scalar(i, n), i)
    return aten.mul.Scalar(aten._to_copy.default(i, dtype=m.dtype), _reciprocal(n * d))


def _rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = rfftfreq.meta(n, d, dtype=dtype)
    i = aten.arange.default(n // 2 + 1, dtype=m.dtype, device=device_arg(device))
    return aten.mul.Scalar(i, _reciprocal(n * d))


fftfreq = defop(f"fft_fftfreq(int n, float d=1.0, *, {OPTS}) -> Tensor",
                meta=_freq_meta("fft_fftfreq", lambda n: n), decomposition=_fftfreq)
rfftfreq = defop(f"fft_rfftfreq(int n, float d=1.0, *, {OPTS}) -> Tensor",
                 meta=_freq_meta("fft_rfftfreq", lambda n: n // 2 + 1),
                 decomposition=_rfftfreq)
backend_select(fftfreq)
backend_select(rfftfreq)
nondifferentiable(fftfreq, rfftfreq)


def _shift(inverse):
    def fn(self, dim=None):
        dims = list(range(self.ndim)) if dim is None else [wrap_dim(d, self.ndim) for d in dim]
        # fftshift rolls each dim by n // 2 (zero frequency to the middle); ifftshift undoes it
        shifts = [(self.shape[d] + 1) // 2 if inverse else self.shape[d] // 2 for d in dims]
        return aten.roll.default(self, shifts, dims)
    return fn


fftshift = defop("fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor",
                 decomposition=_shift(False))
ifftshift = defop("fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor",
                  decomposition=_shift(True))
