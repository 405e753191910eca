"""OpInfo entries for ``addcmul``, ``addcdiv`` and ``lerp`` (fnx/ir/aten/elementwise_ternary.py)
with NumPy references; their in-place and ``out=`` entries are derived.

Samples cover broadcasting between all three operands, 0-dim and empty tensors,
non-contiguous inputs, mixed dtypes (addcmul/addcdiv promote), ``value``/``weight`` of
both kinds, and for lerp weights on both sides of 0.5 and outside [0, 1]."""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import elementwise_ternary as T
from ..database import (FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register)
from ..reference_dtypes import DEFAULT, pointwise


def _addcmul(a, b, c, *, value=1):
    return a + np.asarray(value).astype(a.dtype) * b * c


def _addcdiv(a, b, c, *, value=1):
    return a + np.asarray(value).astype(a.dtype) * b / c


def _lerp(a, b, w):
    """PyTorch's two-sided formula, exact at both ends: from ``a`` below |w| = 0.5, from
    ``b`` above."""
    w = np.asarray(w, dtype=a.dtype)
    d = b - a
    return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w))


def _lerp_scalar_ref(a, b, w):
    return pointwise(lambda x, y: _lerp(x, y, w), DEFAULT, n=2)(a, b)


def _addc_samples(divide):
    def samples(info, device, dtype):
        def t(shape, d=dtype, **kw):
            return make_tensor(shape, d, device, exclude_zero=divide, **kw)
        int_like = not (dtype.is_floating_point or dtype.is_complex)
        vs = (2, 3) if int_like else (0.5, -2.0)
        yield SampleInput(t((3, 4)), t((3, 4)), t((3, 4)))
        yield SampleInput(t((3, 4)), t((3, 1)), t((1, 4)), value=vs[0])
        yield SampleInput(t((4,)), t((2, 3, 4)), t(()), value=vs[1])
        yield SampleInput(t(()), t(()), t(()))
        yield SampleInput(t((0, 3)), t((3,)), t((0, 1)), value=vs[0])
        yield SampleInput(t((3, 4), noncontiguous=True), t((4, 3)).t(), t((3, 4)))
        other = D.float32 if dtype is not D.float32 else D.float64
        if not (divide and int_like):
            yield SampleInput(t((2, 3)), t((2, 3), other), t((2, 3)), value=vs[1])
        if int_like:
            yield SampleInput(t((2, 3)), t((2, 3)), t((2, 3)), value=1.5)   # truncated value
    return samples


def _addc_errors(divide):
    def errors(info, device):
        f = make_tensor((2, 3), D.float32, device)
        i = make_tensor((2, 3), D.int64, device, exclude_zero=True)
        yield ErrorInput(SampleInput(f, f, make_tensor((4,), D.float32, device)),
                         RuntimeError, "must match the size")
        if divide:
            yield ErrorInput(SampleInput(f, i, i), RuntimeError,
                             "Integer division with addcdiv is no longer supported")
        b = make_tensor((2, 3), D.bool, device)
        # (bool addcdiv is an integer division)
        yield ErrorInput(SampleInput(b, b, b), RuntimeError,
                         "Integer division" if divide else "not implemented for 'Bool'")
    return errors


def _lerp_scalar_samples(info, device, dtype):
    def t(shape, **kw):
        return make_tensor(shape, dtype, device, **kw)
    yield SampleInput(t((3, 4)), t((3, 4)), 0.3)
    yield SampleInput(t((3, 4)), t((3, 4)), 0.75)
    yield SampleInput(t((3, 1)), t((1, 4)), 0.5)
    yield SampleInput(t(()), t((2, 3)), -0.5)
    yield SampleInput(t((0, 3)), t((3,)), 1.5)
    yield SampleInput(t((3, 4), noncontiguous=True), t((4, 3)).t(), 1)
    yield SampleInput(t((2, 3)), t((2, 3)), 0)


def _lerp_tensor_samples(info, device, dtype):
    def t(shape, low=None, high=None, **kw):
        return make_tensor(shape, dtype, device, low=low, high=high, **kw)
    yield SampleInput(t((3, 4)), t((3, 4)), t((3, 4), low=-1, high=2))
    yield SampleInput(t((3, 1)), t((1, 4)), t((3, 4), low=0, high=1))
    yield SampleInput(t((4,)), t((2, 3, 4)), t((), low=0.6, high=0.9))
    yield SampleInput(t(()), t(()), t(()))
    yield SampleInput(t((0, 3)), t((3,)), t((0, 1)))
    yield SampleInput(t((3, 4), noncontiguous=True), t((4, 3)).t(), t((3, 4), low=0, high=1))


def _lerp_errors(tensor_weight):
    def errors(info, device):
        f = make_tensor((2, 3), D.float32, device)
        d = make_tensor((2, 3), D.float64, device)
        i = make_tensor((2, 3), D.int64, device)

        def w(x):
            return make_tensor((2, 3), x.dtype, device) if tensor_weight else 0.5
        yield ErrorInput(SampleInput(f, d, w(f)), RuntimeError,
                         "expected dtype float for `end` but got dtype double")
        yield ErrorInput(SampleInput(i, i, w(i)), RuntimeError, "not implemented for 'Long'")
        yield ErrorInput(SampleInput(f, make_tensor((4,), D.float32, device), w(f)),
                         RuntimeError, "must match the size")
        if tensor_weight:
            yield ErrorInput(SampleInput(f, f, d), RuntimeError,
                             "expected dtype float for `weight` but got dtype double")
    return errors


NUMERIC = FLOATS + INTS
register(
    OpInfo(T.addcmul, pointwise(_addcmul, DEFAULT, n=3), NUMERIC, _addc_samples(False),
           error_inputs=_addc_errors(False)),
    OpInfo(T.addcdiv, pointwise(_addcdiv, DEFAULT, n=3), FLOATS, _addc_samples(True),
           error_inputs=_addc_errors(True)),
    OpInfo(T.lerp_Scalar, _lerp_scalar_ref, FLOATS, _lerp_scalar_samples,
           error_inputs=_lerp_errors(False)),
    OpInfo(T.lerp_Tensor, pointwise(_lerp, DEFAULT, n=3), FLOATS, _lerp_tensor_samples,
           error_inputs=_lerp_errors(True)),
)
