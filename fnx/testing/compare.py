"""Comparing op results with references: exact dtype and shape, values within tolerance,
NaN in the same places.

>>> import fnx, numpy as np
>>> assert_close(fnx.tensor([1.0, float("nan")]), np.array([1.0, np.nan], np.float32))
>>> assert_close(fnx.tensor([1, 2]), np.array([1, 2], np.int32))
Traceback (most recent call last):
AssertionError: result: dtype: got fnx.int64, expected fnx.int32 (NumPy int32)
"""
from __future__ import annotations

import numpy as np

from ..core import dtype as D
from .database import DEFAULT_TOLS

__all__ = ["assert_close", "assert_equal", "to_numpy"]


def _is_tensor(x) -> bool:
    return hasattr(x, "_ks") and hasattr(x, "_dtype")


def to_numpy(t) -> np.ndarray:
    """The values of a tensor on any device with data, as a NumPy array."""
    return np.asarray(t.numpy(force=True))


def _as_float(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float32).astype(np.float64) if a.dtype.kind == "V" or \
        a.dtype.name == "bfloat16" else a.astype(np.float64)


def _fmt_index(idx, shape):
    return tuple(int(i) for i in np.unravel_index(idx, shape)) if shape else ()


def assert_close(actual, expected, rtol=None, atol=None, *, what="result", check_values=True):
    """Assert that ``actual`` (a tensor, Python scalar or a tuple of them) equals
    ``expected`` (NumPy arrays, scalars or tensors): same dtype and shape, equal values for
    integers and bool, ``|a - e| <= atol + rtol * |e|`` for floats with NaN and inf in
    the same places.  Default tolerances: those of the expected dtype."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise AssertionError(f"{what}: expected a sequence of {len(expected)} results, "
                                 f"got {type(actual).__name__}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, what=f"{what}[{i}]", check_values=check_values)
        return
    if _is_tensor(expected):
        expected = to_numpy(expected) if expected.device.type != "meta" else expected
    if not _is_tensor(actual):
        _scalar_close(actual, expected, rtol, atol, what)
        return
    if isinstance(expected, (bool, int, float, complex, np.generic)) and \
            not isinstance(expected, np.ndarray):
        expected = np.asarray(expected)
    if not isinstance(expected, np.ndarray):
        raise AssertionError(f"{what}: expected {type(expected).__name__}, got a tensor")
    try:
        edtype = D.from_numpy_dtype(expected.dtype)
    except TypeError:
        raise AssertionError(f"{what}: the reference returned NumPy {expected.dtype}, which "
                             f"is no fnx dtype") from None
    if actual.dtype is not edtype:
        raise AssertionError(f"{what}: dtype: got {actual.dtype!r}, expected {edtype!r} "
                             f"(NumPy {expected.dtype})")
    if tuple(actual.shape) != expected.shape:
        raise AssertionError(f"{what}: shape: got {list(actual.shape)}, expected "
                             f"{list(expected.shape)}")
    if not check_values:
        return
    a = to_numpy(actual)
    if edtype.is_floating_point or edtype.is_complex:
        if rtol is None or atol is None:
            rtol, atol = DEFAULT_TOLS.get(edtype, (0.0, 0.0))
        af, ef = _as_float(a), _as_float(expected)
        if np.array_equal(af, ef, equal_nan=True):
            return
        with np.errstate(all="ignore"):
            ok = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True)
            # isclose treats inf as close to inf of the same sign only: keep that
        if ok.all():
            return
        bad = np.flatnonzero(~ok)
        i = bad[0]
        with np.errstate(all="ignore"):
            diff = np.abs(af - ef)
            finite = np.isfinite(diff)
            worst = float(diff[finite].max()) if finite.any() else float("nan")
        raise AssertionError(
            f"{what}: {bad.size} of {ok.size} values differ (rtol={rtol}, atol={atol}); "
            f"first at {_fmt_index(i, a.shape)}: got {af.flat[i]!r}, expected "
            f"{ef.flat[i]!r}; largest finite difference {worst:.3g}")
    if not np.array_equal(a, expected):
        bad = np.flatnonzero(a != expected)
        i = bad[0]
        raise AssertionError(f"{what}: {bad.size} of {a.size} values differ; first at "
                             f"{_fmt_index(i, a.shape)}: got {a.flat[i]!r}, expected "
                             f"{expected.flat[i]!r}")


def _scalar_close(actual, expected, rtol, atol, what):
    if isinstance(expected, np.ndarray) and expected.ndim == 0:
        expected = expected.item()
    if isinstance(expected, np.generic):
        expected = expected.item()
    kinds = (bool, int, float, complex)
    ka = next((k for k in kinds if type(actual) is k), None)
    ke = next((k for k in kinds if type(expected) is k), None)
    if ka is None or ka is not ke:
        raise AssertionError(f"{what}: got {type(actual).__name__} {actual!r}, expected "
                             f"{type(expected).__name__} {expected!r}")
    if ka in (float, complex):
        ok = np.isclose(actual, expected, rtol=rtol or 0, atol=atol or 0, equal_nan=True)
    else:
        ok = actual == expected
    if not ok:
        raise AssertionError(f"{what}: got {actual!r}, expected {expected!r}")


def assert_equal(actual, expected, dtype=None):
    """``actual`` (a tensor) has ``expected``'s shape and exactly its values (NaN equal to
    NaN), and ``dtype`` when given; ``expected`` may be any array-like of any dtype.

    >>> import fnx
    >>> assert_equal(fnx.tensor([1, 2]), [1, 2], fnx.int64)
    >>> assert_equal(fnx.tensor([1, 2]), [1, 3])
    Traceback (most recent call last):
    AssertionError: ...
    """
    expected = np.asarray(expected)
    if tuple(actual.shape) != expected.shape:
        raise AssertionError(f"shape: got {list(actual.shape)}, expected "
                             f"{list(expected.shape)}")
    np.testing.assert_array_equal(to_numpy(actual), expected)
    if dtype is not None and actual.dtype is not dtype:
        raise AssertionError(f"dtype: got {actual.dtype!r}, expected {dtype!r}")
