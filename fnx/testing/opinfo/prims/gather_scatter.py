"""OpInfo entries of the gather/scatter prims (fnx/ir/prims/gather_scatter.py): the
references loop over the index element by element (the kernels use NumPy's
take_along_axis and ufunc.at)."""
from __future__ import annotations

import numpy as np

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, _gen, make_tensor, register
from ._common import ALL, from_py, py_values, tensor

__all__ = ["index_tensor"]


def index_tensor(shape, size, device, unique_dim=None):
    g = _gen()
    if unique_dim is None:
        a = g.integers(0, max(size, 1), shape) if size else np.zeros(shape, np.int64)
    else:       # distinct indices along ``unique_dim`` (scatter "none": no duplicate writes)
        a = np.argsort(g.random(shape[:unique_dim] + (size,) + shape[unique_dim + 1:]),
                       axis=unique_dim)
        a = np.take(a, np.arange(shape[unique_dim]), axis=unique_dim)
    t = fnx.from_numpy(np.array(a, np.int64).reshape(shape))
    return t if str(device) == "cpu" else t.to(device)


def _gather_samples(info, device, dtype):
    x = make_tensor((3, 5), dtype, device)
    yield SampleInput(x, 1, index_tensor((3, 4), 5, device))
    yield SampleInput(x, 0, index_tensor((2, 5), 3, device))
    yield SampleInput(make_tensor((4, 5), dtype, device), 0, index_tensor((2, 3), 4, device))
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, index_tensor((3, 0), 5, device))


def _gather_ref(a, dim, index):
    # out[p] = a[p with p[dim] replaced by index[p]]
    out = np.empty(index.shape, a.dtype)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[dim] = index[p]
        out[p] = a[tuple(q)]
    return out


def _gather_errors(info, device):
    x = make_tensor((3, 5), D.float32, device)
    yield ErrorInput(SampleInput(x, 1, index_tensor((3, 2), 5, device).to(D.int32)), RuntimeError,
                     "prims.gather: expected an int64 index")
    yield ErrorInput(SampleInput(x, 1, tensor([[0, 5]], D.int64, device)), RuntimeError,
                     "index out of bounds", meta=False)


def _scatter_samples(info, device, dtype):
    reduces = ["none", "add", "mul", "max", "min"]
    if dtype is D.bool:
        reduces = ["none", "max", "min"]
    for i, r in enumerate(reduces):
        self = make_tensor((3, 5), dtype, device, low=-2, high=3)
        if r == "none":
            idx = index_tensor((3, 4), 5, device, unique_dim=1)
        else:
            idx = index_tensor((3, 4), 5, device)
        yield SampleInput(self, 1, idx, make_tensor((3, 4), dtype, device, low=-2, high=3), r)
    yield SampleInput(make_tensor((4, 3), dtype, device), 0, index_tensor((2, 3), 4, device, 0),
                      make_tensor((2, 3), dtype, device))
    yield SampleInput(make_tensor((3, 5), dtype, device), 1, index_tensor((3, 0), 5, device),
                      make_tensor((3, 0), dtype, device), "add")


def _max(x, y):
    return x if x != x or (y == y and x >= y) else y       # a NaN wins


def _min(x, y):
    return x if x != x or (y == y and x <= y) else y


_COMBINE = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "max": _max, "min": _min}
_COMBINE_BOOL = {"add": lambda x, y: x or y, "mul": lambda x, y: x and y,
                 "max": lambda x, y: x or y, "min": lambda x, y: x and y}


def _scatter_ref(a, dim, index, src, reduce="none"):
    """One write per element of ``index``, in row-major order (with "none" the last write
    to a slot wins), combined as Python numbers and rounded once at the end."""
    out, values = py_values(a), py_values(src)
    combine = (_COMBINE_BOOL if a.dtype == np.bool_ else _COMBINE).get(reduce)
    for k, p in enumerate(np.ndindex(*index.shape)):
        q = list(p)
        q[dim] = int(index[p])
        slot = int(np.ravel_multi_index(q, a.shape))
        out[slot] = values[k] if combine is None else combine(out[slot], values[k])
    return from_py(out, a.dtype, a.shape)


def _scatter_errors(info, device):
    x = make_tensor((3, 5), D.float32, device)
    idx = index_tensor((3, 4), 5, device)
    yield ErrorInput(SampleInput(x, 1, idx, make_tensor((3, 4), D.float32, device), "sum"),
                     RuntimeError, "prims.scatter: reduce must be one of")


register(
    OpInfo(P.gather, _gather_ref, ALL, _gather_samples, error_inputs=_gather_errors),
    OpInfo(P.scatter, _scatter_ref, ALL, _scatter_samples, error_inputs=_scatter_errors),
)
