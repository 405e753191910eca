"""The orthogonal-polynomial prims (``fnx/ir/prims/polynomials.py``) written once against an
array module: PyTorch's algorithms elementwise (its special cases at the interval ends, its
closed trigonometric forms for large orders inside (-1, 1), its three-term recurrences
otherwise), vectorized with masks so the values match PyTorch's bit for bit where the
arithmetic is the same.

``POLYNOMIALS[name](ops, x, n)`` computes with ``ops`` (``ArrayOps``): the array module
(NumPy, or ``jax.numpy``), ``loop(cond, body, state)`` with ``lax.while_loop``'s contract,
which runs the recurrence while any element still needs a step (as many steps as the data
needs), ``rounded``, which keeps a compiler from fusing a recurrence's product into a
fused multiply-add, and ``divide``, which rounds a recurrence's quotient once. With NumPy
and a Python loop they are the NumPy kernels of the prims and of their ATen ops with
``out=`` (``fnx/ir/aten/polynomials.py``); ``fnx/lower/jax_polynomials.py`` makes the JAX
rules of the same functions.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ...ir import prims as P
from ...ops import aten
from ._core import kernel
from .bessel import prim_kernel
from .special import kernel_of, no_extra, register_family

__all__ = ["ArrayOps", "POLYNOMIALS", "POLYNOMIAL_FNS"]


class ArrayOps(NamedTuple):
    """What the polynomials compute with: NumPy's or the compiled program's."""
    xp: Any                 # the array module: numpy or jax.numpy
    loop: Callable          # loop(cond, body, state) -> state, as lax.while_loop
    # rounded(a * b): the product as a value of its dtype, never fused with the addition
    # it feeds into a fused multiply-add (NumPy rounds each operation; XLA would fuse)
    rounded: Callable
    # divide(a, k): a / k for the scalar k, rounded as a division (XLA would multiply a by
    # 1 / k, one more rounding)
    divide: Callable


def _orders(xp, n):
    """``n`` as int64: floats truncated; NaN, infinities and floats past int64's range -1
    (no polynomial: 0; PyTorch's cast of such a float gives int64's minimum on x86)."""
    if n.dtype.kind == "f":
        n = xp.trunc(xp.where(xp.isfinite(n) & (xp.abs(n) < 2.0 ** 63), n, -1))
    return n.astype(xp.int64)


def _recur(xp, loop, n, active, q1, step, nan_stop=True):
    """``q_n`` of ``q_0 = 1``, ``q_1 = q1``, ``q_k = step(k, q_{k-1}, q_{k-2})``, per
    element up to its ``n`` where ``active`` (``q1`` itself for n <= 1, and where not
    ``active``: elements whose value is decided otherwise); ``nan_stop``: an element stops
    once it is NaN (PyTorch's loops do; the value stays NaN either way). The loop ends when
    no element needs another step."""
    def live(k, q):
        alive = active & (n >= k)
        return alive & ~xp.isnan(q) if nan_stop else alive

    def body(state):
        k, p, q, alive = state
        p, q = xp.where(alive, q, p), xp.where(alive, step(k, q, p), q)
        return k + 1, p, q, live(k + 1, q)
    return loop(lambda state: xp.any(state[3]), body, (2, xp.ones_like(q1), q1, live(2, q1)))[2]


def _finish(xp, x, n, out):
    """Order 0 is 1 and a negative order 0, whatever else was decided."""
    out = xp.where(n == 0, 1.0, out)
    out = xp.where(n < 0, 0.0, out)
    return out.astype(x.dtype)


# per Chebyshev kind, of y (x, or 2x - 1 when shifted) and the order m (a float array):
# its first order, and its values at y = 1 and at y = -1
_FIRST = {"t": lambda y: y, "u": lambda y: y + y, "v": lambda y: y + y - 1,
          "w": lambda y: y + y + 1}
_TOP = {"t": lambda m: 1.0, "u": lambda m: m + 1, "v": lambda m: 1.0, "w": lambda m: m + m + 1}
_BOTTOM = {"t": lambda xp, m, odd: xp.where(odd, -1.0, 1.0),
           "u": lambda xp, m, odd: xp.where(odd, -(m + 1), m + 1),
           "v": lambda xp, m, odd: xp.where(odd, -(m + m + 1), m + m + 1),
           "w": lambda xp, m, odd: xp.where(odd, -1.0, 1.0)}


def _chebyshev(kind, shifted):
    # the order past which PyTorch uses the trigonometric form inside (-1, 1)
    limit = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
             ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[kind, shifted]

    def fn(ops, x, n):
        xp, loop, rounded, _ = ops
        x, n = xp.broadcast_arrays(x, _orders(xp, n))
        y = x + x - 1 if shifted else x
        nf = n.astype(x.dtype)
        inside = (n > limit) & (xp.abs(y) < 1)
        # the interval's ends (x = +-1; shifted: x = 1 and x = 0)
        top = (x == 1) if shifted else (xp.abs(x) == 1) & (x > 0)
        bottom = (x == 0) if shifted else (xp.abs(x) == 1) & (x < 0)
        out = _recur(xp, loop, n, ~(inside | top | bottom), _FIRST[kind](y).astype(x.dtype),
                     lambda k, q, p: rounded((y + y) * q) - p)
        theta = xp.arccos(xp.where(inside, y, 0))
        odd = n % 2 == 1
        if kind == "t":
            trig = xp.cos(nf * theta)
        elif kind == "u":
            s = xp.sin(theta)
            trig = xp.where(s != 0, xp.sin((nf + 1) * theta) / xp.where(s != 0, s, 1),
                            (nf + 1) * xp.cos((nf + 1) * theta) / y)
        elif kind == "v":
            trig = xp.where(xp.sin(theta / 2) != 1,
                            xp.cos((nf + 0.5) * theta) / xp.cos(theta / 2),
                            xp.where(odd, -(nf + nf + 1), nf + nf + 1))
        else:
            edge = 1.0 if shifted else xp.where(y > 0, nf + nf + 1, 1.0)
            trig = xp.where(xp.cos(theta / 2) != 1,
                            xp.sin((nf + 0.5) * theta) / xp.sin(theta / 2),
                            xp.where(odd & ~((y > 0) & (not shifted)), -1.0, edge))
        out = xp.where(inside, trig, out)
        out = xp.where(top, _TOP[kind](nf), xp.where(bottom, _BOTTOM[kind](xp, nf, odd), out))
        return _finish(xp, x, n, out)
    return fn


def _hermite(physicists):
    def fn(ops, x, n):
        xp, loop, rounded, _ = ops
        x, n = xp.broadcast_arrays(x, _orders(xp, n))
        # past this order PyTorch gives NaN (no recurrence runs there)
        limit = 128 if x.dtype == np.float32 else 512
        if physicists:  # PyTorch's k runs 2, 4, ... below 2n: step j (from 2) has k = 2(j-1)
            first, step = x + x, lambda j, q, p: rounded((x + x) * q) - rounded((2 * (j - 1)) * p)
        else:
            first, step = x, lambda j, q, p: rounded(x * q) - rounded((j - 1) * p)
        out = _recur(xp, loop, n, n <= limit, first.astype(x.dtype), step, nan_stop=False)
        return _finish(xp, x, n, xp.where(n > limit, np.nan, out))
    return fn


def _laguerre(ops, x, n):
    xp, loop, rounded, divide = ops
    x, n = xp.broadcast_arrays(x, _orders(xp, n))
    one = x.dtype.type(1.0)
    at_zero = (xp.abs(x) == 0) & (n >= 0)
    out = _recur(xp, loop, n, ~at_zero, (one - x).astype(x.dtype),
                 lambda j, q, p: divide(rounded(((2 * (j - 1)) + (one - x)) * q)
                                         - rounded((j - 1) * p), j))
    return _finish(xp, x, n, xp.where(at_zero, 1.0, out))


def _legendre(ops, x, n):
    xp, loop, rounded, divide = ops
    x, n = xp.broadcast_arrays(x, _orders(xp, n))
    ends = (xp.abs(x) == 1) & (n >= 0)
    out = _recur(xp, loop, n, ~ends, x.astype(x.dtype),
                 lambda j, q, p: divide(rounded((2 * (j - 1) + 1) * x * q)
                                        - rounded((j - 1) * p), j))
    out = xp.where(ends, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0), out)
    return _finish(xp, x, n, out)


POLYNOMIALS = {
    **{f"{'shifted_' if s else ''}chebyshev_polynomial_{k}": _chebyshev(k, s)
       for s in (False, True) for k in "tuvw"},
    "hermite_polynomial_h": _hermite(True), "hermite_polynomial_he": _hermite(False),
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre}


def _python_loop(cond, body, state):
    while cond(state):
        state = body(state)
    return state


_NUMPY = ArrayOps(np, _python_loop, lambda v: v, np.divide)


def _numpy(fn):
    def numpy_fn(x, n):
        with np.errstate(all="ignore"):
            return fn(_NUMPY, x, n)
    return numpy_fn


POLYNOMIAL_FNS = {name: _numpy(fn) for name, fn in POLYNOMIALS.items()}


for _name, _fn in POLYNOMIAL_FNS.items():
    kernel(getattr(P, _name))(prim_kernel(getattr(P, _name), _fn))
    # the ATen op and its out= form directly (one NumPy pass, no decomposition)
    _aop = getattr(aten, f"special_{_name}").default
    register_family(_aop, kernel_of(_aop, _fn, (0, 1), no_extra))
