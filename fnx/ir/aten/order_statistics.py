"""Order statistics and ordered scans: ``kthvalue``, ``median``, ``nanmedian``, ``mode``,
``quantile``, ``nanquantile``, ``cummax``, ``cummin``, ``logcumsumexp``.

Each is a decomposition (CompositeImplicit) onto ``sort``, ``gather`` and reductions, so
autograd, tracing and every backend come from those ops; a value-selecting op returns
``gather(self, indices)``, so its gradient goes to the chosen element only, as in
PyTorch.  PyTorch's rules: the median of an even count is the lower of the two middle
values; NaN is the largest value, ``median``/``quantile`` of a row with a NaN are NaN (the
index of its first NaN), ``nan*`` ignore NaNs (an all-NaN row gives NaN); ``mode`` picks
the smallest of the most frequent values and the last index holding it; ``cummax``/
``cummin`` take the last index of a tie and propagate NaN.

The scans (``cummax``, ``cummin``, ``logcumsumexp``) are log-step doubling scans of
``maximum``/``minimum``/``logaddexp`` (O(n log n) elementwise work; there is no scan prim
for them); ``mode`` counts the runs of equal values of the sorted row with one.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ops import aten
from .. import refs
from ..dims import wrap_dim
from ..registry import defop

__all__ = ["kthvalue", "median", "median_dim", "nanmedian", "nanmedian_dim", "mode",
           "quantile", "quantile_scalar", "nanquantile", "nanquantile_scalar", "cummax",
           "cummin", "logcumsumexp"]

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _composite(schema, fn):
    return defop(schema, decomposition=fn)


def _orderable(name, self):
    if self.dtype.is_complex:
        raise RuntimeError(f"\"{name}\" not implemented for '{self.dtype.scalar_type}'")


def _to_last(self, dim):
    """``self`` with ``dim`` moved last (a 0-dim tensor as one element) and the wrapped dim."""
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return aten.reshape.default(self, [1]), 0
    return aten.movedim.int(self, d, -1), d


def _finish(t, self, d, keepdim):
    """A result reduced over the last dim back to PyTorch's layout."""
    if self.ndim == 0:
        return aten.reshape.default(t, [])
    return aten.unsqueeze.default(t, d) if keepdim else t


def _nonempty(name, self, d):
    if self.ndim and self.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _positions(n, device):
    return aten.arange.default(n, dtype=D.int64, device=device)


def _pick(x, k):
    """Values and indices at sorted position(s) ``k`` (an int or an int64 (..., 1) tensor)
    of ``x`` along its last dim; the values gathered from ``x`` itself (so the gradient
    reaches that element only)."""
    i = aten.sort.default(x, -1)[1]
    if isinstance(k, int):
        idx = aten.narrow.default(i, -1, k, 1)
    else:
        idx = aten.gather.default(i, -1, k)
    return (aten.squeeze.dim(aten.gather.default(x, -1, idx), -1),
            aten.squeeze.dim(idx, -1))


def _kthvalue(self, k, dim=-1, keepdim=False):
    _orderable("kthvalue_cpu", self)
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    x, d = _to_last(self, dim)
    v, i = _pick(x, k - 1)
    return _finish(v, self, d, keepdim), _finish(i, self, d, keepdim)


kthvalue = _composite("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                      "(Tensor values, Tensor indices)", _kthvalue)


def _nan_count(x):
    return aten.sum.dim_IntList(aten.isnan.default(x), [-1], True)


def _median_dim(self, dim=-1, keepdim=False, *, ignore_nan=False):
    name = "nanmedian" if ignore_nan else "median"
    _orderable(f"{name}_cpu", self)
    x, d = _to_last(self, dim)
    _nonempty(name, self, d)
    n = x.shape[-1]
    if not self.dtype.is_floating_point:
        k = (n - 1) // 2
    elif ignore_nan:         # the lower middle of the non-NaN values (NaN sorts last)
        valid = aten.clamp.default(aten.rsub.Scalar(_nan_count(x), n - 1), 0)
        k = aten.div.Tensor_mode(valid, 2, rounding_mode="floor")
    else:                    # a row with a NaN: its first NaN
        c = _nan_count(x)
        k = aten.where.self(aten.gt.Scalar(c, 0), aten.rsub.Scalar(c, n),
                            refs.full([1], (n - 1) // 2, D.int64, x.device))
    v, i = _pick(x, k)
    return _finish(v, self, d, keepdim), _finish(i, self, d, keepdim)


def _median_all(self, *, ignore_nan=False):
    name = "nanmedian" if ignore_nan else "median"
    _orderable(f"{name}_cpu", self)
    flat = aten.reshape.default(self, [-1])
    if flat.shape[0] == 0:     # NaN; integers: their lowest value, as PyTorch's CPU kernel
        fill = (float("nan") if self.dtype.is_floating_point
                else int(np.iinfo(self.dtype.numpy).min))
        return refs.full([], fill, self.dtype, self.device)
    return _median_dim(flat, 0, ignore_nan=ignore_nan)[0]


median = _composite("median(Tensor self) -> Tensor", _median_all)
median_dim = _composite("median.dim(Tensor self, int dim, bool keepdim=False) -> "
                        "(Tensor values, Tensor indices)", _median_dim)
nanmedian = _composite("nanmedian(Tensor self) -> Tensor",
                       lambda self: _median_all(self, ignore_nan=True))
nanmedian_dim = _composite("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
                           "(Tensor values, Tensor indices)",
                           lambda self, dim, keepdim=False:
                           _median_dim(self, dim, keepdim, ignore_nan=True))


def _mode(self, dim=-1, keepdim=False):
    _orderable("mode", self)
    x, d = _to_last(self, dim)
    _nonempty("mode", self, d)
    n = x.shape[-1]
    s = aten.sort.default(x, -1)[0]
    pos = _positions(n, x.device)
    # runs of equal values in the sorted row: each position counts back to its run's start
    new_run = aten.cat.default([aten.ones_like.default(aten.narrow.default(s, -1, 0, 1),
                                                       dtype=D.bool),
                                aten.ne.Tensor(aten.narrow.default(s, -1, 1, n - 1),
                                               aten.narrow.default(s, -1, 0, n - 1))], -1)
    start = _scan(aten.where.self(new_run, pos, 0), aten.maximum.default)
    counts = aten.sub.Tensor(pos, start)
    # the first maximal count in ascending order: the smallest of the most frequent values
    best = aten.gather.default(s, -1, aten.argmax.default(counts, -1, True))
    idx = aten.amax.default(aten.where.self(aten.eq.Tensor(x, best), pos, -1), [-1], True)
    v = aten.squeeze.dim(aten.gather.default(x, -1, idx), -1)
    return _finish(v, self, d, keepdim), _finish(aten.squeeze.dim(idx, -1), self, d, keepdim)


mode = _composite("mode(Tensor self, int dim=-1, bool keepdim=False) -> "
                  "(Tensor values, Tensor indices)", _mode)


# --------------------------------------------------------------------------- quantile

def _check_quantile(name, self, q, interpolation):
    if self.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if self.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if hasattr(q, "_ks") or hasattr(q, "ndim"):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not self.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")


def _quantile(self, q, dim=None, keepdim=False, *, interpolation="linear", ignore_nan=False):
    name = "nanquantile" if ignore_nan else "quantile"
    _check_quantile(name, self, q, interpolation)
    q_tensor = hasattr(q, "ndim")
    scalar_q = not q_tensor or q.ndim == 0
    if not hasattr(q, "ndim"):
        q = refs.full([], float(q), self.dtype, self.device)
    if dim is None:
        x, d = aten.reshape.default(self, [-1]), None
    else:
        x, d = _to_last(self, dim)
    s = aten.sort.default(x, -1)[0]
    n = x.shape[-1]
    qv = aten.reshape.default(q, [-1])                                    # (Q,)
    if q_tensor:
        bad = aten.logical_or.default(aten.lt.Scalar(qv, 0), aten.gt.Scalar(qv, 1))
        qv = refs.checked(qv, aten.logical_not(bad),
                          f"{name}() q values must be in the range [0, 1]", float("nan"))
    batch = list(s.shape[:-1])
    if ignore_nan:
        valid = aten.rsub.Scalar(_nan_count(s), n)                        # (..., 1)
        last = aten._to_copy.default(aten.clamp.default(aten.sub.Scalar(valid, 1), 0),
                                     dtype=self.dtype)
        rank = aten.mul.Tensor(qv, last)                                  # (..., Q)
        undefined = aten.eq.Scalar(valid, 0)
    else:
        rank = aten.expand.default(aten.mul.Scalar(qv, n - 1), batch + [qv.shape[0]])
        undefined = aten.isnan.default(aten.narrow.default(s, -1, n - 1, 1))
    if interpolation == "nearest":
        rank = aten.round.default(rank)                                   # half to even
    lo = aten._to_copy.default(aten.floor.default(rank), dtype=D.int64)
    hi = aten._to_copy.default(aten.ceil.default(rank), dtype=D.int64)
    if interpolation in ("lower", "nearest"):
        out = aten.gather.default(s, -1, lo)
    elif interpolation == "higher":
        out = aten.gather.default(s, -1, hi)
    else:
        a, b = aten.gather.default(s, -1, lo), aten.gather.default(s, -1, hi)
        if interpolation == "linear":     # lerp: exact at both ends, so infinities hold
            out = aten.lerp.Tensor(a, b, aten.sub.Tensor(rank, aten.floor.default(rank)))
        else:
            out = aten.lerp.Scalar(a, b, 0.5)
    out = aten.where.self(undefined, float("nan"), out)
    out = aten.movedim.int(out, -1, 0)                                    # (Q, ...)
    if keepdim:
        shape = [qv.shape[0]] + ([1] * self.ndim if d is None else
                                 [1 if i == d else size for i, size in enumerate(self.shape)])
        out = aten.reshape.default(out, shape)
    return aten.squeeze.dim(out, 0) if scalar_q else out


def _quantile_op(schema, ignore_nan):
    def fn(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _quantile(self, q, dim, keepdim, interpolation=interpolation,
                         ignore_nan=ignore_nan)
    return _composite(schema, fn)


_Q = "int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor"
quantile = _quantile_op(f"quantile(Tensor self, Tensor q, {_Q}", False)
quantile_scalar = _quantile_op(f"quantile.scalar(Tensor self, float q, {_Q}", False)
nanquantile = _quantile_op(f"nanquantile(Tensor self, Tensor q, {_Q}", True)
nanquantile_scalar = _quantile_op(f"nanquantile.scalar(Tensor self, float q, {_Q}", True)


# --------------------------------------------------------------------------- scans

def _scan(x, combine):
    """An inclusive scan of ``x`` along its last dim with the associative ``combine``:
    log2(n) doubling steps (Hillis-Steele), each combining every element with the partial
    result ``step`` places before it; O(n log n) work, O(n) memory, every step a plain
    elementwise op (so it traces, compiles and differentiates like one)."""
    n, step = x.shape[-1], 1
    while step < n:
        head = aten.narrow.default(x, -1, 0, step)
        tail = combine(aten.narrow.default(x, -1, step, n - step),
                       aten.narrow.default(x, -1, 0, n - step))
        x = aten.cat.default([head, tail], -1)
        step *= 2
    return x


def _cum_extreme(name, largest):
    def fn(self, dim):
        _orderable(name, self)
        x, d = _to_last(self, dim)
        if x.shape[-1] == 0:
            return aten.clone.default(self), aten.zeros_like.default(self, dtype=D.int64)
        # the running extreme (maximum/minimum propagate NaN, as PyTorch's scan does)
        v = _scan(x, aten.maximum.default if largest else aten.minimum.default)
        # where the running extreme is (re)attained, a tie or a NaN included, the index
        # moves there; elsewhere it stays: a running max of those positions
        hit = aten.eq.Tensor(x, v)
        if self.dtype.is_floating_point:
            hit = aten.logical_or.default(hit, aten.isnan.default(x))
        pos = _positions(x.shape[-1], x.device)
        idx = _scan(aten.where.self(hit, pos, 0), aten.maximum.default)
        values = aten.gather.default(x, -1, idx)     # the gradient goes to that element
        if self.ndim == 0:
            return aten.reshape.default(values, []), aten.reshape.default(idx, [])
        return aten.movedim.int(values, -1, d), aten.movedim.int(idx, -1, d)
    return fn


cummax = _composite("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                    _cum_extreme("cummax_cpu", True))
cummin = _composite("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                    _cum_extreme("cummin_cpu", False))


def _logcumsumexp(self, dim):
    if not (self.dtype.is_floating_point):
        raise RuntimeError(f"\"logcumsumexp_out_cpu\" not implemented for "
                           f"'{self.dtype.scalar_type}'")
    x, d = _to_last(self, dim)
    if x.shape[-1] == 0:
        return aten.clone.default(self)
    out = _scan(x, aten.logaddexp.default)
    return aten.reshape.default(out, []) if self.ndim == 0 else aten.movedim.int(out, -1, d)


logcumsumexp = _composite("logcumsumexp(Tensor self, int dim) -> Tensor", _logcumsumexp)
