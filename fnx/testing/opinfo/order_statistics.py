"""OpInfo entries of fnx/ir/aten/order_statistics.py.

The references restate PyTorch's rules row by row in NumPy: a stable ascending order with
NaN last (``np.argsort(kind="stable")``), the lower middle for ``median``, the first NaN
of a row with one, the smallest most frequent value and its last index for ``mode``
(``np.unique``), the last index of a running extreme; ``np.quantile``/``np.nanquantile``
(same five interpolation methods) and ``np.logaddexp.accumulate`` for the others.
"""
from __future__ import annotations

import re

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import order_statistics as O
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register

NUMERIC = FLOATS + INTS
F64 = (D.float32, D.float64)
TOLS = {D.float16: (1e-2, 1e-2), D.bfloat16: (5e-2, 5e-2), D.float32: (1e-5, 1e-5)}
SPECIAL = [3.0, np.nan, -np.inf, 1.0, 2.0, 3.0, np.inf, 1.0, np.nan, 0.0, -2.5, np.nan]


def _special(dtype, device):
    t = fnx.from_numpy(np.array(SPECIAL, np.float64).reshape(3, 4).astype(dtype.numpy))
    return t if str(device) == "cpu" else t.to(device)


# --------------------------------------------------------------------------- references

def _rows(a, dim):
    """``a`` with ``dim`` last, as (rows, n), and a function putting per-row results back."""
    if a.ndim == 0:
        return a.reshape(1, 1), lambda r, keepdim=False: r.reshape(())
    d = dim % a.ndim
    m = np.moveaxis(a, d, -1)
    batch = m.shape[:-1]

    def back(r, keepdim=False):
        r = r.reshape(batch)
        return np.expand_dims(r, d) if keepdim else r
    return m.reshape(-1, m.shape[-1]), back


def _is_float(a) -> bool:
    return a.dtype.kind == "f" or a.dtype.name == "bfloat16"


def _select_ref(a, dim, keepdim, position):
    """Per row: the element at sorted position ``position(row, order)`` and its index."""
    rows, back = _rows(a, dim)
    vals, idx = [], []
    for row in rows:
        x = row.astype(np.float64) if _is_float(row) else row
        order = np.argsort(x, kind="stable")        # NaN last, ties in original order
        i = order[position(x, order)]
        vals.append(row[i])
        idx.append(i)
    v = np.array(vals, dtype=a.dtype)
    return back(v, keepdim), back(np.array(idx, np.int64), keepdim)


def _kthvalue_ref(a, k, dim=-1, keepdim=False):
    return _select_ref(a, dim, keepdim, lambda x, o: k - 1)


def _median_position(x, order):
    nans = int(np.isnan(x).sum()) if x.dtype.kind == "f" else 0
    return len(x) - nans if nans else (len(x) - 1) // 2


def _nanmedian_position(x, order):
    nans = int(np.isnan(x).sum()) if x.dtype.kind == "f" else 0
    return max(len(x) - nans - 1, 0) // 2


def _median_dim_ref(a, dim, keepdim=False):
    return _select_ref(a, dim, keepdim, _median_position)


def _nanmedian_dim_ref(a, dim, keepdim=False):
    return _select_ref(a, dim, keepdim, _nanmedian_position)


def _empty_median(a):
    """PyTorch's CPU kernel: NaN, for integers the lowest value."""
    return np.array(np.nan if _is_float(a) else np.iinfo(a.dtype).min, a.dtype)


def _median_ref(a):
    if a.size == 0:
        return _empty_median(a)
    return _median_dim_ref(a.reshape(-1), 0)[0]


def _nanmedian_ref(a):
    if a.size == 0:
        return _empty_median(a)
    return _nanmedian_dim_ref(a.reshape(-1), 0)[0]


def _mode_ref(a, dim=-1, keepdim=False):
    rows, back = _rows(a, dim)
    vals, idx = [], []
    for row in rows:
        u, counts = np.unique(row, return_counts=True)     # ascending: the first max wins
        v = u[np.argmax(counts)]
        vals.append(v)
        idx.append(np.nonzero(row == v)[0][-1])
    return back(np.array(vals, a.dtype), keepdim), back(np.array(idx, np.int64), keepdim)


def _cum_extreme_ref(better):
    def ref(a, dim):
        if a.size == 0:
            return a.copy(), np.zeros(a.shape, np.int64)
        rows, _ = _rows(a, dim)
        vals, idx = np.empty_like(rows), np.empty(rows.shape, np.int64)
        for r, row in enumerate(rows):
            x = row.astype(np.float64) if _is_float(row) else row
            best = 0
            for i in range(len(x)):
                cur = x[best]
                if np.isnan(x[i]) if x.dtype.kind == "f" else False:
                    best = i
                elif not (x.dtype.kind == "f" and np.isnan(cur)) and (
                        x[i] == cur or better(x[i], cur)):
                    best = i                            # a tie: the later index
                vals[r, i], idx[r, i] = row[best], best
        if a.ndim == 0:
            return vals.reshape(()), idx.reshape(())
        d = dim % a.ndim
        shape = np.moveaxis(a, d, -1).shape
        return (np.moveaxis(vals.reshape(shape), -1, d), np.moveaxis(idx.reshape(shape), -1, d))
    return ref


def _logcumsumexp_ref(a, dim):
    if a.ndim == 0:
        return a.copy()
    with np.errstate(all="ignore"):
        r = np.logaddexp.accumulate(a.astype(np.float64), axis=dim % a.ndim)
    return r.astype(a.dtype)


def _lerp(a, b, w):
    """PyTorch's lerp: from the nearer end, so it is exact at both (infinities hold)."""
    with np.errstate(all="ignore"):
        return np.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _quantile_ref(nan):
    """Sorted rows (NaN last), rank ``q * (count - 1)``, the two neighbours and PyTorch's
    rule for each interpolation; a NaN in the row (``nan``: an all-NaN row) gives NaN.
    (np.quantile differs only at an integral rank next to an infinity: it mixes in the
    following value with weight 0.)"""
    def ref(a, q, dim=None, keepdim=False, *, interpolation="linear"):
        x = a.astype(np.float64)
        qv = np.atleast_1d(np.asarray(q, np.float64))
        if dim is None:
            rows, back = x.reshape(1, -1), None
        else:
            rows, back = _rows(x, dim)
        out = np.empty((len(qv), len(rows)))
        for r, row in enumerate(rows):
            srt = np.sort(row)
            valid = int((~np.isnan(row)).sum()) if nan else len(row)
            if valid == 0 or (not nan and valid < len(row)) or np.isnan(srt[:valid]).any():
                out[:, r] = np.nan
                continue
            rank = qv * (valid - 1)
            if interpolation == "nearest":
                rank = np.round(rank)                   # half to even
            lo, hi = np.floor(rank).astype(int), np.ceil(rank).astype(int)
            out[:, r] = {"lower": lambda: srt[lo], "nearest": lambda: srt[lo],
                         "higher": lambda: srt[hi],
                         "midpoint": lambda: _lerp(srt[lo], srt[hi], 0.5),
                         "linear": lambda: _lerp(srt[lo], srt[hi], rank - lo)}[interpolation]()
        if dim is None:
            res = out.reshape((len(qv),) + ((1,) * a.ndim if keepdim else ()))
        else:
            res = np.stack([back(o, keepdim) for o in out])
        if np.ndim(q) == 0:
            res = res[0]
        return np.asarray(res).astype(a.dtype)
    return ref


# --------------------------------------------------------------------------- samples

def _values(dtype, device, shape, **kw):
    if dtype.is_floating_point:
        return make_tensor(shape, dtype, device, **kw)
    return make_tensor(shape, dtype, device, low=0, high=4, **kw)     # ties in every row


def _inputs(dtype, device, empty=False):
    yield _values(dtype, device, (4, 6)), -1
    yield _values(dtype, device, (4, 5)), 0
    yield _values(dtype, device, (2, 3, 5)), 1
    yield _values(dtype, device, ()), 0
    yield _values(dtype, device, (4, 6), noncontiguous=True), 1
    yield _values(dtype, device, (5, 4)).t(), 1
    if empty:
        yield _values(dtype, device, (0, 3)), 1
    if dtype.is_floating_point:
        yield _special(dtype, device), 1
        yield _special(dtype, device), 0


def _kthvalue_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        size = x.shape[d] if x.ndim else 1
        for k in sorted({1, (size + 1) // 2, size}):
            yield SampleInput(x, k, d, (i + k) % 2 == 0)


def _median_dim_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        yield SampleInput(x, d, i % 2 == 1)


def _median_samples(info, device, dtype):
    for x, _ in _inputs(dtype, device, empty=True):
        yield SampleInput(x)
    yield SampleInput(_values(dtype, device, (7,)))


def _mode_samples(info, device, dtype):
    for i, (x, d) in enumerate(_inputs(dtype, device)):
        if dtype.is_floating_point:     # ties: small integers as floats
            x = make_tensor(tuple(x.shape), D.int64, device, low=0, high=4).to(dtype)
        yield SampleInput(x, d, i % 2 == 1)


def _scan_samples(info, device, dtype):
    for x, d in _inputs(dtype, device, empty=True):
        yield SampleInput(x, d)


def _quantile_samples(scalar):
    def samples(info, device, dtype):
        # scalar q (not differentiated): the ends and a middle too; tensor q (also
        # differentiated) away from the integral and half-integral ranks where the
        # lower/higher/nearest choices jump
        qs = [0.0, 0.3, 0.5, 1.0] if scalar else [0.13, 0.37, 0.61, 0.89]
        for i, (x, d) in enumerate(_inputs(dtype, device)):
            for j, interp in enumerate(("linear", "lower", "higher", "midpoint", "nearest")):
                q = qs[(i + j) % 4] if scalar else fnx.tensor(qs[: 1 + (i + j) % 4],
                                                              dtype=dtype, device=device)
                dim = None if (i + j) % 3 == 0 else d
                yield SampleInput(x, q, dim, (i + j) % 2 == 1, interpolation=interp)
        if not scalar:      # a 0-dim q: no leading dimension
            yield SampleInput(_values(dtype, device, (3, 4)), fnx.tensor(0.25, dtype=dtype,
                                                                         device=device), 1)
    return samples


# --------------------------------------------------------------------------- error inputs

def _kthvalue_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    for k in (0, 4):
        yield ErrorInput(SampleInput(x, k, 1), RuntimeError,
                         re.escape("kthvalue(): selected number k out of range for dimension 1"))
    yield ErrorInput(SampleInput(x, 1, 2), IndexError, "Dimension out of range")


def _median_dim_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 0), D.float32, device), 1), IndexError,
                     re.escape("median(): Expected reduction dim 1 to have non-zero size."))
    yield ErrorInput(SampleInput(make_tensor((3,), D.complex64, device), 0), RuntimeError,
                     "not implemented for 'ComplexFloat'")


def _mode_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 0), D.float32, device), 1), IndexError,
                     re.escape("mode(): Expected reduction dim 1 to have non-zero size."))


def _quantile_errors(info, device):
    x = make_tensor((2, 3), D.float32, device)
    q = fnx.tensor([0.5], device=device)
    yield ErrorInput(SampleInput(x.long(), q), RuntimeError,
                     re.escape("quantile() input tensor must be either float or double dtype"))
    yield ErrorInput(SampleInput(x, q.double()), RuntimeError,
                     re.escape("quantile() q tensor must be same dtype as the input tensor"))
    yield ErrorInput(SampleInput(x, fnx.zeros(2, 2, device=device)), RuntimeError,
                     re.escape("quantile() q must be a scalar or 1D tensor"))
    yield ErrorInput(SampleInput(x, fnx.tensor([0.5, 1.5], device=device)), RuntimeError,
                     re.escape("quantile() q values must be in the range [0, 1]"), meta=False)
    yield ErrorInput(SampleInput(make_tensor((0,), D.float32, device), q), RuntimeError,
                     re.escape("quantile() input tensor must be non-empty"))
    yield ErrorInput(SampleInput(x, q, interpolation="cubic"), RuntimeError,
                     re.escape("quantile() interpolation must be one of linear, lower, higher, "
                               "midpoint or nearest, but got cubic"))


def _quantile_scalar_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2, 3), D.float32, device), 1.5), RuntimeError,
                     re.escape("quantile() q must be in the range [0, 1] but got 1.5"))


def _logcumsumexp_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.int64, device), 0), RuntimeError,
                     "not implemented for 'Long'")
    yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device), 1), IndexError,
                     "Dimension out of range")


MODE_GRAD = ("the most frequent value is defined by exact ties, which finite differences "
             "break; tests/test_order_statistics.py checks where its gradient goes")

register(
    OpInfo(O.kthvalue, _kthvalue_ref, NUMERIC, _kthvalue_samples,
           error_inputs=_kthvalue_errors),
    OpInfo(O.median, _median_ref, NUMERIC, _median_samples),
    OpInfo(O.median_dim, _median_dim_ref, NUMERIC, _median_dim_samples,
           error_inputs=_median_dim_errors),
    OpInfo(O.nanmedian, _nanmedian_ref, NUMERIC, _median_samples),
    OpInfo(O.nanmedian_dim, _nanmedian_dim_ref, NUMERIC, _median_dim_samples),
    OpInfo(O.mode, _mode_ref, NUMERIC, _mode_samples, error_inputs=_mode_errors,
           skips={"grad": MODE_GRAD}),
    OpInfo(O.quantile, _quantile_ref(False), F64, _quantile_samples(False), tols=TOLS,
           error_inputs=_quantile_errors),
    OpInfo(O.quantile_scalar, _quantile_ref(False), F64, _quantile_samples(True), tols=TOLS,
           error_inputs=_quantile_scalar_errors),
    OpInfo(O.nanquantile, _quantile_ref(True), F64, _quantile_samples(False), tols=TOLS),
    OpInfo(O.nanquantile_scalar, _quantile_ref(True), F64, _quantile_samples(True), tols=TOLS),
    OpInfo(O.cummax, _cum_extreme_ref(np.greater), NUMERIC, _scan_samples),
    OpInfo(O.cummin, _cum_extreme_ref(np.less), NUMERIC, _scan_samples),
    OpInfo(O.logcumsumexp, _logcumsumexp_ref, FLOATS, _scan_samples, tols=TOLS,
           error_inputs=_logcumsumexp_errors),
)
