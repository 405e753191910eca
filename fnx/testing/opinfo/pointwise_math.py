"""OpInfo entries for the pointwise math functions (fnx/ir/aten/pointwise_math.py), against
NumPy: ``hypot``, ``copysign``, ``logaddexp``, ``logaddexp2``, ``nextafter`` (computed in
the result dtype: its value is one ulp of that dtype), ``heaviside`` (NaN gives 0, as
PyTorch), ``sgn`` (z / |z|), ``ldexp`` (x * 2^e), ``float_power`` (float64/complex128)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ops import aten
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register
from ..reference_dtypes import DEFAULT, INT_TO_FLOAT, pointwise
from .elementwise import _binary_tensor_samples, _special, _unary_samples

REAL = FLOATS + INTS + (D.bool,)
_TOLS = {D.float32: (1e-5, 1e-5), D.float64: (1e-10, 1e-12)}
_EXACT = {d: (0.0, 0.0) for d in (D.float16, D.float32, D.float64)}


def _int_error(name):
    def errors(info, device):
        x = make_tensor((3,), D.int64, device)
        yield ErrorInput(SampleInput(x, x), RuntimeError,
                         f"\"{name}_cpu\" not implemented for 'Long'")
    return errors


def _heaviside_ref(a, v):
    with np.errstate(all="ignore"):
        return np.where(a == 0, v, a > 0).astype(a.dtype)


def _heaviside_samples(info, device, dtype):
    for sa, sb in (((3, 4), (3, 4)), ((3, 1), (4,)), ((), ()), ((0, 3), (3,))):
        yield SampleInput(make_tensor(sa, dtype, device, low=-2, high=3),
                          make_tensor(sb, dtype, device))
    x = make_tensor((4, 3), dtype, device, low=-2, high=3).t()
    yield SampleInput(x, make_tensor((3, 4), dtype, device, noncontiguous=True))
    if dtype.is_floating_point:
        yield SampleInput(_special(dtype, device), _special(dtype, device))


def _heaviside_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device),
                                 make_tensor((2,), D.float64, device)), RuntimeError,
                     "heaviside is not yet implemented for tensors with different dtypes")


def _sgn_ref(a):
    if a.dtype.kind == "c":
        m = np.abs(a)
        with np.errstate(all="ignore"):
            return np.where(m == 0, 0, a / np.where(m == 0, 1, m)).astype(a.dtype)
    if a.dtype == np.bool_:
        return a.copy()
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)).astype(a.dtype)


def _ldexp_samples(info, device, dtype):
    e = make_tensor((3, 4), D.int64, device, low=-5, high=6)
    yield SampleInput(make_tensor((3, 4), dtype, device), e)
    yield SampleInput(make_tensor((3, 1), dtype, device), make_tensor((4,), D.int32, device))
    yield SampleInput(make_tensor((), dtype, device), make_tensor((), D.int64, device))
    yield SampleInput(make_tensor((4, 3), dtype, device).t(), make_tensor((3, 4), dtype, device,
                                                                          low=-3, high=3))


def _ldexp_ref(x, e):
    out = pointwise(lambda a: a, INT_TO_FLOAT, n=1)(x).dtype
    if e.dtype.kind == "f":
        out = np.result_type(out, e.dtype)
    return (x.astype(np.float64) * 2.0 ** e.astype(np.float64)).astype(out)


def _float_power_samples(info, device, dtype):
    low = 0.1 if dtype.is_floating_point else 0
    yield SampleInput(make_tensor((3, 4), dtype, device, low=low, high=4),
                      make_tensor((3, 4), dtype, device, low=-2, high=3))
    yield SampleInput(make_tensor((3, 1), dtype, device, low=low, high=4),
                      make_tensor((4,), D.float32, device, low=-2, high=2))
    yield SampleInput(make_tensor((), dtype, device, low=low, high=4),
                      make_tensor((), dtype, device, low=0, high=3))


def _float_power_ref(x, e):
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), np.asarray(e, np.float64))


def _float_power_scalar_samples(info, device, dtype):
    low = 0.1 if dtype.is_floating_point else 0
    for ex in (2, 0.5, -1.5):
        yield SampleInput(make_tensor((3, 4), dtype, device, low=low, high=4), ex)


def _entries():
    out = []
    for name, fn, dtypes, kind in (("hypot", np.hypot, FLOATS, DEFAULT),
                                   ("logaddexp", np.logaddexp, FLOATS, DEFAULT),
                                   ("logaddexp2", np.logaddexp2, FLOATS, DEFAULT)):
        out.append(OpInfo(getattr(aten, name).default, pointwise(fn, kind, n=2), dtypes,
                          _binary_tensor_samples({}), tols=_TOLS, error_inputs=_int_error(name)))
    out.append(OpInfo(aten.copysign.default, pointwise(np.copysign, INT_TO_FLOAT, n=2), REAL,
                      _binary_tensor_samples({}), tols=_TOLS))
    # one ulp of the result dtype: computed there, compared exactly (no bfloat16 NumPy loop)
    out.append(OpInfo(aten.nextafter.default, pointwise(np.nextafter, DEFAULT, n=2, wide=False),
                      (D.float16, D.float32, D.float64), _binary_tensor_samples({}),
                      tols=_EXACT, error_inputs=_int_error("nextafter")))
    return out


def _int_samples(info, device, dtype):
    def mk(shape, **kw):
        return make_tensor(shape, dtype, device, low=None if dtype.is_signed else 0,
                           high=60, **kw)
    yield SampleInput(mk((3, 4)), mk((3, 4)))
    yield SampleInput(mk((3, 1)), mk((1, 4)))
    yield SampleInput(mk(()), mk(()))
    yield SampleInput(mk((0, 3)), mk((3,)))
    yield SampleInput(mk((3, 4), noncontiguous=True), mk((4, 3)).t())
    zeros = [0, 0, 5, 7, 12, 1]
    yield SampleInput(_tensor(zeros, dtype, device), _tensor([0, 9, 0, 7, 18, 1], dtype, device))


def _tensor(values, dtype, device):
    t = make_tensor((len(values),), dtype, device)
    t.copy_(make_tensor((len(values),), dtype, device).new_tensor(values, dtype=dtype))
    return t


def _gcd_ref(a, b):
    return np.gcd(a, b)


def _lcm_ref(a, b):
    # PyTorch: |a / gcd(a, b) * b| in the operands' dtype (wrapping), 0 where gcd is 0
    g = np.gcd(a, b)
    with np.errstate(all="ignore"):
        return np.where(g == 0, 0, np.abs(a // np.where(g == 0, 1, g) * b)).astype(a.dtype)


def _float_error(name):
    def errors(info, device):
        x = make_tensor((3,), D.float32, device)
        yield ErrorInput(SampleInput(x, x), RuntimeError,
                         f"\"{name}_cpu\" not implemented for 'Float'")
    return errors


def _frexp_ref(x):
    m, e = np.frexp(x.astype(np.float64))
    return m.astype(x.dtype), e.astype(np.int32)


def _frexp_samples(info, device, dtype):
    yield from _unary_samples({})(info, device, dtype)
    yield SampleInput(make_tensor((3, 4), dtype, device, low=-1e-3, high=1e-3))


def _frexp_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((3,), D.int64, device)), RuntimeError,
                     r"torch.frexp\(\) only supports floating-point dtypes")


register(
    *_entries(),
    OpInfo(aten.frexp.Tensor, _frexp_ref, FLOATS, _frexp_samples, error_inputs=_frexp_errors,
           tols={d: (0.0, 0.0) for d in FLOATS}),
    OpInfo(aten.gcd.default, _gcd_ref, INTS, _int_samples, error_inputs=_float_error("gcd")),
    OpInfo(aten.lcm.default, _lcm_ref, INTS, _int_samples, error_inputs=_float_error("lcm")),
    OpInfo(aten.heaviside.default, _heaviside_ref, REAL, _heaviside_samples,
           error_inputs=_heaviside_errors),
    OpInfo(aten.sgn.default, _sgn_ref, REAL + (D.complex64, D.complex128), _unary_samples({}),
           tols={D.complex64: (1e-6, 1e-6)}),
    OpInfo(aten.ldexp.Tensor, _ldexp_ref, (D.float32, D.float64, D.int64), _ldexp_samples,
           tols=_TOLS),
    OpInfo(aten.float_power.Tensor_Tensor, _float_power_ref, (D.float32, D.float64, D.int64),
           _float_power_samples, tols=_TOLS),
    OpInfo(aten.float_power.Tensor_Scalar, _float_power_ref, (D.float32, D.float64, D.int64),
           _float_power_scalar_samples, tols=_TOLS),
)
