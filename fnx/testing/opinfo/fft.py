"""OpInfo entries for ``torch.fft`` (fnx/ir/aten/fft.py), against ``numpy.fft``.

The references compute in complex128/float64 and round once to PyTorch's result dtype:
complex64 (float32 for the real outputs of ``irfft``/``hfft``) for float32, complex64 and
integer inputs (integers become the default float32), complex128/float64 for the 64-bit
ones.  NumPy has no ``hfftn``/``ihfftn``: those follow from its ``irfftn``/``rfftn`` by
conjugation, the normalization swapped (``hfftn(x) = irfftn(conj(x))`` scaled as a forward
transform).  Samples crop (``n`` below the size) and zero-pad (above it), pick dims, and
use every ``norm``; the inputs of the complex-to-real transforms are half spectra of real
signals, whose imaginary parts at frequency 0 (and n / 2) are 0 as the transforms assume.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import ErrorInput, OpInfo, SampleInput, make_tensor, register

_FLOATS = (D.float32, D.float64)
_COMPLEX = (D.complex64, D.complex128)
_ALL = _FLOATS + _COMPLEX + (D.int64,)
_REAL = _FLOATS + (D.int64,)
_TOLS = {D.float32: (1e-4, 1e-4), D.complex64: (1e-4, 1e-4), D.int64: (1e-4, 1e-4),
         D.float64: (1e-9, 1e-9), D.complex128: (1e-9, 1e-9)}
_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _result(x, complex_out):
    wide = x.dtype in (np.float64, np.complex128)
    if complex_out:
        return np.complex128 if wide else np.complex64
    return np.float64 if wide else np.float32


def _wide(x):
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _hfftn(x, s=None, axes=None, norm=None):
    return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=_SWAP[norm])


def _ihfftn(x, s=None, axes=None, norm=None):
    return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=_SWAP[norm]))


def _hfft(x, n=None, axis=-1, norm=None):
    return np.fft.hfft(x, n=n, axis=axis, norm=norm)


def _ihfft(x, n=None, axis=-1, norm=None):
    return np.fft.ihfft(x, n=n, axis=axis, norm=norm)


# name: (NumPy function, complex result, n-dim)
_NUMPY = {
    "fft": (np.fft.fft, True), "ifft": (np.fft.ifft, True), "rfft": (np.fft.rfft, True),
    "irfft": (np.fft.irfft, False), "hfft": (_hfft, False), "ihfft": (_ihfft, True),
    "fftn": (np.fft.fftn, True), "ifftn": (np.fft.ifftn, True), "rfftn": (np.fft.rfftn, True),
    "irfftn": (np.fft.irfftn, False), "hfftn": (_hfftn, False), "ihfftn": (_ihfftn, True),
}


def _ref(name):
    base = name[:-1] + "n" if name.endswith("2") else name
    fn, complex_out = _NUMPY[base]
    ndim = base.endswith("n")

    def ref(x, n_or_s=None, dim=None, norm=None):
        if dim is None and not ndim:
            dim = -1
        if dim is None and name.endswith("2"):
            dim = (-2, -1)
        if ndim:
            if dim is None and n_or_s is not None:
                dim = tuple(range(x.ndim - len(n_or_s), x.ndim))
            r = fn(_wide(x), s=n_or_s, axes=dim, norm=norm)
        else:
            r = fn(_wide(x), n=n_or_s, axis=dim, norm=norm)
        return np.asarray(r).astype(_result(x, complex_out))
    return ref


def _input(name, shape, dtype, device, noncontiguous=False):
    """A signal, or for the complex-to-real transforms a half spectrum of one."""
    if not name.startswith(("irfft", "hfft")) or not dtype.is_complex:
        return make_tensor(shape, dtype, device, noncontiguous=noncontiguous)
    real = np.float32 if dtype is D.complex64 else np.float64
    signal = np.random.default_rng(sum(shape)).standard_normal(
        shape[:-1] + (2 * (shape[-1] - 1),)).astype(real)
    half = np.fft.rfft(signal, axis=-1)
    if noncontiguous:       # every other element of a twice as long last dim
        half = np.repeat(half, 2, axis=-1)
        return fnx.tensor(half.astype(dtype.numpy), device=device)[..., ::2]
    return fnx.tensor(half.astype(dtype.numpy), device=device)


def _samples_1d(name):
    def samples(info, device, dtype):
        yield SampleInput(_input(name, (5, 8), dtype, device))
        yield SampleInput(_input(name, (4, 6), dtype, device), 4, 0, "ortho")
        yield SampleInput(_input(name, (3, 5), dtype, device), 9, 1, "forward")
        yield SampleInput(_input(name, (6, 4), dtype, device).t(), None, -1, "backward")
        yield SampleInput(_input(name, (7,), dtype, device), norm="ortho")
        yield SampleInput(_input(name, (2, 3, 6), dtype, device, noncontiguous=True), 5, 1)
    return samples


def _samples_2d(name):
    def samples(info, device, dtype):
        yield SampleInput(_input(name, (3, 5, 6), dtype, device))
        yield SampleInput(_input(name, (4, 6), dtype, device), (3, 8), None, "ortho")
        yield SampleInput(_input(name, (4, 5, 6), dtype, device), None, (0, 2), "forward")
        yield SampleInput(_input(name, (6, 4), dtype, device).t(), (5, 4), (1, 0))
    return samples


def _samples_nd(name):
    def samples(info, device, dtype):
        yield SampleInput(_input(name, (3, 4, 6), dtype, device))
        yield SampleInput(_input(name, (4, 6), dtype, device), (3, 8), None, "ortho")
        yield SampleInput(_input(name, (4, 5, 6), dtype, device), None, (2, 0), "forward")
        yield SampleInput(_input(name, (2, 3, 4), dtype, device, noncontiguous=True), (5,),
                          (1,), "backward")
        yield SampleInput(_input(name, (3, 5), dtype, device), (2, 4), (-1, 0))
    return samples


def _errors(name):
    real_only = name.startswith(("rfft", "ihfft"))
    one_dim = not name.endswith(("2", "n"))

    def errors(info, device):
        x = make_tensor((4, 6), D.float32, device)
        yield ErrorInput(SampleInput(x, norm="bad"), RuntimeError,
                         'Invalid normalization mode: "bad"')
        if one_dim:
            yield ErrorInput(SampleInput(x, 0), RuntimeError,
                             r"Invalid number of data points \(0\) specified")
            yield ErrorInput(SampleInput(x, None, 2), IndexError, "Dimension out of range")
        else:
            yield ErrorInput(SampleInput(x, (4, 4), (0,)), RuntimeError,
                             "dim and shape arguments must have the same length")
            yield ErrorInput(SampleInput(x, None, (1, -1)), RuntimeError,
                             "FFT dims must be unique")
        if real_only:
            what = "real input" if one_dim else "real-valued input"
            nd = name if one_dim else name.rstrip("2n") + "n"
            yield ErrorInput(SampleInput(make_tensor((4, 4), D.complex64, device)), RuntimeError,
                             f"{nd} expects a {what} tensor, but got ComplexFloat")
        if name.startswith(("irfft", "hfft")) and one_dim:
            yield ErrorInput(SampleInput(make_tensor((1,), D.complex64, device)), RuntimeError,
                             r"Invalid number of data points \(0\) specified")
        yield ErrorInput(SampleInput(make_tensor((4,), D.float16, device)), RuntimeError,
                         "Unsupported dtype Half")
    return errors


def _entries():
    out = []
    for base in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        dtypes = _REAL if base in ("rfft", "ihfft") else _ALL
        for name, samples in ((base, _samples_1d), (base + "2", _samples_2d),
                              (base + "n", _samples_nd)):
            op = getattr(aten, f"fft_{name}").default
            out.append(OpInfo(op, _ref(name), dtypes, samples(name), tols=_TOLS,
                              error_inputs=_errors(name)))
    return out


# ---------------------------------------------------------------------------- _fft_c2c

def _c2c_ref(x, dim, normalization, forward):
    n = int(np.prod([x.shape[d] for d in dim]))
    # unnormalized both ways: ifftn with norm="forward" does not scale
    r = (np.fft.fftn if forward else np.fft.ifftn)(_wide(x), axes=list(dim),
                                                    norm="backward" if forward else "forward")
    return (r / (1.0, np.sqrt(n), n)[normalization]).astype(x.dtype)


def _c2c_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 6, 5), dtype, device), [1, 2], 0, True)
    yield SampleInput(make_tensor((4, 6), dtype, device, noncontiguous=True), [-1], 1, False)
    yield SampleInput(make_tensor((5,), dtype, device), [0], 2, True)
    yield SampleInput(make_tensor((2, 3, 4), dtype, device), [0, 2], 2, False)


def _c2c_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((4,), D.float32, device), [0], 0, True),
                     RuntimeError, "_fft_c2c: expected a complex input")
    yield ErrorInput(SampleInput(make_tensor((4, 4), D.complex64, device), [0, -2], 0, True),
                     RuntimeError, "dims must be unique")


# ---------------------------------------------------------------------------- freq, shift

def _freq_samples(info, device, dtype):
    for n, d in ((5, 1.0), (8, 0.25), (1, 2.0), (0, 1.0), (3, 0.0)):
        yield SampleInput(n, d, dtype=dtype, device=device)


def _freq_ref(count, signed):
    """``k / (n * d)`` for k in 0 .. count - 1, the upper half made negative (``k - n``)
    when ``signed``; a zero ``n * d`` scales by an infinity, as PyTorch's double math."""
    def ref(n, d=1.0, *, dtype=None, **_):
        k = np.arange(count(n), dtype=np.float64)
        if signed:
            k[(n + 1) // 2:] -= n
        with np.errstate(all="ignore"):
            scale = np.float64(1.0) / np.float64(n * d)
            return (k * scale).astype(dtype.numpy)
    return ref


def _freq_errors(info, device):
    yield ErrorInput(SampleInput(4, dtype=D.int64, device=device), RuntimeError,
                     "expected a floating dtype")


def _shift_samples(info, device, dtype):
    yield SampleInput(make_tensor((4, 5), dtype, device))
    yield SampleInput(make_tensor((3, 4, 5), dtype, device), [0, 2])
    yield SampleInput(make_tensor((6, 7), dtype, device, noncontiguous=True), [-1])
    yield SampleInput(make_tensor((0, 3), dtype, device))


def _shift_ref(fn):
    def ref(x, dim=None):
        return fn(x, axes=None if dim is None else tuple(dim)).copy()
    return ref


register(
    *_entries(),
    OpInfo(aten._fft_c2c.default, _c2c_ref, _COMPLEX, _c2c_samples, tols=_TOLS,
           error_inputs=_c2c_errors),
    OpInfo(aten.fft_fftfreq.default, _freq_ref(lambda n: n, True), _FLOATS, _freq_samples,
           error_inputs=_freq_errors),
    OpInfo(aten.fft_rfftfreq.default, _freq_ref(lambda n: n // 2 + 1, False), _FLOATS,
           _freq_samples, error_inputs=_freq_errors),
    OpInfo(aten.fft_fftshift.default, _shift_ref(np.fft.fftshift), _ALL, _shift_samples),
    OpInfo(aten.fft_ifftshift.default, _shift_ref(np.fft.ifftshift), _ALL, _shift_samples),
)
