"""OpInfo entries for the special functions (fnx/ir/aten/special.py), against
``scipy.special`` (and NumPy's ``sinc``), computed in float64 and rounded once to PyTorch's
result dtype (integers and bools compute in the default float dtype).

The unary samples are the pointwise ones (0-dim, empty, strided, transposed, and NaN,
+-inf, +-0 for floats), inside each function's domain where it has one; the parameters of
the two-argument functions are drawn where the function is defined (orders a > 0, x >= 0
for the incomplete gamma functions, x > 1 for zeta) plus PyTorch's edge values.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import INT_TO_FLOAT, pointwise
from ..variant_entries import out_entry
from .elementwise import _binary_tensor_samples, _unary_samples

REAL = FLOATS + INTS + (D.bool,)
# integers and bools compute in float32: their samples compare as float32 (also into a
# float64 ``out=``)
_TOLS = {D.float32: (1e-5, 1e-5), D.float64: (1e-9, 1e-10), D.float16: (2e-3, 1e-4),
         D.bfloat16: (2e-2, 1e-3), **{d: (1e-5, 1e-5) for d in INTS + (D.bool,)}}
_LOOSE = {**_TOLS, D.float32: (1e-4, 1e-5), D.float64: (1e-8, 1e-10),
          **{d: (1e-4, 1e-5) for d in INTS + (D.bool,)}}


def _lgamma(a):
    return np.where(a == -np.inf, np.inf, sp.gammaln(a))      # log|gamma(-inf)| = inf


# name -> (reference, sample options, tolerances)
UNARY = {
    "lgamma": (_lgamma, {}, _LOOSE), "digamma": (sp.psi, {}, _LOOSE),
    "erfc": (sp.erfc, {}, _TOLS), "i0": (sp.i0, {}, _TOLS), "sinc": (np.sinc, {}, _TOLS),
    "special_i0e": (sp.i0e, {}, _TOLS), "special_i1": (sp.i1, {}, _TOLS),
    "special_i1e": (sp.i1e, {}, _TOLS), "special_entr": (sp.entr, {}, _TOLS),
    "special_ndtr": (sp.ndtr, {}, _TOLS),
    "special_ndtri": (sp.ndtri, {"domain": (0.001, 0.999)}, _LOOSE),
    "special_log_ndtr": (sp.log_ndtr, {}, _TOLS), "special_erfcx": (sp.erfcx, {}, _LOOSE),
}
BINARY = {"xlogy": (aten.xlogy.Tensor, sp.xlogy), "special_xlog1py": (None, sp.xlog1py)}


def _tensor(values, dtype, device):
    return fnx.tensor(np.asarray(values, np.float64).astype(dtype.numpy), device=device)


def _positive(shape, dtype, device, low=0.1, high=8.0, **kw):
    lo, hi = (low, high) if dtype.is_floating_point else (1, 8)
    return make_tensor(shape, dtype, device, low=lo, high=hi, **kw)


def _param_samples(low, edges):
    """Samples of a function of (parameter, x): both drawn from [low, 8) for floats, then
    the ``edges`` pairs."""
    def samples(info, device, dtype):
        yield SampleInput(_positive((3, 4), dtype, device, low), _positive((3, 4), dtype, device))
        yield SampleInput(_positive((3, 1), dtype, device, low), _positive((1, 4), dtype, device))
        yield SampleInput(_positive((), dtype, device, low), _positive((), dtype, device))
        yield SampleInput(_positive((0, 2), dtype, device, low), _positive((2,), dtype, device))
        yield SampleInput(_positive((3, 4), dtype, device, low, noncontiguous=True),
                          _positive((4, 3), dtype, device).t())
        if dtype.is_floating_point:
            a, x = zip(*edges)
            yield SampleInput(_tensor(a, dtype, device), _tensor(x, dtype, device))
    return samples


_INF, _NAN = np.inf, np.nan
# PyTorch's edge values (Cephes): a = 0 (P = 1 for x > 0), x = 0, infinite a or x, NaN, a < 0
_IGAMMA_EDGES = [(0.0, 2.0), (1.5, 0.0), (_INF, 3.0), (2.0, _INF), (_NAN, 1.0), (1.0, _NAN),
                 (-1.0, 2.0), (2.0, -1.0), (40.0, 30.0), (0.5, 50.0)]
# x = 1 (pole), x < 1 (NaN), whole q <= 0 (pole), negative q
_ZETA_EDGES = [(1.0, 2.0), (0.5, 1.0), (2.0, 0.0), (3.0, -2.0), (2.0, -1.5), (4.0, 1e-3),
               (_INF, 2.0), (2.0, _NAN)]


def _polygamma_samples(info, device, dtype):
    for n in (0, 1, 2, 3):
        yield SampleInput(n, make_tensor((3, 4), dtype, device, low=0.2 if n else None))
    yield SampleInput(1, make_tensor((), dtype, device, low=0.2))
    yield SampleInput(2, make_tensor((0, 3), dtype, device))
    yield SampleInput(1, make_tensor((4, 3), dtype, device, low=0.2, noncontiguous=True))
    if dtype.is_floating_point:
        # poles at +-0, a negative non-integer, infinities where lax and SciPy agree
        yield SampleInput(1, _tensor([0.0, -0.0, -2.5, _INF, _NAN, 1e-3, 30.0], dtype, device))
        yield SampleInput(0, _tensor([0.0, -0.0, -1.0, -2.5, _INF, _NAN], dtype, device))


def _polygamma_ref(n, x):
    return pointwise(sp.psi if n == 0 else lambda a: sp.polygamma(n, a), INT_TO_FLOAT, n=1)(x)


def _polygamma_errors(info, device):
    yield ErrorInput(SampleInput(-1, make_tensor((3,), D.float32, device)), RuntimeError,
                     r"polygamma\(n, x\) does not support negative n")


def _mvlgamma_samples(info, device, dtype):
    for p in (1, 2, 3):
        yield SampleInput(make_tensor((3, 4), dtype, device, low=p, high=9 + p), p)
    yield SampleInput(make_tensor((), dtype, device, low=2, high=5), 2)
    yield SampleInput(make_tensor((0, 2), dtype, device), 4)
    yield SampleInput(make_tensor((4, 3), dtype, device, low=3, high=9).t(), 5)


def _mvlgamma_ref(x, p):
    def fn(w):
        return sum(sp.gammaln(w - j / 2) for j in range(p)) + p * (p - 1) / 4 * np.log(np.pi)
    return pointwise(fn, INT_TO_FLOAT, n=1)(x)


def _mvlgamma_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.float32, device), 0), RuntimeError,
                     "p has to be greater than or equal to 1")
    yield ErrorInput(SampleInput(_tensor([2.0, 0.4], D.float32, device), 2), RuntimeError,
                     r"All elements must be greater than \(p-1\)/2", meta=False)


def _logit_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=0.01, high=0.99))
    yield SampleInput(make_tensor((3, 4), dtype, device, low=-0.5, high=1.5), 0.1)
    yield SampleInput(make_tensor((), dtype, device, low=0.1, high=0.9), eps=1e-6)
    yield SampleInput(make_tensor((0, 2), dtype, device))
    yield SampleInput(make_tensor((4, 3), dtype, device, low=0.05, high=0.95,
                                  noncontiguous=True).t(), -1.0)
    if dtype.is_floating_point:
        yield SampleInput(_tensor([0.0, 1.0, -0.5, 1.5, 0.5, _NAN], dtype, device))
        yield SampleInput(_tensor([0.0, 1.0, -0.5, 1.5, 0.5, _NAN], dtype, device), 0.25)


def _logit_ref(x, eps=None):
    def fn(w):
        if eps is not None and eps >= 0:
            w = np.where(w < eps, eps, np.where(w > 1 - eps, 1 - eps, w))
        return sp.logit(w)
    return pointwise(fn, INT_TO_FLOAT, n=1)(x)


def _complex_error(name, n):
    def errors(info, device):
        z = make_tensor((3,), D.complex64, device)
        yield ErrorInput(SampleInput(*([z] * n)), RuntimeError,
                         f"\"{name}_cpu\" not implemented for 'ComplexFloat'")
    return errors


def _entries():
    out = []
    for name, (fn, opts, tols) in UNARY.items():
        dtypes = FLOATS if "domain" in opts else REAL
        out.append(OpInfo(getattr(aten, name).default, pointwise(fn, INT_TO_FLOAT, n=1), dtypes,
                          _unary_samples(opts), tols=tols, error_inputs=_complex_error(name, 1)))
    for name, (op, fn) in BINARY.items():
        op = op or getattr(aten, name).default
        out.append(OpInfo(op, pointwise(fn, INT_TO_FLOAT, n=2), REAL,
                          _binary_tensor_samples({}), tols=_TOLS,
                          error_inputs=_complex_error(name, 2)))
    for name, fn, low, edges in (("igamma", sp.gammainc, 0.1, _IGAMMA_EDGES),
                                 ("igammac", sp.gammaincc, 0.1, _IGAMMA_EDGES),
                                 ("special_zeta", sp.zeta, 1.1, _ZETA_EDGES)):
        out.append(OpInfo(getattr(aten, name).default, pointwise(fn, INT_TO_FLOAT, n=2), REAL,
                          _param_samples(low, edges), tols=_LOOSE,
                          skips={"grad": "no derivative with respect to the first argument "
                                         "(as PyTorch): tests/test_special.py checks the "
                                         "second's"}))
    return out


# polygamma's in-place form takes (self, n), not the functional (n, self): no derived
# in-place entry (``Tensor.polygamma_`` is tested in tests/test_special.py); out= is derived
_POLYGAMMA = OpInfo(aten.polygamma.default, _polygamma_ref, REAL, _polygamma_samples,
                    tols=_LOOSE, error_inputs=_polygamma_errors, variants=False)

register(
    *_entries(),
    _POLYGAMMA,
    out_entry(_POLYGAMMA, aten.polygamma.out),
    OpInfo(aten.mvlgamma.default, _mvlgamma_ref, FLOATS + INTS, _mvlgamma_samples, tols=_LOOSE,
           error_inputs=_mvlgamma_errors),
    OpInfo(aten.logit.default, _logit_ref, FLOATS, _logit_samples, tols=_TOLS),
)
