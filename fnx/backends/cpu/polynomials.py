"""NumPy kernels of the orthogonal-polynomial prims (``fnx/ir/prims/polynomials.py``) and
of their ATen ops with ``out=`` (``fnx/ir/aten/polynomials.py``):
PyTorch's algorithms elementwise (its special cases at the interval ends, its closed
trigonometric forms for large orders inside (-1, 1), its three-term recurrences otherwise),
vectorized with masks so the values match PyTorch's bit for bit where the arithmetic is the
same. Also the functions the JAX rules call back on the host."""
from __future__ import annotations

import numpy as np

from ...ir import prims as P
from ...ops import aten
from ._core import kernel
from .bessel import prim_kernel
from .special import kernel_of, no_extra, register_family

__all__ = ["POLYNOMIAL_FNS"]


def _orders(n):
    """``n`` as int64: floats truncated, NaN and infinities -1 (no polynomial: 0)."""
    if n.dtype.kind == "f":
        n = np.where(np.isfinite(n), n, -1)
    return np.trunc(n).astype(np.int64) if n.dtype.kind == "f" else n.astype(np.int64)


def _recur(x, n, q1, step, nan_stop=True):
    """``q_n`` of ``q_0 = 1``, ``q_1 = q1``, ``q_k = step(k, q_{k-1}, q_{k-2})``, per
    element up to its ``n`` (``q1`` itself for n <= 1); ``nan_stop``: an element stops
    once it is NaN (PyTorch's loops do; the value stays NaN either way)."""
    p, q = np.ones_like(x), q1
    r = q1.copy()
    top = int(n.max(initial=0))
    for k in range(2, top + 1):
        live = n >= k
        if nan_stop:
            live &= ~np.isnan(q)
        if not live.any():
            break
        new = step(k, q, p)
        r = np.where(live, new, r)
        p, q = np.where(live, q, p), np.where(live, new, q)
    return r


def _finish(x, n, out):
    """Order 0 is 1 and a negative order 0, whatever else was decided."""
    out = np.where(n == 0, 1.0, out)
    out = np.where(n < 0, 0.0, out)
    return out.astype(x.dtype)


# per Chebyshev kind, of y (x, or 2x - 1 when shifted) and the order m (a float array):
# its first order, and its values at y = 1 and at y = -1
_FIRST = {"t": lambda y: y, "u": lambda y: y + y, "v": lambda y: y + y - 1,
          "w": lambda y: y + y + 1}
_TOP = {"t": lambda m: 1.0, "u": lambda m: m + 1, "v": lambda m: 1.0, "w": lambda m: m + m + 1}
_BOTTOM = {"t": lambda m, odd: np.where(odd, -1.0, 1.0),
           "u": lambda m, odd: np.where(odd, -(m + 1), m + 1),
           "v": lambda m, odd: np.where(odd, -(m + m + 1), m + m + 1),
           "w": lambda m, odd: np.where(odd, -1.0, 1.0)}


def _chebyshev(kind, shifted):
    # the order past which PyTorch uses the trigonometric form inside (-1, 1)
    limit = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
             ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[kind, shifted]

    def fn(x, n):
        x, n = np.broadcast_arrays(x, _orders(n))
        y = x + x - 1 if shifted else x
        nf = n.astype(x.dtype)
        with np.errstate(all="ignore"):
            out = _recur(y, n, _FIRST[kind](y).astype(x.dtype),
                         lambda k, q, p: (y + y) * q - p)
            inside = (n > limit) & (np.abs(y) < 1)
            theta = np.arccos(np.where(inside, y, 0))
            odd = n % 2 == 1
            if kind == "t":
                trig = np.cos(nf * theta)
            elif kind == "u":
                s = np.sin(theta)
                trig = np.where(s != 0, np.sin((nf + 1) * theta) / np.where(s != 0, s, 1),
                                (nf + 1) * np.cos((nf + 1) * theta) / y)
            elif kind == "v":
                trig = np.where(np.sin(theta / 2) != 1,
                                np.cos((nf + 0.5) * theta) / np.cos(theta / 2),
                                np.where(odd, -(nf + nf + 1), nf + nf + 1))
            else:
                edge = 1.0 if shifted else np.where(y > 0, nf + nf + 1, 1.0)
                trig = np.where(np.cos(theta / 2) != 1,
                                np.sin((nf + 0.5) * theta) / np.sin(theta / 2),
                                np.where(odd & ~((y > 0) & (not shifted)), -1.0, edge))
            out = np.where(inside, trig, out)
            # the interval's ends (x = +-1; shifted: x = 1 and x = 0)
            top = (x == 1) if shifted else (np.abs(x) == 1) & (x > 0)
            bottom = (x == 0) if shifted else (np.abs(x) == 1) & (x < 0)
            out = np.where(top, _TOP[kind](nf), np.where(bottom, _BOTTOM[kind](nf, odd), out))
        return _finish(x, n, out)
    return fn


def _hermite(physicists):
    def fn(x, n):
        x, n = np.broadcast_arrays(x, _orders(n))
        limit = 128 if x.dtype == np.float32 else 512
        if physicists:  # PyTorch's k runs 2, 4, ... below 2n: step j (from 2) has k = 2(j-1)
            first, step = x + x, lambda j, q, p: (x + x) * q - (2 * (j - 1)) * p
        else:
            first, step = x, lambda j, q, p: x * q - (j - 1) * p
        with np.errstate(all="ignore"):
            out = _recur(x, n, first.astype(x.dtype), step, nan_stop=False)
        return _finish(x, n, np.where(n > limit, np.nan, out))
    return fn


def _laguerre(x, n):
    x, n = np.broadcast_arrays(x, _orders(n))
    one = x.dtype.type(1.0)
    with np.errstate(all="ignore"):
        out = _recur(x, n, (one - x).astype(x.dtype),
                     lambda j, q, p: (((2 * (j - 1)) + (one - x)) * q - (j - 1) * p) / j)
    out = np.where((np.abs(x) == 0) & (n >= 0), 1.0, out)
    return _finish(x, n, out)


def _legendre(x, n):
    x, n = np.broadcast_arrays(x, _orders(n))
    with np.errstate(all="ignore"):
        out = _recur(x, n, x.astype(x.dtype),
                     lambda j, q, p: ((2 * (j - 1) + 1) * x * q - (j - 1) * p) / j)
    ends = (np.abs(x) == 1) & (n >= 0)
    out = np.where(ends, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return _finish(x, n, out)


POLYNOMIAL_FNS = {
    **{f"{'shifted_' if s else ''}chebyshev_polynomial_{k}": _chebyshev(k, s)
       for s in (False, True) for k in "tuvw"},
    "hermite_polynomial_h": _hermite(True), "hermite_polynomial_he": _hermite(False),
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre}


for _name, _fn in POLYNOMIAL_FNS.items():
    kernel(getattr(P, _name))(prim_kernel(getattr(P, _name), _fn))
    # the ATen op and its out= form directly (one NumPy pass, no decomposition)
    _aop = getattr(aten, f"special_{_name}").default
    register_family(_aop, kernel_of(_aop, _fn, (0, 1), no_extra))
