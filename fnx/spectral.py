"""The short-time Fourier transform and its inverse: ``fnx.stft`` and ``fnx.istft``, as
``torch.stft``/``torch.istft``.

Both are compositions of ops that differentiate and compile (padding, ``unfold``, the
FFT ops, ``index_add``), so a compiled function with a spectrogram in it is one program.

``stft`` cuts the signal (``center``: padded by ``n_fft // 2`` on both sides with
``pad_mode``) into frames of ``n_fft`` samples every ``hop_length``, multiplies each by the
window (``win_length`` samples, centred in the frame, zeros around it), and transforms the
frames: the result is ``(..., n_fft // 2 + 1, frames)`` for a real signal and window
(``onesided``), ``(..., n_fft, frames)`` otherwise. ``istft`` inverts it by overlap-add,
dividing by the overlap-add of the squared window, which must not vanish (the NOLA
condition) over the samples it returns.

>>> import fnx
>>> x = fnx.arange(16.0)
>>> spec = fnx.stft(x, 8, window=fnx.hann_window(8), return_complex=True)
>>> spec.shape
fnx.Size([5, 9])
>>> y = fnx.istft(spec, 8, window=fnx.hann_window(8), length=16)
>>> bool((y - x).abs().max() < 1e-4)
True
"""
from __future__ import annotations

import warnings

from .core import dtype as D
from .core.tensor import tensor_method
from .ops import aten

__all__ = ["stft", "istft"]

_ONESIDED_COMPLEX = "Cannot have onesided output if window or input is complex"


def _framing(name, n_fft, hop_length, win_length, window, dtype, device):
    """hop and the window as ``n_fft`` samples (``win_length`` centred, zeros around)."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"{name}: expected n_fft > 0, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if window is None:
        window = aten.ones.default([win], dtype=dtype, device=device)
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size "
                           f"{list(window.shape)}")
    left = (n_fft - win) // 2
    if win < n_fft:
        window = aten.constant_pad_nd.default(window, [left, n_fft - win - left], 0)
    return hop, win, left, window


@tensor_method()
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of a signal ``(L,)`` or batch ``(B, L)``: a
    complex ``(B?, n_freq, frames)`` tensor (see the module docstring).

    >>> import fnx
    >>> fnx.stft(fnx.ones(8), 4, hop_length=2, center=False,
    ...          return_complex=True)[:, 0].tolist()
    [(4+0j), 0j, 0j]
    """
    cplx = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None and not cplx:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a tensor with "
                           f"{input.ndim} dims")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, "
                           f"but got {input.dtype}")
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if onesided is None:
        onesided = not cplx
    elif onesided and cplx:
        raise RuntimeError(_ONESIDED_COMPLEX)
    dtype = input.dtype if input.is_floating_point() else input.dtype.to_real()
    hop, win, left, window = _framing("stft", n_fft, hop_length, win_length, window,
                                      dtype, input.device)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        half = n_fft // 2
        if pad_mode == "constant":
            x = aten.constant_pad_nd.default(x, [half, half], 0)
        else:   # reflect/replicate/circular pad a (N, C, L) signal
            x = aten.pad.default(x.unsqueeze(1), [half, half], pad_mode, None).squeeze(1)
    elif align_to_window:
        # frames start where the window does: the signal enters each frame at ``left``
        x = aten.constant_pad_nd.default(x, [left, n_fft - win - left], 0)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length} (the padded signal's "
                           f"length), but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop) * window          # (B, frames, n_fft)
    norm = "ortho" if normalized else "backward"
    if onesided:
        spec = aten.fft_rfft.default(frames, None, -1, norm)
    else:
        spec = aten.fft_fft.default(frames, None, -1, norm)
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    if not return_complex and return_complex is not None:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.", UserWarning, stacklevel=2)
        return aten.view_as_real.default(spec)
    return spec


@tensor_method()
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: the signal ``(B?, L)`` whose short-time transform is
    ``input`` (complex, ``(B?, n_freq, frames)``), by overlap-add.

    >>> import fnx
    >>> x = fnx.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    >>> spec = fnx.stft(x, 4, window=fnx.hann_window(4), return_complex=True)
    >>> [round(v, 4) for v in fnx.istft(spec, 4, window=fnx.hann_window(4)).tolist()]
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    """
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dims (B?, n_freq, frames), "
                           f"but got {input.ndim}")
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if return_complex or (window is not None and window.is_complex()):
            raise RuntimeError(_ONESIDED_COMPLEX)
        if n_freq != n_fft // 2 + 1:
            raise RuntimeError(f"istft: expected the frequency dimension (-2) of input to "
                               f"equal n_fft / 2 + 1 = {n_fft // 2 + 1} when onesided, "
                               f"but got {n_freq}")
    elif n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (-2) of input to equal "
                           f"n_fft = {n_fft} when not onesided, but got {n_freq}")
    if n_frames == 0:
        raise RuntimeError("istft: expected at least one frame (dim -1 of input), got 0")
    hop, _, _, window = _framing("istft", n_fft, hop_length, win_length, window,
                                 input.dtype.to_real(), input.device)
    spec = (input if input.ndim == 3 else input.unsqueeze(0)).transpose(-1, -2)
    norm = "ortho" if normalized else "backward"
    if onesided:
        frames = aten.fft_irfft.default(spec, n_fft, -1, norm)
    else:
        frames = aten.fft_ifft.default(spec, n_fft, -1, norm)
        if not return_complex:
            frames = frames.real
    frames = frames * window                                # (B, frames, n_fft)
    total = n_fft + hop * (n_frames - 1)
    at = (aten.arange.start_step(0, n_frames * hop, hop, dtype=D.int64, device=input.device)
          .unsqueeze(1) + aten.arange.default(n_fft, dtype=D.int64, device=input.device))
    at = at.reshape(-1)
    batch = frames.shape[0]
    y = aten.zeros.default([batch, total], dtype=frames.dtype, device=input.device)
    y = y.index_add(1, at, frames.reshape(batch, -1))
    square = window.pow(2)
    envelope = aten.zeros.default([total], dtype=square.dtype, device=input.device)
    envelope = envelope.index_add(0, at, square.expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    end = min(end, total)
    y, envelope = y[:, start:end], envelope[start:end]
    smallest = envelope.abs().min() if envelope.numel() else None
    if smallest is not None and bool(smallest < 1e-11):
        raise RuntimeError(f"istft: window overlap add min: {float(smallest):g} (the squared "
                           f"window's overlap-add must not vanish over the output: NOLA)")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = aten.constant_pad_nd.default(y, [0, length - y.shape[-1]], 0)
    return y if input.ndim == 3 else y.squeeze(0)
