"""Sorting: sort, topk (core) and argsort, msort, sort.stable (decompositions onto sort).

Semantics (PyTorch's): NaN sorts as the largest value (last ascending, first descending),
indices are int64, and a 0-dim tensor sorts as a one-element dim 0/-1.  fnx's
``sort.default`` is always *stable*, also when descending (equal elements keep their
original order), so ``sort.stable`` and ``argsort.stable`` decompose onto it and every
backend must honour that promise.  ``topk`` returns the ``k`` largest (or smallest)
elements along ``dim``, sorted; with ties any valid choice of indices is allowed.
Complex tensors have no order: sort and topk refuse them.

sort and topk decompose to ``prims.sort`` (asked to be stable) and ``prims.top_k``,
whose NaN and tie rules are PyTorch's; a 0-dim tensor is sorted as a one-element vector.
"""
from __future__ import annotations

from ...core import dtype as D
from ...ops import aten, prims
from ..registry import TensorMeta, decomposition, defop, derivative
from ..dims import wrap_dim

CORE = ("core",)
ATEN = ()


def _check_orderable(name, self):
    if self.dtype.is_complex:
        raise RuntimeError(f"\"{name}\" not implemented for '{self.dtype.scalar_type}'")


def _sort_meta(self, dim=-1, descending=False):
    wrap_dim(dim, self.ndim)
    _check_orderable("sort", self)
    shape = tuple(self.shape)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, D.int64)


sort_default = defop("sort(Tensor self, int dim=-1, bool descending=False) -> "
                     "(Tensor values, Tensor indices)", tags=CORE, meta=_sort_meta)


def _as_vector(self, dim):
    """A 0-dim tensor as one element along dim 0 (prims take no dim on rank 0)."""
    if self.ndim == 0:
        return prims.reshape(self, [1]), 0
    return self, wrap_dim(dim, self.ndim)


def _shaped(pair, shape):
    shape = list(shape)
    return tuple(t if list(t.shape) == shape else prims.reshape(t, shape) for t in pair)


@decomposition(sort_default)
def _sort_decomp(self, dim=-1, descending=False):
    """Always the stable sort: fnx promises it for sort.default on every backend."""
    _sort_meta(self, dim, descending)
    x, d = _as_vector(self, dim)
    return _shaped(prims.sort(x, d, bool(descending), True), self.shape)


@derivative(sort_default)
def _sort_backward(grad, dim, result1):
    # the values are a permutation of self: each gradient goes back to where it came from
    # (only the indices are saved, so the values may be changed in place after)
    if grad.ndim == 0:
        return grad
    return _scatter_back(grad, grad.shape, wrap_dim(dim, grad.ndim), result1)


def _scatter_back(grad, shape, d, indices):
    z = aten.zeros.default(list(shape), dtype=grad.dtype, device=grad.device)
    return aten.scatter.src(z, d, indices, grad)


def _sort_stable_meta(self, *, stable, dim=-1, descending=False):
    return _sort_meta(self, dim, descending)


sort_stable = defop("sort.stable(Tensor self, *, bool? stable, int dim=-1, "
                    "bool descending=False) -> (Tensor values, Tensor indices)", tags=ATEN,
                    meta=_sort_stable_meta,
                    # sort.default is stable on every backend, whatever ``stable`` says
                    decomposition=lambda self, *, stable, dim=-1, descending=False:
                    sort_default(self, dim, descending))


def _topk_meta(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, self.ndim)
    _check_orderable("topk_cpu", self)
    shape = list(self.shape)
    size = shape[d] if shape else 1
    if not isinstance(k, int) or isinstance(k, bool):
        if hasattr(k, "__index__") and not isinstance(k, bool):
            k = k.__index__()
        else:
            raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if shape:
        shape[d] = k
    return TensorMeta(tuple(shape), self.dtype), TensorMeta(tuple(shape), D.int64)


topk_default = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, "
                     "bool sorted=True) -> (Tensor values, Tensor indices)", tags=CORE,
                     meta=_topk_meta)


@decomposition(topk_default)
def _topk_decomp(self, k, dim=-1, largest=True, sorted=True):
    """``sorted=False`` allows any order; the sorted one is returned.  On a 0-dim tensor
    PyTorch returns the element itself for k = 0 and k = 1 alike."""
    vm, _ = _topk_meta(self, k, dim, largest, sorted)
    x, d = _as_vector(self, dim)
    k = 1 if self.ndim == 0 else vm.shape[d]
    return _shaped(prims.top_k(x, k, d, bool(largest)), vm.shape)


@derivative(topk_default)
def _topk_backward(grad, self, dim, result1):
    if self.ndim == 0:
        return grad
    return _scatter_back(grad, self.shape, wrap_dim(dim, self.ndim), result1)


def _argsort_meta(self, dim=-1, descending=False):
    return _sort_meta(self, dim, descending)[1]


argsort_default = defop("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
                        tags=ATEN, meta=_argsort_meta,
                        decomposition=lambda self, dim=-1, descending=False:
                        sort_default(self, dim, descending)[1])
argsort_stable = defop("argsort.stable(Tensor self, *, bool stable, int dim=-1, "
                       "bool descending=False) -> Tensor", tags=ATEN,
                       meta=lambda self, *, stable, dim=-1, descending=False:
                       _argsort_meta(self, dim, descending),
                       decomposition=lambda self, *, stable, dim=-1, descending=False:
                       sort_default(self, dim, descending)[1])
msort_default = defop("msort(Tensor self) -> Tensor", tags=ATEN,
                      meta=lambda self: _sort_meta(self, 0)[0],
                      decomposition=lambda self: sort_default(self, 0)[0])
