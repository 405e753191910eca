"""OpInfo entries for the shape and view ops (fnx/ir/aten/shape.py); the ops that build
new tensors (cat, flip, pad, fill, ...) have theirs in ``arrange``.

The NumPy references restate PyTorch's rules on their own: ``view``/``reshape`` resolve
one -1, ``expand`` keeps a dim for -1 and adds leading dims, ``squeeze`` of a dim whose
size is not 1 is a no-op, ``slice`` clamps out-of-range bounds (Python slicing does the
same), and ``chunk`` splits into ceil(size / chunks)-sized pieces (so it may return fewer
chunks).

Samples cover 0-dim and empty tensors, non-contiguous (strided and transposed) inputs,
negative dims and indices, and each op's corner cases; references return copies.
``as_strided`` samples are contiguous tensors that own their storage: its decomposition
reads ``self``'s elements in row-major order as the storage.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import shape as S
from ..database import ALL_DTYPES, ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as mk
from ..database import make_transposed as _t

COMPLEX = (D.complex64, D.complex128)
FLOAT_PAIRS = (D.float32, D.float64)


def _ax(d, n):
    return d % max(n, 1) if n else 0


# --------------------------------------------------------------------------- references

def _view_ref(a, size):
    return np.reshape(a, tuple(size)).copy()


def _permute_ref(a, dims):
    return np.transpose(a, [d % a.ndim for d in dims] if a.ndim else ()).copy()


def _expand_ref(a, size, *, implicit=False):
    lead = len(size) - a.ndim
    shape = [a.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(a, shape).copy()


def _squeeze_dims_ref(a, dim):
    dims = [dim] if isinstance(dim, int) else dim
    axes = tuple(sorted({d % a.ndim for d in dims if a.ndim and a.shape[d % a.ndim] == 1}))
    return np.squeeze(a, axes).copy() if axes else a.copy()


def _unsqueeze_ref(a, dim):
    return np.expand_dims(a, dim % (a.ndim + 1)).copy()


def _select_ref(a, dim, index):
    return np.take(a, index, axis=dim % a.ndim).copy()


def _slice_ref(a, dim=0, start=None, end=None, step=1):
    d = dim % a.ndim
    return a[(slice(None),) * d + (slice(start, end, step),)].copy()


def _diagonal_ref(a, offset=0, dim1=0, dim2=1):
    return np.diagonal(a, offset, dim1 % a.ndim, dim2 % a.ndim).copy()


def _as_strided_ref(a, size, stride, storage_offset=None):
    flat = np.ascontiguousarray(a).reshape(-1)
    start = storage_offset or 0
    return np.lib.stride_tricks.as_strided(flat[start:], tuple(size),
                                           tuple(s * a.itemsize for s in stride)).copy()


def _copy_ref(a, **kwargs):
    return a.copy()


def _split_with_sizes_ref(a, split_sizes, dim=0):
    d = dim % a.ndim
    return [x.copy() for x in np.split(a, np.cumsum(split_sizes)[:-1], axis=d)]


def _unfold_ref(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)[:size].copy()
    d = dimension % a.ndim
    # every window along d (window elements last), then every step-th window
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return w[(slice(None),) * d + (slice(None, None, step),)].copy()


def _view_as_real_ref(a):
    return np.stack([a.real, a.imag], axis=-1)


def _view_as_complex_ref(a):
    out = np.empty(a.shape[:-1], np.complex64 if a.dtype == np.float32 else np.complex128)
    out.real, out.imag = a[..., 0], a[..., 1]
    return out


def _select_scatter_ref(a, src, dim, index):
    out = a.copy()
    d = dim % a.ndim
    out[(slice(None),) * d + (index,)] = src
    return out


def _slice_scatter_ref(a, src, dim=0, start=None, end=None, step=1):
    out = a.copy()
    d = dim % a.ndim
    out[(slice(None),) * d + (slice(start, end, step),)] = src
    return out


def _diagonal_scatter_ref(a, src, offset=0, dim1=0, dim2=1):
    out = a.copy()
    d1, d2 = dim1 % a.ndim, dim2 % a.ndim
    n = src.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    view = np.moveaxis(out, (d1, d2), (-2, -1))       # a view: writes reach out
    view[..., rows, cols] = src
    return out


def _transpose_ref(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1).copy() if a.ndim else a.copy()


def _t_ref(a):
    return a.T.copy()


def _squeeze_ref(a):
    return np.squeeze(a).copy()


def _narrow_ref(a, dim, start, length):
    d = dim % a.ndim
    start = start % a.shape[d] if start < 0 else start
    return a[(slice(None),) * d + (slice(start, start + length),)].copy()


def _split_ref(a, split_size, dim=0):
    d = dim % a.ndim
    n = a.shape[d]
    if n == 0:
        return [a.copy()]
    return [np.take(a, range(i, min(i + split_size, n)), axis=d) for i in range(0, n,
                                                                               split_size)]


def _chunk_ref(a, chunks, dim=0):
    d = dim % a.ndim
    n = a.shape[d]
    per = -(-n // chunks)
    if per == 0:
        return [a.copy() for _ in range(chunks)]
    return _split_ref(a, per, d)


def _unbind_ref(a, dim=0):
    d = dim % a.ndim
    return [np.take(a, i, axis=d) for i in range(a.shape[d])]


def _movedim_ref(a, source, destination):
    if a.ndim == 0:             # PyTorch accepts dim 0 (or -1) of a 0-dim tensor
        return a.copy()
    return np.moveaxis(a, source, destination).copy()


def _expand_as_ref(a, other):
    return np.broadcast_to(a, other.shape).copy()


def _view_as_ref(a, other):
    return np.reshape(a, other.shape).copy()


def _flatten_ref(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1:]) if a.size else \
        a.reshape(a.shape[:s] + (int(np.prod(a.shape[s:e + 1])),) + a.shape[e + 1:])


def _unflatten_ref(a, dim, sizes):
    d = dim % a.ndim
    sizes = list(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = a.shape[d] // known
    return a.reshape(a.shape[:d] + tuple(sizes) + a.shape[d + 1:]).copy()


# --------------------------------------------------------------------------- samples

def _view_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [4, -1])
    yield SampleInput(mk((), dtype, device), [1, 1])
    yield SampleInput(mk((0, 3), dtype, device), [3, -1, 2])
    yield SampleInput(mk((1,), dtype, device), [])
    # a non-contiguous input whose strides still allow the view
    yield SampleInput(_t((4, 6), dtype, device)[:, 1], [2, 2])


def _unsafe_view_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [6, -1])
    yield SampleInput(mk((), dtype, device), [])
    yield SampleInput(mk((0, 4), dtype, device), [2, 0, 2])


def _permute_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [2, 0, -2])
    yield SampleInput(mk((), dtype, device), [])
    yield SampleInput(mk((0, 3), dtype, device), [1, 0])
    yield SampleInput(_t((3, 4, 5), dtype, device), [1, 2, 0])


def _expand_samples(info, device, dtype):
    yield SampleInput(mk((3, 1), dtype, device), [2, 3, 4])
    yield SampleInput(mk((3, 1), dtype, device), [-1, 0])
    yield SampleInput(mk((), dtype, device), [2, 2])
    yield SampleInput(mk((1, 4), dtype, device, noncontiguous=True), [3, -1])
    yield SampleInput(mk((2, 3), dtype, device), [2, 3])


def _squeeze_dim_samples(info, device, dtype):
    yield SampleInput(mk((2, 1, 3), dtype, device), -2)
    yield SampleInput(mk((2, 3), dtype, device), 0)          # size 2: unchanged
    yield SampleInput(mk((), dtype, device), -1)
    yield SampleInput(mk((1, 0), dtype, device), 0)


def _squeeze_dims_samples(info, device, dtype):
    yield SampleInput(mk((1, 2, 1), dtype, device), [0, -1, 1])
    yield SampleInput(mk((), dtype, device), [0])
    yield SampleInput(mk((3, 1), dtype, device), [])
    yield SampleInput(_t((1, 4), dtype, device), [0])


def _unsqueeze_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), -1)
    yield SampleInput(mk((), dtype, device), 0)
    yield SampleInput(mk((0, 3), dtype, device), 1)
    yield SampleInput(_t((3, 4), dtype, device), -2)


def _select_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 1, -1)
    yield SampleInput(mk((3,), dtype, device), 0, 2)
    yield SampleInput(mk((0, 3), dtype, device), 1, 0)
    yield SampleInput(_t((3, 4), dtype, device), -1, 1)


def _slice_samples(info, device, dtype):
    x = mk((4, 5, 6), dtype, device)
    yield SampleInput(x, 2, -3, 100, 2)
    yield SampleInput(x, 0, 5, 1)                  # start past the end: empty
    yield SampleInput(x, 1, -100, -1)
    yield SampleInput(x, -1, None, None, 4)
    yield SampleInput(x, 0, 3, 1)                  # end before start: empty
    yield SampleInput(mk((0, 3), dtype, device), 0, 1, 2)
    yield SampleInput(_t((4, 6), dtype, device), 1, 1, None, 3)


def _diagonal_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, 1, -1, 1)
    yield SampleInput(x, -1, 1, 2)
    yield SampleInput(x, 9, 1, 2)                  # past the corner: empty
    yield SampleInput(mk((3, 3), dtype, device))
    yield SampleInput(mk((0, 3), dtype, device), -1)
    yield SampleInput(_t((3, 4, 5), dtype, device), 0, 0, 2)


def _as_strided_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, [3, 3], [1, 2], 1)
    yield SampleInput(x, [2, 2], [0, 23])          # a stride of 0 repeats elements
    yield SampleInput(x, [], [], 5)
    yield SampleInput(x, [0, 4], [4, 1])
    yield SampleInput(mk((5,), dtype, device), [2, 3], [1, 1])


def _unary_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device))
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(mk((0, 3), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device))


def _clone_samples(info, device, dtype):
    yield from _unary_samples(info, device, dtype)
    yield SampleInput(mk((2, 3, 2, 2), dtype, device), memory_format="channels_last")
    yield SampleInput(mk((2, 3), dtype, device, noncontiguous=True),
                      memory_format="contiguous_format")


def _split_with_sizes_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [1, 0, 3], -1)
    yield SampleInput(mk((0, 5), dtype, device), [0], 0)
    yield SampleInput(_t((4, 3), dtype, device), [2, 2])


def _unfold_samples(info, device, dtype):
    x = mk((2, 3, 5), dtype, device)
    yield SampleInput(x, 2, 2, 1)
    yield SampleInput(x, -1, 3, 2)
    yield SampleInput(x, 1, 3, 3)
    yield SampleInput(x, -1, 0, 2)                 # empty windows
    yield SampleInput(mk((), dtype, device), 0, 1, 1)
    yield SampleInput(_t((4, 6), dtype, device), 0, 2, 2)


def _view_as_real_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device))
    yield SampleInput(mk((1,), dtype, device).reshape(()))
    yield SampleInput(mk((0, 2), dtype, device))


def _view_as_complex_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 2), dtype, device))
    yield SampleInput(mk((2,), dtype, device))
    yield SampleInput(mk((0, 2), dtype, device))


def _select_scatter_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, mk((2, 4), dtype, device), 1, -1)
    yield SampleInput(mk((3,), dtype, device), mk((), dtype, device), 0, 0)
    yield SampleInput(_t((3, 4), dtype, device), mk((4,), dtype, device), 0, 2)


def _slice_scatter_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, mk((2, 3, 2), dtype, device), 2, 1, None, 2)
    yield SampleInput(x, mk((2, 3, 0), dtype, device), 2, 3, 1)
    yield SampleInput(_t((3, 4), dtype, device), mk((3, 4), dtype, device))
    yield SampleInput(x, mk((1, 3, 4), dtype, device), 0, -1, 100)
    yield SampleInput(mk((7,), dtype, device), mk((2,), dtype, device), 0, 1, 6, 3)


def _diagonal_scatter_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(x, mk((2, 2), dtype, device), 1, -1, 1)
    yield SampleInput(x, mk((4, 1), dtype, device), -1, 0, 1)
    yield SampleInput(mk((3, 3), dtype, device), mk((3,), dtype, device))
    yield SampleInput(mk((3, 4), dtype, device), mk((0,), dtype, device), 7)
    yield SampleInput(_t((3, 4), dtype, device), mk((2,), dtype, device), 2)


def _transpose_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 0, -1)
    yield SampleInput(mk((), dtype, device), 0, -1)
    yield SampleInput(_t((3, 4), dtype, device), 1, 0)


def _t_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device))
    yield SampleInput(mk((3,), dtype, device))
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(_t((0, 4), dtype, device))


def _squeeze_samples(info, device, dtype):
    yield SampleInput(mk((1, 2, 1), dtype, device))
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(mk((1, 0), dtype, device))


def _narrow_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 2, -3, 2)
    yield SampleInput(mk((5,), dtype, device), 0, 5, 0)
    yield SampleInput(_t((3, 4), dtype, device), 0, 1, 2)


def _split_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 3, -1)
    yield SampleInput(mk((5,), dtype, device), 2)
    yield SampleInput(mk((0, 3), dtype, device), 2)
    yield SampleInput(_t((3, 4), dtype, device), 1, 1)


def _chunk_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 2, 1)
    yield SampleInput(mk((6,), dtype, device), 4)          # 3 chunks of 2
    yield SampleInput(mk((0, 3), dtype, device), 3)
    yield SampleInput(_t((3, 5), dtype, device), 3, -1)


def _unbind_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 1)
    yield SampleInput(mk((3,), dtype, device))
    yield SampleInput(mk((0, 3), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), -1)


def _movedim_intlist_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [0, 1], [2, 0])
    yield SampleInput(mk((2, 3, 4), dtype, device), [], [])
    yield SampleInput(_t((3, 4), dtype, device), [-1], [0])


def _movedim_int_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), -1, 0)
    yield SampleInput(mk((), dtype, device), 0, 0)
    yield SampleInput(_t((3, 4), dtype, device), 0, 1)


def _expand_as_samples(info, device, dtype):
    yield SampleInput(mk((3, 1), dtype, device), mk((2, 3, 4), D.float32, device))
    yield SampleInput(mk((), dtype, device), mk((0, 2), dtype, device))


def _view_as_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), mk((4, 6), D.int64, device))
    yield SampleInput(mk((1,), dtype, device), mk((), dtype, device))


def _reshape_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), [4, -1])
    yield SampleInput(_t((3, 4), dtype, device), [-1])               # needs a copy
    yield SampleInput(mk((), dtype, device), [1, 1])
    yield SampleInput(mk((0, 3), dtype, device), [3, 0])


def _reshape_as_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), mk((4, 6), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), mk((12,), dtype, device))


def _contiguous_samples(info, device, dtype):
    # only non-contiguous inputs: a contiguous one is returned as it is (nothing runs)
    yield SampleInput(_t((3, 4), dtype, device))
    yield SampleInput(mk((2, 3), dtype, device, noncontiguous=True))
    yield SampleInput(mk((2, 2, 3, 3), dtype, device), memory_format="channels_last")


def _flatten_samples(info, device, dtype):
    yield SampleInput(mk((2, 3, 4), dtype, device), 1)
    yield SampleInput(mk((2, 3, 4), dtype, device), 0, -2)
    yield SampleInput(mk((), dtype, device))
    yield SampleInput(mk((0, 3, 2), dtype, device), 1)
    yield SampleInput(_t((3, 4), dtype, device))


def _unflatten_samples(info, device, dtype):
    yield SampleInput(mk((2, 12), dtype, device), -1, [2, -1, 3])
    yield SampleInput(mk((6,), dtype, device), 0, [6])
    yield SampleInput(_t((4, 3), dtype, device), 0, [2, 2])


# --------------------------------------------------------------------------- error inputs

def _errors(*cases):
    """Error inputs from ``(make_sample(device), type, regex)`` rows."""
    def fn(info, device):
        for make, exc, match in cases:
            yield ErrorInput(make(device), exc, match)
    return fn


def _f(shape, device, dtype=D.float32):
    return mk(shape, dtype, device)


def _view_errors(info, device):
    # strides are not data, but meta tensors do not track them: eager only
    yield ErrorInput(SampleInput(_t((3, 4), D.float32, device), [-1]), RuntimeError,
                     "view size is not compatible", meta=False)
    yield from _view_errors_meta(info, device)


_view_errors_meta = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [4, -1]), RuntimeError, "is invalid for input"),
    (lambda d: SampleInput(_f((2, 3), d), [-1, -1]), RuntimeError,
     "only one dimension can be inferred"))
_PERMUTE_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [0, 0]), RuntimeError, "duplicate dims"),
    (lambda d: SampleInput(_f((2, 3), d), [0]), RuntimeError, "number of dimensions"),
    (lambda d: SampleInput(_f((2, 3), d), [0, 2]), IndexError, "Dimension out of range"))
_EXPAND_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), [3, 3]), RuntimeError, "must match the existing"),
    (lambda d: SampleInput(_f((2, 3), d), [3]), RuntimeError, "number of sizes provided"),
    (lambda d: SampleInput(_f((3,), d), [-1, 3]), RuntimeError, "isn't allowed"))
_SELECT_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), 1, 3), IndexError, "out of range"),
    (lambda d: SampleInput(_f((), d), 0, 0), IndexError, "0-dim"),
    (lambda d: SampleInput(_f((2, 3), d), 2, 0), IndexError, "Dimension out of range"))
_SLICE_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), 0, 0, 2, 0), RuntimeError,
     "slice step must be positive"),
    (lambda d: SampleInput(_f((), d), 0), IndexError, "0-dim"))
_DIAGONAL_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d), 0, 1, -1), RuntimeError,
     "diagonal dimensions cannot be identical"),
    (lambda d: SampleInput(_f((3,), d)), IndexError, "Dimension out of range"))
_AS_STRIDED_ERRORS = _errors(
    (lambda d: SampleInput(_f((4,), d), [2], [-1]), RuntimeError, "Negative strides"),
    (lambda d: SampleInput(_f((4,), d), [2, 2], [1]), RuntimeError, "mismatch in length"))
_SPLIT_ERRORS = _errors(
    (lambda d: SampleInput(_f((4,), d), [1, 2]), RuntimeError, "sum exactly to 4"),
    (lambda d: SampleInput(_f((4,), d), [5, -1]), RuntimeError, "non-negative"))
_UNFOLD_ERRORS = _errors(
    (lambda d: SampleInput(_f((4,), d), 0, 5, 1), RuntimeError, "maximum size"),
    (lambda d: SampleInput(_f((4,), d), 0, 2, 0), RuntimeError, "step is 0"))
_SCATTER_VIEW_ERRORS = {
    "select": _errors((lambda d: SampleInput(_f((2, 3), d), _f((3,), d), 1, 0), RuntimeError,
                       "expected src to have a size equal to the slice of self")),
    "slice": _errors((lambda d: SampleInput(_f((2, 3), d), _f((2, 2), d), 1), RuntimeError,
                      "expected src to have a size equal to the slice of self")),
    "diagonal": _errors((lambda d: SampleInput(_f((2, 3), d), _f((3,), d)), RuntimeError,
                         "expected src to have a size equal to the slice of self")),
}
_VIEW_AS_COMPLEX_ERRORS = _errors(
    (lambda d: SampleInput(_f((2, 3), d)), RuntimeError, "last dimension of size 2"),
    (lambda d: SampleInput(_f((2, 2), d, D.int64)), RuntimeError,
     "only supported for float and double"))
_VIEW_AS_REAL_ERRORS = _errors(
    (lambda d: SampleInput(_f((2,), d)), RuntimeError, "only supported for complex"))


# --------------------------------------------------------------------------- entries

def _entries():
    A = ALL_DTYPES
    E = OpInfo
    return [
        E(S.view, _view_ref, A, _view_samples, error_inputs=_view_errors),
        E(S._unsafe_view, _view_ref, A, _unsafe_view_samples),
        E(S.permute, _permute_ref, A, _permute_samples, error_inputs=_PERMUTE_ERRORS),
        E(S.expand, _expand_ref, A, _expand_samples, error_inputs=_EXPAND_ERRORS),
        E(S.squeeze_dim, _squeeze_dims_ref, A, _squeeze_dim_samples),
        E(S.squeeze_dims_op, _squeeze_dims_ref, A, _squeeze_dims_samples),
        E(S.unsqueeze, _unsqueeze_ref, A, _unsqueeze_samples),
        E(S.select_int, _select_ref, A, _select_samples, error_inputs=_SELECT_ERRORS),
        E(S.slice_Tensor, _slice_ref, A, _slice_samples, error_inputs=_SLICE_ERRORS),
        E(S.diagonal, _diagonal_ref, A, _diagonal_samples, error_inputs=_DIAGONAL_ERRORS),
        E(S.as_strided, _as_strided_ref, A, _as_strided_samples,
          error_inputs=_AS_STRIDED_ERRORS),
        E(S.alias, _copy_ref, A, _unary_samples),
        # detach_ only clears autograd state (no write, no version bump): no derived entry
        E(S.detach, _copy_ref, A, _unary_samples, variants=False),
        E(S.clone, _copy_ref, A, _clone_samples),
        E(S.split_with_sizes, _split_with_sizes_ref, A, _split_with_sizes_samples,
          error_inputs=_SPLIT_ERRORS),
        E(S.unfold, _unfold_ref, A, _unfold_samples, error_inputs=_UNFOLD_ERRORS),
        E(S.view_as_real, _view_as_real_ref, COMPLEX, _view_as_real_samples,
          error_inputs=_VIEW_AS_REAL_ERRORS),
        E(S.view_as_complex, _view_as_complex_ref, FLOAT_PAIRS, _view_as_complex_samples,
          error_inputs=_VIEW_AS_COMPLEX_ERRORS),
        E(S.select_scatter, _select_scatter_ref, A, _select_scatter_samples,
          error_inputs=_SCATTER_VIEW_ERRORS["select"]),
        E(S.slice_scatter, _slice_scatter_ref, A, _slice_scatter_samples,
          error_inputs=_SCATTER_VIEW_ERRORS["slice"]),
        E(S.diagonal_scatter, _diagonal_scatter_ref, A, _diagonal_scatter_samples,
          error_inputs=_SCATTER_VIEW_ERRORS["diagonal"]),
        E(S.transpose_int, _transpose_ref, A, _transpose_samples),
        E(S.t, _t_ref, A, _t_samples),
        E(S.swapaxes, _transpose_ref, A, _transpose_samples),
        E(S.swapdims, _transpose_ref, A, _transpose_samples),
        E(S.squeeze, _squeeze_ref, A, _squeeze_samples),
        E(S.narrow, _narrow_ref, A, _narrow_samples),
        E(S.split_Tensor, _split_ref, A, _split_samples),
        E(S.chunk, _chunk_ref, A, _chunk_samples),
        E(S.unbind_int, _unbind_ref, A, _unbind_samples),
        E(S.movedim_intlist, _movedim_ref, A, _movedim_intlist_samples),
        E(S.movedim_int, _movedim_ref, A, _movedim_int_samples),
        E(S.expand_as, _expand_as_ref, A, _expand_as_samples),
        E(S.view_as, _view_as_ref, A, _view_as_samples),
        E(S.reshape, _view_ref, A, _reshape_samples),
        E(S.reshape_as, _view_as_ref, A, _reshape_as_samples),
        E(S.contiguous, _copy_ref, A, _contiguous_samples),
        E(S.flatten_using_ints, _flatten_ref, A, _flatten_samples),
        E(S.unflatten_int, _unflatten_ref, A, _unflatten_samples),
    ]


register(*_entries())
