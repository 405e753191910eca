"""PyTorch's window functions: ``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window`` and ``kaiser_window``, computed in the requested floating dtype from
``arange`` (so a compiled function builds them in the program).

A *periodic* window of length N is the symmetric window of length N + 1 without its last
point (the one ``stft`` wants); lengths 0 and 1 give an empty window and ``[1.]``.

>>> import fnx
>>> fnx.hann_window(4).tolist()
[0.0, 0.5, 1.0, 0.5]
>>> fnx.bartlett_window(5, periodic=False).tolist()
[0.0, 0.5, 1.0, 0.5, 0.0]
"""
from __future__ import annotations

import math

from ..core import dtype as D
from .creation import arange as _arange
from .creation import ones as _ones

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _window(name, window_length, periodic, dtype, device, requires_grad, body):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = D.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        out = _ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        out = body(_arange(window_length, dtype=dtype, device=device), n)
    return out.requires_grad_(True) if requires_grad else out


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """``alpha - beta * cos(2 pi n / (N - 1))``.

    >>> import fnx
    >>> [round(v, 4) for v in fnx.hamming_window(3, periodic=False).tolist()]
    [0.08, 1.0, 0.08]
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: (k * (2 * math.pi / (n - 1))).cos() * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))`` (the Hamming window with alpha = beta = 0.5).

    >>> import fnx
    >>> fnx.hann_window(3, periodic=False).tolist()
    [0.0, 1.0, 0.0]
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: (k * (2 * math.pi / (n - 1))).cos() * -0.5 + 0.5)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    >>> import fnx
    >>> [round(v, 4) for v in fnx.blackman_window(3, periodic=False).tolist()]
    [-0.0, 1.0, -0.0]
    """
    def body(k, n):
        w = k * (math.pi / (n - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle ``1 - |2n / (N - 1) - 1|``.

    >>> import fnx
    >>> fnx.bartlett_window(4).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - (k * (2 / (n - 1)) - 1).abs())


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """``I0(beta sqrt(1 - ((n - a) / a)**2)) / I0(beta)`` with ``a = (N - 1) / 2``.

    >>> import fnx
    >>> [round(v, 4) for v in fnx.kaiser_window(3, periodic=False, beta=2.0).tolist()]
    [0.4387, 1.0, 0.4387]
    """
    def body(k, n):
        a = (n - 1) / 2
        r = ((k - a) / a).pow(2)
        return ((1 - r).clamp(min=0).sqrt() * beta).i0() / _i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def _i0(x: float) -> float:
    """The modified Bessel function I0 of a Python float (its power series)."""
    term, total, k = 1.0, 1.0, 1
    while term > 1e-17 * total:
        term *= (x / (2 * k)) ** 2
        total += term
        k += 1
    return total
