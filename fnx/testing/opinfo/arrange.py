"""OpInfo entries for the shape ops that build new tensors (fnx/ir/aten/arrange.py):
joining, reordering and tiling, padding, triangles and fills.

The NumPy references restate PyTorch's rules on their own: ``cat`` promotes across all
inputs and skips 1-D empty tensors (the legacy rule), ``constant_pad_nd`` pads the last
dim first and crops on negative pads, ``roll`` without dims rolls the flattened tensor,
and scalar fill values are cast to the tensor's dtype (floats truncate toward zero on
integer tensors).  Samples are built as in ``shape``'s entries.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import arrange as A
from ..database import ALL_DTYPES, Known, OpInfo, SampleInput, register
from ..database import make_tensor as mk
from ..database import make_transposed as _t
from ..reference_dtypes import promote
from .shape import _errors, _f


def _scalar(dtype, i=0):
    """A Python fill value of ``dtype``'s kind (several, by ``i``)."""
    if dtype is D.bool:
        return (True, False)[i % 2]
    if dtype.is_floating_point or dtype.is_complex:
        return (-2.5, 7.0)[i % 2]
    return (3, 7)[i % 2]


def _cast(value, dtype):
    """A Python scalar converted as PyTorch converts a fill value: floats truncate on
    integer tensors, anything non-zero is True."""
    return np.asarray(value).astype(dtype)


# --------------------------------------------------------------------------- references

def _cat_ref(tensors, dim=0):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote(dtype, t.dtype)
    used = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not used:
        return np.empty((0,), dtype)
    return np.concatenate([t.astype(dtype) for t in used], axis=dim % used[0].ndim)


def _flip_ref(a, dims):
    return np.flip(a, tuple(d % a.ndim for d in dims)).copy() if a.ndim and dims else a.copy()


def _repeat_ref(a, repeats):
    padded = (1,) * (len(repeats) - a.ndim) + a.shape
    return np.tile(a.reshape(padded), tuple(repeats)) if repeats else a.copy()


def _constant_pad_nd_ref(a, pad, value=0):
    out = a
    fill = _cast(value, a.dtype)
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i                       # pad lists the last dim first
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = out.shape[d]
        src = np.arange(n + lo + hi) - lo        # the input position each output reads
        shape = list(out.shape)
        shape[d] = len(src)
        if n == 0:
            out = np.full(shape, fill, a.dtype)
            continue
        inside = ((src >= 0) & (src < n)).reshape([-1 if j == d else 1
                                                   for j in range(out.ndim)])
        taken = np.take(out, np.clip(src, 0, n - 1), axis=d)
        out = np.where(inside, taken, fill).astype(a.dtype)
    return out.copy()


def _tril_ref(a, diagonal=0):
    return np.tril(a, diagonal)


def _triu_ref(a, diagonal=0):
    return np.triu(a, diagonal)


def _fill_ref(a, value):
    return np.full(a.shape, _cast(value, a.dtype), a.dtype)


def _masked_fill_ref(a, mask, value):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.where(mask, _cast(value, a.dtype), np.broadcast_to(a, shape)).astype(a.dtype)


def _promoted(tensors):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote(dtype, t.dtype)
    return [t.astype(dtype) for t in tensors]


def _stack_ref(tensors, dim=0):
    return np.stack(_promoted(tensors), axis=dim % (tensors[0].ndim + 1))


def _atleast_3d_ref(a):
    # PyTorch: 0-dim -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1); NumPy agrees
    return np.atleast_3d(a).copy()


def _hstack_ref(tensors):
    return np.hstack(_promoted(tensors))


def _vstack_ref(tensors):
    return np.vstack(_promoted(tensors))


def _dstack_ref(tensors):
    return np.dstack(_promoted(tensors))


def _roll_ref(a, shifts, dims=()):
    if not dims:
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return np.roll(a, tuple(shifts), tuple(d % a.ndim for d in dims))


def _tile_ref(a, dims):
    return np.tile(a, tuple(dims)) if dims else a.copy()


# --------------------------------------------------------------------------- samples

def _other(dtype):
    """A second dtype for promotion samples."""
    return D.float32 if dtype is not D.float32 else D.int64


def _cat_samples(info, device, dtype):
    x = mk((2, 3), dtype, device)
    yield SampleInput([x, mk((1, 3), dtype, device)])
    yield SampleInput([x, _t((2, 4), dtype, device)], -1)
    yield SampleInput([mk((0,), dtype, device), x, mk((0,), D.float64, device)], 0)
    yield SampleInput([mk((0,), dtype, device), mk((0,), dtype, device)])
    yield SampleInput([mk((0, 3), dtype, device), x])
    yield SampleInput([x, mk((2, 2), _other(dtype), device)], 1)
    yield SampleInput([mk((2, 0, 4), dtype, device)], 1)


def _flip_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [0, -1])
    yield SampleInput(_t((3, 4), dtype, device), [])
    yield SampleInput(mk((0, 3), dtype, device), [1])
    yield SampleInput(mk((4,), dtype, device), [-1])


def _repeat_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), [2, 1, 3])
    yield SampleInput(mk((), dtype, device), [])
    yield SampleInput(mk((), dtype, device), [2, 3])
    yield SampleInput(mk((0, 3), dtype, device), [2, 0])
    yield SampleInput(_t((2, 3), dtype, device), [1, 2])


def _pad_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, [1, -2, 0, 2])
    yield SampleInput(x, [2, 1], _scalar(dtype))
    yield SampleInput(mk((3,), dtype, device), [-5, 4])     # crop past the end, then pad
    yield SampleInput(mk((0, 3), dtype, device), [1, 1, 1, 1], _scalar(dtype, 1))
    yield SampleInput(_t((3, 4), dtype, device), [-1, -1])
    yield SampleInput(x, [])


def _tri_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 1)
    yield SampleInput(mk((4, 3), dtype, device), -1)
    yield SampleInput(mk((3, 3), dtype, device))
    yield SampleInput(_t((3, 5), dtype, device), -2)
    yield SampleInput(mk((0, 3), dtype, device), 10)


def _fill_scalar_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), _scalar(dtype))
    yield SampleInput(mk((), dtype, device), _scalar(dtype, 1))
    yield SampleInput(mk((0, 3), dtype, device), _scalar(dtype))
    yield SampleInput(_t((3, 4), dtype, device), True)
    if dtype.category == 1:
        yield SampleInput(mk((2,), dtype, device), 2.7)          # truncates to 2


def _fill_tensor_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), mk((), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), mk((), D.float64, device, low=0, high=5))
    yield SampleInput(mk((0,), dtype, device), mk((), dtype, device))


def _masked_fill_scalar_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), mk((4,), D.bool, device), _scalar(dtype))
    yield SampleInput(mk((3, 1), dtype, device), mk((2, 3, 4), D.bool, device),
                      _scalar(dtype, 1))
    yield SampleInput(mk((), dtype, device), mk((), D.bool, device), _scalar(dtype))
    yield SampleInput(_t((3, 4), dtype, device), _t((3, 4), D.bool, device), True)
    yield SampleInput(mk((0, 3), dtype, device), mk((3,), D.bool, device), _scalar(dtype))


def _masked_fill_tensor_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), mk((2, 3), D.bool, device),
                      mk((), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), mk((4,), D.bool, device),
                      mk((), D.float64, device, low=0, high=5))


def _stack_samples(info, device, dtype):
    x = mk((2, 3), dtype, device)
    yield SampleInput([x, _t((2, 3), dtype, device)], 1)
    yield SampleInput([mk((), dtype, device), mk((), dtype, device)], -1)
    yield SampleInput([mk((0, 2), dtype, device)])
    yield SampleInput([x, mk((2, 3), _other(dtype), device)], 2)


def _atleast_samples(info, device, dtype):
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(mk((3,), dtype, device))
    yield SampleInput(mk((0, 2), dtype, device))


def _hvd_samples(info, device, dtype):
    yield SampleInput([mk((3,), dtype, device), mk((2,), dtype, device)])
    yield SampleInput([mk((2, 3), dtype, device), _t((2, 3), dtype, device)])
    yield SampleInput([mk((), dtype, device), mk((), _other(dtype), device)])


def _dstack_samples(info, device, dtype):
    yield SampleInput([mk((3,), dtype, device), mk((3,), dtype, device)])
    yield SampleInput([mk((2, 3), dtype, device), _t((2, 3), dtype, device)])
    yield SampleInput([mk((), dtype, device), mk((1, 1, 2), _other(dtype), device)])


def _vstack_samples(info, device, dtype):
    yield SampleInput([mk((3,), dtype, device), mk((2, 3), dtype, device)])
    yield SampleInput([mk((), dtype, device), mk((1,), _other(dtype), device)])
    yield SampleInput([_t((2, 3), dtype, device)])


def _roll_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, [1, -5], [0, 2])
    yield SampleInput(x, [3])
    yield SampleInput(x, [7], [1])
    yield SampleInput(mk((0, 3), dtype, device), [1], [1])
    yield SampleInput(_t((3, 4), dtype, device), [-1], [-1])


def _tile_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), [2])
    yield SampleInput(mk((2, 3), dtype, device), [2, 1, 2])
    yield SampleInput(mk((), dtype, device), [3])
    yield SampleInput(_t((2, 3), dtype, device), [0, 1])


# --------------------------------------------------------------------------- error inputs

_CAT_ERRORS = _errors(
    (lambda d: SampleInput([_f((), d), _f((2,), d)]), RuntimeError, "zero-dimensional"),
    (lambda d: SampleInput([_f((2, 3), d), _f((2, 4), d)]), RuntimeError,
     "Sizes of tensors must match"),
    (lambda d: SampleInput([_f((2, 3), d), _f((2, 3, 1), d)]), RuntimeError,
     "same number of dimensions"))


_FLIP_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [0, -2]), RuntimeError, "appears multiple times"),
    (lambda d: SampleInput(_f((2, 3), d), [2]), IndexError, "Dimension out of range"))


_REPEAT_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [2]), RuntimeError, "can not be smaller"),
    (lambda d: SampleInput(_f((2, 3), d), [2, -1]), RuntimeError, "negative dimension"))


_PAD_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [1]), RuntimeError, "must be even"),
    (lambda d: SampleInput(_f((2, 3), d), [-2, -2]), RuntimeError, "negative output size"),
    (lambda d: SampleInput(_f((3,), d), [1, 1, 1, 1]), RuntimeError, "no more than twice"))


_TRI_ERRORS = _errors(
    (lambda d: SampleInput(_f((3,), d)), RuntimeError, "at least 2 dimensions"))


_FILL_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), _f((1,), d)), RuntimeError,
     "only supports 0-dimension value tensor"))


_MASKED_FILL_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), _f((2, 3), d, D.int64), 1), RuntimeError,
     "only supports boolean masks"),
    (lambda d: SampleInput(_f((2, 3), d), _f((4,), d, D.bool), 1), RuntimeError,
     "must match the size"))


# --------------------------------------------------------------------------- entries

# masked_fill_ expands the mask to self, so a mask of more dims fails with expand's message
# (as in PyTorch), not with the generic in-place "doesn't match the broadcast shape" one.
_MASKED_FILL__SHAPE = Known("errors", reason="masked_fill_ with a mask of more dims than self "
                                             "raises expand's error (PyTorch's too), not the "
                                             "derived entry's broadcast-shape message")


def _entries():
    ALL = ALL_DTYPES
    E = OpInfo
    return [
        E(A.cat, _cat_ref, ALL, _cat_samples, error_inputs=_CAT_ERRORS),
        E(A.flip, _flip_ref, ALL, _flip_samples, error_inputs=_FLIP_ERRORS),
        E(A.repeat, _repeat_ref, ALL, _repeat_samples, error_inputs=_REPEAT_ERRORS),
        E(A.constant_pad_nd, _constant_pad_nd_ref, ALL, _pad_samples,
          error_inputs=_PAD_ERRORS),
        E(A.tril, _tril_ref, ALL, _tri_samples, error_inputs=_TRI_ERRORS),
        E(A.triu, _triu_ref, ALL, _tri_samples, error_inputs=_TRI_ERRORS),
        E(A.fill_Scalar, _fill_ref, ALL, _fill_scalar_samples),
        E(A.fill_Tensor, _fill_ref, ALL, _fill_tensor_samples, error_inputs=_FILL_ERRORS),
        E(A.masked_fill_Scalar, _masked_fill_ref, ALL, _masked_fill_scalar_samples,
          error_inputs=_MASKED_FILL_ERRORS, variant_known={"inplace": [_MASKED_FILL__SHAPE]}),
        E(A.masked_fill_Tensor, _masked_fill_ref, ALL, _masked_fill_tensor_samples),
        E(A.stack, _stack_ref, ALL, _stack_samples),
        E(A.atleast_1d, lambda a: np.atleast_1d(a).copy(), ALL, _atleast_samples),
        E(A.atleast_2d, lambda a: np.atleast_2d(a).copy(), ALL, _atleast_samples),
        E(A.atleast_3d, _atleast_3d_ref, ALL, _atleast_samples),
        E(A.hstack, _hstack_ref, ALL, _hvd_samples),
        E(A.vstack, _vstack_ref, ALL, _vstack_samples),
        E(A.dstack, _dstack_ref, ALL, _dstack_samples),
        E(A.roll, _roll_ref, ALL, _roll_samples),
        E(A.tile, _tile_ref, ALL, _tile_samples),
    ]


register(*_entries())
