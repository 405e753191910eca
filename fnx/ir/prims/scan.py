"""Scan prims: cumsum and cumprod along one dim (on bool: running or / and)."""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import cj, prim, shift
from .checks import check_tensor, dim_arg

__all__ = ["cumsum", "cumprod"]


def _scan_meta(name):
    def meta(self, dim):
        check_tensor(name, "self", self)
        dim_arg(name, dim, self.ndim)
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


cumsum = prim("cumsum(Tensor self, int dim) -> Tensor", _scan_meta("cumsum"))
cumprod = prim("cumprod(Tensor self, int dim) -> Tensor", _scan_meta("cumprod"))


@derivative(cumsum)
def _cumsum_backward(grad, dim):
    return _p.rev(_p.cumsum(_p.rev(grad, [dim]), dim), [dim])


@derivative(cumprod)
def _cumprod_backward(grad, self, dim, result):
    # d out[j] / d x[k] = out[k-1] * x[k+1] * ... * x[j] for j >= k, so the gradient is
    # out[k-1] * S[k] with S[k] = g[k] + x[k+1] * S[k+1]: a linear recurrence, solved by a
    # log-step suffix scan. No division, so zeros in ``self`` are exact.
    n = self.shape[dim]
    a, s = cj(shift(self, dim, 1, 0)), grad
    step = 1
    while step < n:
        s = _p.add(s, _p.mul(a, shift(s, dim, step, 0)))
        a = _p.mul(a, shift(a, dim, step, 0))
        step *= 2
    return _p.mul(cj(shift(result, dim, -1, 1)), s)
