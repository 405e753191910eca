"""Helpers shared by the neural-network entries: dtype lists, tolerances, tensor
builders and the float64 reference wrapper."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ...database import make_tensor
from ...reference_dtypes import category

F = (D.float32, D.float64)
FI = (D.float32, D.float64, D.int64)
C = (D.complex64, D.complex128)
# float32 kernels round every step, the references once (float64 math)
TOLS = {D.float32: (1e-5, 1e-5), D.float64: (1e-7, 1e-7)}
# sums of many products (convolution, attention, pooling backward)
SUMS = {D.float32: (1e-4, 1e-4), D.float64: (1e-7, 1e-7)}
NAN, INF = float("nan"), float("inf")


def _t(shape, dtype, device, low=None, high=None, **kw):
    return make_tensor(shape, dtype, device, low=low, high=high, **kw)


def _arr(values, dtype, device="cpu"):
    """A tensor holding exactly ``values`` (NumPy data, cast to ``dtype``)."""
    t = fnx.from_numpy(np.array(np.asarray(values).astype(dtype.numpy), order="C"))
    return t if str(device) == "cpu" else t.to(device)


def _np(t):
    return np.asarray(t.numpy(force=True))


def _idx(values, device, dtype=D.int64):
    return _arr(np.asarray(values, np.int64), dtype, device)


def _wide(x):
    if isinstance(x, np.ndarray):
        c = category(x.dtype)
        return x.astype(np.float64) if c == 2 else x.astype(np.complex128) if c == 3 else x
    if isinstance(x, (list, tuple)) and any(isinstance(y, np.ndarray) for y in x):
        return type(x)(_wide(y) for y in x)
    return x


def _first_float(*args, **kwargs):
    for a in args:
        if isinstance(a, np.ndarray) and category(a.dtype) == 2:
            return a.dtype
    return None


def _cast(r, dt):
    if isinstance(r, (tuple, list)):
        return tuple(_cast(x, dt) for x in r)
    r = np.asarray(r)
    return r.astype(dt) if dt is not None and r.dtype.kind == "f" else r


def _floatref(fn, out=_first_float):
    """A reference computed in float64 (complex128) whose floating results are rounded to
    ``out(*args)`` (default: the dtype of the first floating array argument)."""
    def ref(*args, **kwargs):
        dt = out(*args, **kwargs)
        with np.errstate(all="ignore"):
            r = fn(*(_wide(a) for a in args), **{k: _wide(v) for k, v in kwargs.items()})
        return _cast(r, dt)
    ref.__name__ = fn.__name__
    return ref


def _per_dim(v, nd):
    v = [v] if isinstance(v, int) else list(v)
    return v * nd if len(v) == 1 else v
