"""OpInfo entries of fnx/ir/aten/combine.py, against NumPy/SciPy: ``np.diff`` (bool:
not-equal, as PyTorch's xor), ``np.nan_to_num`` (defaults from the dtype's finfo),
``np.kron``, ``np.rot90``, ``np.array_split`` and ``np.hsplit``/``vsplit``/``dsplit``,
``np.meshgrid``, ``itertools.product``, ``scipy.linalg.block_diag`` and
``np.broadcast_arrays``.  Results are promoted as PyTorch promotes (``promote``)."""
from __future__ import annotations

import itertools
import re

import ml_dtypes
import numpy as np
import scipy.integrate
import scipy.linalg

import fnx

from ...core import dtype as D
from ...ir.aten import combine as C
from ..database import ALL_DTYPES, FLOATS, INTS, ErrorInput, OpInfo, SampleInput, register
from ..database import make_tensor as mk
from ..database import make_transposed as _t
from ..reference_dtypes import promote

COMPLEX = (D.complex64, D.complex128)
NUMERIC = FLOATS + INTS + COMPLEX
TOLS = {D.float16: (1e-2, 1e-2), D.bfloat16: (5e-2, 5e-2), D.float32: (1e-5, 1e-4)}


def _other(dtype):
    return D.int64 if dtype.is_floating_point else D.float32


def _promoted(arrays):
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = promote(dtype, a.dtype)
    return [a.astype(dtype) for a in arrays]


def _copies(arrays):
    return [np.array(a) for a in arrays]


# --------------------------------------------------------------------------- diff

def _diff_ref(a, n=1, dim=-1, prepend=None, append=None):
    parts = [p for p in (prepend, a, append) if p is not None]
    parts = _promoted(parts)
    x = np.concatenate(parts, axis=dim) if len(parts) > 1 else parts[0]
    return np.diff(x, n=n, axis=dim)


def _diff_samples(info, device, dtype):
    yield SampleInput(mk((5,), dtype, device))
    yield SampleInput(mk((3, 4), dtype, device), 2, 0)
    yield SampleInput(_t((3, 4), dtype, device), 1, -1)
    yield SampleInput(mk((2, 3), dtype, device), 1, 1, mk((2, 2), dtype, device),
                      mk((2, 1), dtype, device))
    yield SampleInput(mk((2, 3), dtype, device), 0)
    yield SampleInput(mk((4,), dtype, device), 7)
    yield SampleInput(mk((0, 3), dtype, device), 1, 0)
    yield SampleInput(mk((3,), dtype, device), 1, 0, mk((1,), _other(dtype), device))


def _diff_errors(info, device):
    x = mk((3,), D.float32, device)
    yield ErrorInput(SampleInput(mk((), D.float32, device)), RuntimeError,
                     "diff expects input to be at least one-dimensional")
    yield ErrorInput(SampleInput(x, -1), RuntimeError, "order must be non-negative but got -1")
    yield ErrorInput(SampleInput(x, 1, 0, mk((1, 1), D.float32, device)), RuntimeError,
                     "diff expects prepend or append to be the same dimension as input")
    yield ErrorInput(SampleInput(mk((3, 2), D.float32, device), 1, 0, None,
                                 mk((1, 3), D.float32, device)), RuntimeError,
                     re.escape("input.size(1) = 2, but got tensor.size(1) = 3"))


# --------------------------------------------------------------------------- nan_to_num

def _nan_to_num_ref(a, nan=None, posinf=None, neginf=None):
    if a.dtype.kind not in "fcV":
        return a.copy()
    fi = ml_dtypes.finfo(a.dtype)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    posinf = float(fi.max) if posinf is None else posinf
    neginf = float(fi.min) if neginf is None else neginf
    r = np.nan_to_num(a.astype(wide), nan=0.0 if nan is None else nan, posinf=posinf,
                      neginf=neginf)
    with np.errstate(over="ignore"):
        return r.astype(a.dtype)


def _special(shape, dtype, device):
    x = mk(shape, dtype, device)
    if not (dtype.is_floating_point or dtype.is_complex) or not x.numel():
        return x
    a = x.cpu().numpy().copy()
    flat = a.reshape(-1)
    flat[::4] = np.nan
    flat[1::4] = np.inf
    flat[2::4] = -np.inf
    if dtype.is_complex:
        flat[3::4] = complex(-np.inf, np.nan)
    return fnx.tensor(a, dtype=dtype, device=device)


def _nan_to_num_samples(info, device, dtype):
    yield SampleInput(_special((3, 4), dtype, device))
    yield SampleInput(_special((2, 5), dtype, device), 1.5, 100.0, -100.0)
    yield SampleInput(_special((7,), dtype, device), None, None, -3.0)
    yield SampleInput(_special((), dtype, device), -1.0)
    yield SampleInput(mk((0, 2), dtype, device))
    yield SampleInput(_t((3, 4), dtype, device), 2.0)


# --------------------------------------------------------------------------- kron, rot90

def _kron_ref(a, b):
    a, b = _promoted([a, b])
    return np.kron(a, b)


def _kron_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), mk((3, 2), dtype, device))
    yield SampleInput(mk((2,), dtype, device), mk((2, 3, 2), dtype, device))
    yield SampleInput(mk((), dtype, device), mk((3,), dtype, device))
    yield SampleInput(_t((2, 3), dtype, device), mk((0, 2), dtype, device))
    yield SampleInput(mk((2, 2), dtype, device), mk((2,), _other(dtype), device))


def _rot90_ref(a, k=1, dims=(0, 1)):
    return np.rot90(a, k, axes=tuple(dims)).copy()


def _rot90_samples(info, device, dtype):
    x = mk((2, 3, 4), dtype, device)
    yield SampleInput(mk((3, 4), dtype, device))
    for k in (0, 2, 3, -1, 5):
        yield SampleInput(x, k, [0, 2])
    yield SampleInput(x, 1, [-1, 1])
    yield SampleInput(_t((3, 4), dtype, device), 1, [1, 0])
    yield SampleInput(mk((0, 2), dtype, device), 1)


def _rot90_errors(info, device):
    x = mk((2, 2), D.float32, device)
    yield ErrorInput(SampleInput(x, 1, [0]), RuntimeError,
                     "expected total rotation dims == 2, but got dims = 1")
    yield ErrorInput(SampleInput(mk((2,), D.float32, device), 1, [0, 1]), RuntimeError,
                     "expected total dims >= 2, but got total dims = 1")
    yield ErrorInput(SampleInput(x, 1, [0, -2]), RuntimeError,
                     "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2")
    yield ErrorInput(SampleInput(x, 1, [0, 5]), IndexError, "Dimension out of range")


# --------------------------------------------------------------------------- splits

def _array_split_ref(a, arg, dim=0):
    return _copies(np.array_split(a, arg, axis=dim))


def _sections_samples(info, device, dtype):
    yield SampleInput(mk((7,), dtype, device), 3)
    yield SampleInput(mk((3, 4), dtype, device), 5, 1)
    yield SampleInput(_t((4, 6), dtype, device), 2, -1)
    yield SampleInput(mk((0, 2), dtype, device), 2)


def _indices_samples(info, device, dtype):
    yield SampleInput(mk((7,), dtype, device), [1, 5])
    yield SampleInput(mk((3, 6), dtype, device), [2, -1, 8], 1)
    yield SampleInput(mk((4, 2), dtype, device), [3, 1])
    yield SampleInput(_t((4, 3), dtype, device), [], 0)


def _split_errors(info, device):
    yield ErrorInput(SampleInput(mk((), D.float32, device), 2), RuntimeError,
                     "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                     "with 0 dims")
    yield ErrorInput(SampleInput(mk((3,), D.float32, device), 0), RuntimeError,
                     "number of sections must be larger than 0, got 0")


def _xsplit_entries(name, np_fn, int_op, array_op, shape):
    def ref(a, arg):
        return _copies(np_fn(a, arg))

    def int_samples(info, device, dtype):
        yield SampleInput(mk(shape, dtype, device), 2)
        yield SampleInput(mk(shape, dtype, device), 1)

    def array_samples(info, device, dtype):
        yield SampleInput(mk(shape, dtype, device), [1, 3])
        yield SampleInput(_t(shape, dtype, device), [2])

    low = len(shape) if name != "hsplit" else 1
    dim = {"hsplit": 1, "vsplit": 0, "dsplit": 2}[name]
    bad_shape = shape[:dim] + (3,) + shape[dim + 1:]

    def errors(info, device):
        few = "1 dimension" if low == 1 else f"{low} dimension"
        yield ErrorInput(SampleInput(mk((2,) * (low - 1), D.float32, device), 2), RuntimeError,
                         re.escape(f"torch.{name} requires a tensor with at least {few}, but "
                                   f"got a tensor with {low - 1} dimensions!"))
        yield ErrorInput(SampleInput(mk(bad_shape, D.float32, device), 2), RuntimeError,
                         re.escape(f"torch.{name} attempted to split along dimension {dim}, "
                                   f"but the size of the dimension 3 is not divisible by the "
                                   f"split_size 2!"))

    return [OpInfo(int_op, ref, ALL_DTYPES + COMPLEX, int_samples, error_inputs=errors),
            OpInfo(array_op, ref, ALL_DTYPES + COMPLEX, array_samples)]


# --------------------------------------------------------------------------- grids

def _meshgrid_ref(tensors, *, indexing="ij"):
    return _copies(np.meshgrid(*tensors, indexing=indexing))


def _meshgrid_samples(info, device, dtype):
    yield SampleInput([mk((2,), dtype, device), mk((3,), dtype, device)])
    yield SampleInput([mk((2,), dtype, device), mk((), dtype, device), mk((4,), dtype, device)])
    yield SampleInput([mk((3,), dtype, device)])
    yield SampleInput([mk((0,), dtype, device), mk((2,), dtype, device)])


def _meshgrid_indexing_samples(info, device, dtype):
    for indexing in ("ij", "xy"):
        yield SampleInput([mk((2,), dtype, device), mk((3,), dtype, device)], indexing=indexing)
        yield SampleInput([mk((2,), dtype, device), mk((3,), dtype, device),
                           mk((4,), dtype, device)], indexing=indexing)
    yield SampleInput([mk((3,), dtype, device)], indexing="xy")


def _meshgrid_errors(info, device):
    v = mk((2,), D.float32, device)
    yield ErrorInput(SampleInput([v, mk((2, 2), D.float32, device)], indexing="ij"),
                     RuntimeError, "Expected 0D or 1D tensor in the tensor list")
    yield ErrorInput(SampleInput([v, mk((2,), D.int64, device)], indexing="ij"), RuntimeError,
                     "meshgrid expects all tensors to have the same dtype")
    yield ErrorInput(SampleInput([v], indexing="ji"), RuntimeError,
                     'indexing must be one of "xy" or "ij", but received: ji')


def _cartesian_prod_ref(tensors):
    if len(tensors) == 1:
        return tensors[0].copy()
    rows = list(itertools.product(*[t.tolist() for t in tensors]))
    return np.array(rows, dtype=tensors[0].dtype).reshape(len(rows), len(tensors))


def _cartesian_prod_samples(info, device, dtype):
    yield SampleInput([mk((2,), dtype, device), mk((3,), dtype, device)])
    yield SampleInput([mk((2,), dtype, device), mk((1,), dtype, device), mk((3,), dtype, device)])
    yield SampleInput([mk((4,), dtype, device)])
    yield SampleInput([mk((0,), dtype, device), mk((2,), dtype, device)])


def _cartesian_prod_errors(info, device):
    yield ErrorInput(SampleInput([mk((2, 2), D.float32, device)]), RuntimeError,
                     re.escape("Expect a 1D vector, but got shape [2, 2]"))


def _block_diag_ref(tensors):
    mats = _promoted(tensors)
    return scipy.linalg.block_diag(*mats).astype(mats[0].dtype)


def _block_diag_samples(info, device, dtype):
    yield SampleInput([mk((2, 3), dtype, device), mk((1, 2), dtype, device)])
    yield SampleInput([mk((), dtype, device), mk((3,), dtype, device), _t((2, 2), dtype, device)])
    yield SampleInput([mk((0, 2), dtype, device), mk((2, 0), dtype, device)])
    yield SampleInput([mk((2, 2), dtype, device), mk((1, 1), _other(dtype), device)])


def _block_diag_errors(info, device):
    yield ErrorInput(SampleInput([mk((2,), D.float32, device), mk((1, 2, 2), D.float32, device)]),
                     RuntimeError, "Input tensors must have 2 or fewer dimensions. Input 1 has 3 "
                                   "dimensions")


def _broadcast_tensors_ref(tensors):
    return _copies(np.broadcast_arrays(*tensors))


def _broadcast_tensors_samples(info, device, dtype):
    yield SampleInput([mk((2, 1), dtype, device), mk((3,), dtype, device)])
    yield SampleInput([mk((), dtype, device), _t((2, 3), dtype, device),
                       mk((1, 1, 3), _other(dtype), device)])
    yield SampleInput([mk((0, 1), dtype, device), mk((4,), dtype, device)])


def _broadcast_tensors_errors(info, device):
    yield ErrorInput(SampleInput([mk((2, 3), D.float32, device), mk((4,), D.float32, device)]),
                     RuntimeError, re.escape("The size of tensor a (3) must match the size of "
                                             "tensor b (4) at non-singleton dimension 1"))


# --------------------------------------------------------------------------- repeat_interleave

def _repeat_interleave_ref(a, repeats, dim=None, *, output_size=None):
    r = repeats if np.ndim(repeats) == 0 else np.asarray(repeats).reshape(-1)
    if np.ndim(r) == 1 and r.size == 1:
        r = r[0]
    return np.repeat(a.reshape(-1) if dim is None else a, r, axis=0 if dim is None else dim)


def _repeats(values, device):
    return fnx.tensor(values, dtype=D.int64, device=device)


def _ri_int_samples(info, device, dtype):
    yield SampleInput(mk((2, 3), dtype, device), 2)
    yield SampleInput(mk((2, 3), dtype, device), 3, 1)
    yield SampleInput(_t((3, 2), dtype, device), 2, -2)
    yield SampleInput(mk((), dtype, device), 3)
    yield SampleInput(mk((2, 0), dtype, device), 0, 0)


def _ri_tensor_samples(info, device, dtype):
    # with output_size the length is static, so every check (tracing too) applies
    yield SampleInput(mk((3, 2), dtype, device), _repeats([1, 0, 2], device), 0, output_size=3)
    yield SampleInput(mk((2, 3), dtype, device), _repeats([2, 1, 3], device), 1, output_size=6)
    yield SampleInput(mk((2, 2), dtype, device), _repeats([2, 0, 1, 1], device), output_size=4)
    yield SampleInput(mk((3,), dtype, device), _repeats(2, device), 0, output_size=6)


def _ri_errors(info, device):
    x = mk((2,), D.float32, device)
    yield ErrorInput(SampleInput(x, _repeats([[1]], device), 0, output_size=1), RuntimeError,
                     "repeats must be 0-dim or 1-dim tensor")
    yield ErrorInput(SampleInput(x, _repeats([1, 1, 1], device), 0, output_size=3),
                     RuntimeError, re.escape("repeats must have the same size as input along "
                                             "dim, but got repeats.size(0) = 3 and "
                                             "input.size(0) = 2"))
    yield ErrorInput(SampleInput(x, mk((2,), D.float32, device), 0, output_size=3),
                     NotImplementedError, "\"repeat_interleave\" not implemented for 'Float'")


def _ri_int_errors(info, device):
    yield ErrorInput(SampleInput(mk((2,), D.float32, device), -1), RuntimeError,
                     "Repeats must be non-negative")
    yield ErrorInput(SampleInput(mk((2,), D.float32, device), 2, output_size=5), RuntimeError,
                     "repeat_interleave: Invalid output_size, expected 4 but got 5")


def _ri_counts_ref(repeats, *, output_size=None):
    return np.repeat(np.arange(repeats.size), repeats.reshape(-1))


def _ri_counts_errors(info, device):
    yield ErrorInput(SampleInput(_repeats(3, device), output_size=3), RuntimeError,
                     "repeat_interleave only accept 1D vector as repeat")


def _ri_counts_samples(info, device, dtype):
    yield SampleInput(_repeats([2, 0, 1, 3], device), output_size=6)
    yield SampleInput(_repeats([0, 0], device), output_size=0)
    yield SampleInput(fnx.tensor([1, 2], dtype=D.int32, device=device), output_size=3)


# --------------------------------------------------------------------------- triangles, combos

def _tri_indices_ref(fn):
    def ref(row, col, offset=0, *, dtype=None, **_):
        out = np.stack(fn(row, offset, col)) if row and col else np.empty((2, 0), np.int64)
        return out.astype(np.int64 if dtype is None else dtype.numpy)
    return ref


def _tri_indices_samples(info, device, dtype):
    for row, col, offset in ((3, 3, 0), (4, 3, -1), (3, 5, 2), (2, 4, 10), (0, 3, 0),
                             (3, 4, -5)):
        yield SampleInput(row, col, offset, dtype=dtype, device=device)


def _tri_indices_errors(name):
    def errors(info, device):
        yield ErrorInput(SampleInput(-1, 3, device=device), RuntimeError,
                         "row must be non-negative, got-1")
        yield ErrorInput(SampleInput(2, 3, dtype=D.float32, device=device), NotImplementedError,
                         f'"{name}" not implemented for \'Float\'')
    return errors


def _combinations_ref(a, r=2, with_replacement=False):
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    if r == 0:
        return np.empty((0,), a.dtype)
    rows = [list(c) for c in pick(a.tolist(), r)]
    return np.array(rows, dtype=a.dtype).reshape(len(rows), r)


def _combinations_samples(info, device, dtype):
    x = mk((4,), dtype, device)
    yield SampleInput(x)
    yield SampleInput(x, 3)
    yield SampleInput(x, 2, True)
    yield SampleInput(mk((3,), dtype, device), 1)
    yield SampleInput(mk((3,), dtype, device), 0)
    yield SampleInput(mk((2,), dtype, device), 3)
    yield SampleInput(mk((2,), dtype, device), 3, True)


def _combinations_errors(info, device):
    yield ErrorInput(SampleInput(mk((2, 2), D.float32, device)), RuntimeError,
                     re.escape("Expect a 1D vector, but got shape [2, 2]"))
    yield ErrorInput(SampleInput(mk((3,), D.float32, device), -1), RuntimeError,
                     "Expect a non-negative number, but got -1")


# --------------------------------------------------------------------------- trapezoid

def _float(a):
    return a if a.dtype.kind in "fcV" else a.astype(np.float32)


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _trapezoid_x_ref(y, x, *, dim=-1):
    out = promote(_float(y).dtype, x.dtype)
    return np.asarray(np.trapezoid(_wide(y), x.astype(np.float64), axis=dim)
                      ).astype(out)


def _trapezoid_dx_ref(y, *, dx=1, dim=-1):
    y = _float(y)
    return np.asarray(np.trapezoid(_wide(y), dx=dx, axis=dim)).astype(y.dtype)


def _cumulative(y, dim, **kw):
    if y.shape[dim] == 0:                # SciPy wants a point; PyTorch gives an empty result
        return np.empty(y.shape, np.float64)
    return scipy.integrate.cumulative_trapezoid(_wide(y), axis=dim, **kw)


def _cumtrapz_x_ref(y, x, *, dim=-1):
    out = promote(_float(y).dtype, x.dtype)
    return _cumulative(y, dim, x=x.astype(np.float64)).astype(out)


def _cumtrapz_dx_ref(y, *, dx=1, dim=-1):
    return _cumulative(y, dim, dx=dx).astype(_float(y).dtype)


def _points(n, dtype, device):
    return fnx.tensor(np.cumsum(np.linspace(0.5, 1.5, n)), dtype=dtype, device=device)


def _trapezoid_x_samples(info, device, dtype):
    yield SampleInput(mk((5,), dtype, device), _points(5, D.float32, device))
    yield SampleInput(mk((3, 4), dtype, device), _points(3, D.float64, device), dim=0)
    yield SampleInput(_t((3, 4), dtype, device), mk((3, 4), D.float32, device), dim=-1)
    yield SampleInput(mk((2, 1), dtype, device), _points(1, D.float32, device))


def _trapezoid_dx_samples(info, device, dtype):
    yield SampleInput(mk((5,), dtype, device))
    yield SampleInput(mk((3, 4), dtype, device), dx=0.5, dim=0)
    yield SampleInput(_t((3, 4), dtype, device), dx=2)
    yield SampleInput(mk((2, 0), dtype, device), dim=1)


def _trapezoid_errors(info, device):
    yield ErrorInput(SampleInput(mk((2, 3), D.float32, device), mk((2,), D.float32, device)),
                     RuntimeError, "trapezoid: There must be one `x` value for each sample point")


def _narrow_copy_samples(info, device, dtype):
    yield SampleInput(mk((4, 5), dtype, device), 1, 1, 3)
    yield SampleInput(_t((4, 5), dtype, device), 0, -3, 2)
    yield SampleInput(mk((3,), dtype, device), 0, 3, 0)


def _narrow_copy_ref(a, dim, start, length):
    d = dim % a.ndim
    start = start + a.shape[d] if start < 0 else start
    return np.take(a, np.arange(start, start + length), axis=d)


def _narrow_copy_errors(info, device):
    yield ErrorInput(SampleInput(mk((5,), D.float32, device), 0, 1, 9), RuntimeError,
                     re.escape("start (1) + length (9) exceeds dimension size (5)."))


def _entries():
    E, ALL = OpInfo, ALL_DTYPES + COMPLEX
    return [
        E(C.diff, _diff_ref, ALL, _diff_samples, error_inputs=_diff_errors),
        E(C.nan_to_num, _nan_to_num_ref, ALL, _nan_to_num_samples),
        E(C.kron, _kron_ref, ALL, _kron_samples),
        E(C.rot90, _rot90_ref, ALL, _rot90_samples, error_inputs=_rot90_errors),
        E(C.tensor_split_sections, _array_split_ref, ALL, _sections_samples,
          error_inputs=_split_errors),
        E(C.tensor_split_indices, _array_split_ref, ALL, _indices_samples),
        *_xsplit_entries("hsplit", np.hsplit, C.hsplit_int, C.hsplit_array, (2, 4)),
        *_xsplit_entries("vsplit", np.vsplit, C.vsplit_int, C.vsplit_array, (4, 2)),
        *_xsplit_entries("dsplit", np.dsplit, C.dsplit_int, C.dsplit_array, (2, 1, 4)),
        E(C.meshgrid, _meshgrid_ref, ALL, _meshgrid_samples),
        E(C.meshgrid_indexing, _meshgrid_ref, ALL, _meshgrid_indexing_samples,
          error_inputs=_meshgrid_errors),
        E(C.cartesian_prod, _cartesian_prod_ref, ALL, _cartesian_prod_samples,
          error_inputs=_cartesian_prod_errors),
        E(C.block_diag, _block_diag_ref, ALL, _block_diag_samples,
          error_inputs=_block_diag_errors),
        E(C.broadcast_tensors, _broadcast_tensors_ref, ALL, _broadcast_tensors_samples,
          error_inputs=_broadcast_tensors_errors),
        E(C.repeat_interleave_self_int, _repeat_interleave_ref, ALL, _ri_int_samples,
          error_inputs=_ri_int_errors),
        E(C.repeat_interleave_self_Tensor, _repeat_interleave_ref, ALL, _ri_tensor_samples,
          error_inputs=_ri_errors),
        E(C.repeat_interleave_Tensor, _ri_counts_ref, (D.int64,), _ri_counts_samples,
          error_inputs=_ri_counts_errors),
        E(C.tril_indices, _tri_indices_ref(np.tril_indices), (D.int64, D.int32),
          _tri_indices_samples, error_inputs=_tri_indices_errors("tril_indices")),
        E(C.triu_indices, _tri_indices_ref(np.triu_indices), (D.int64, D.int32),
          _tri_indices_samples, error_inputs=_tri_indices_errors("triu_indices")),
        E(C.combinations, _combinations_ref, ALL, _combinations_samples,
          error_inputs=_combinations_errors),
        E(C.trapezoid_x, _trapezoid_x_ref, NUMERIC, _trapezoid_x_samples, tols=TOLS,
          error_inputs=_trapezoid_errors),
        E(C.trapezoid_dx, _trapezoid_dx_ref, NUMERIC, _trapezoid_dx_samples, tols=TOLS),
        E(C.cumulative_trapezoid_x, _cumtrapz_x_ref, NUMERIC, _trapezoid_x_samples,
          tols=TOLS),
        E(C.cumulative_trapezoid_dx, _cumtrapz_dx_ref, NUMERIC, _trapezoid_dx_samples,
          tols=TOLS),
        E(C.narrow_copy, _narrow_copy_ref, ALL, _narrow_copy_samples,
          error_inputs=_narrow_copy_errors),
    ]


register(*_entries())
