"""Helpers shared by the neural-network op families: tag sets, the dtype math runs in,
small tensor builders."""
from __future__ import annotations

from ....core import dtype as D
from ....ops import aten
from ...promotion import opmath_dtype as _opmath
from ...registry import TensorMeta
from .._common import not_implemented as _not_implemented

CORE = ("core",)
CORE_PW = ("core", "pointwise")
ATEN = ()
ATEN_PW = ("pointwise",)
RANDOM = ("nondeterministic",)
_HALF = (D.float16, D.bfloat16)


def _check_float(x, kernel):
    """PyTorch's dispatch error of a kernel compiled for floating types only."""
    if not x.dtype.is_floating_point:
        raise _not_implemented(kernel, x.dtype)


def _to(x, dtype):
    """``x`` converted to ``dtype`` (no op when it already has it)."""
    return x if x.dtype is dtype else aten._to_copy(x, dtype=dtype)


def _up(x):
    return _to(x, _opmath(x.dtype))


def _same(x):
    return TensorMeta(tuple(x.shape), x.dtype)




def _arange(n, dtype, device):
    return aten.arange.start_step(0, n, 1, dtype=dtype, device=device)


def _full(shape, value, dtype, device):
    return aten.full(list(shape), value, dtype=dtype, device=device)


def _channel_view(t, ndim):
    return aten.view(t, [1, t.shape[0]] + [1] * (ndim - 2))
