"""OpInfo entries of fnx/ir/aten/complex_ops.py: NumPy's complex arithmetic (``re + 1j
* im``, ``abs * exp(1j angle)``, ``np.real``/``np.imag``/``np.conj``/``np.angle``) is the
reference; the angle of a real number restates PyTorch's rule (pi below zero, else 0,
NaN stays; NumPy's ``angle(-0.0)`` is pi)."""
from __future__ import annotations

import re

import numpy as np

import fnx

from ...core import dtype as D
from ...ir.aten import complex_ops as C
from ..database import FLOATS, INTS, ErrorInput, OpInfo, SampleInput, make_tensor, register

COMPLEX = (D.complex64, D.complex128)
PARTS = (D.float32, D.float64)
CTOLS = {D.complex64: (1e-5, 1e-5), D.float32: (1e-5, 1e-5)}


def _complex_dtype(a):
    return np.complex128 if a.dtype == np.float64 else np.complex64


def _complex_ref(re_, im):
    return (re_.astype(np.float64) + 1j * im.astype(np.float64)).astype(_complex_dtype(re_))


def _polar_ref(r, theta):
    z = r.astype(np.float64) * np.exp(1j * theta.astype(np.float64))
    return z.astype(_complex_dtype(r))


def _real_ref(a):
    return np.real(a).copy()


def _imag_ref(a):
    return np.imag(a).copy()


def _conj_ref(a):
    return np.conj(a)


def _same_ref(a):
    return a.copy()


def _angle_ref(a):
    if a.dtype.kind == "c":
        return np.angle(a).astype(np.float64 if a.dtype == np.complex128 else np.float32)
    out = a.dtype if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else np.float32
    x = a.astype(np.float64)
    return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)).astype(out)


def _pair_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device), make_tensor((3, 4), dtype, device))
    yield SampleInput(make_tensor((3, 1), dtype, device), make_tensor((4,), dtype, device))
    yield SampleInput(make_tensor((), dtype, device), make_tensor((2,), dtype, device))
    yield SampleInput(make_tensor((0, 2), dtype, device), make_tensor((0, 2), dtype, device))
    yield SampleInput(make_tensor((3, 4), dtype, device, noncontiguous=True),
                      make_tensor((4, 3), dtype, device).t())


def _unary_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device))
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device))
    yield SampleInput(make_tensor((2, 3, 4), dtype, device, noncontiguous=True))
    yield SampleInput(make_tensor((4, 3), dtype, device).t())


def _angle_samples(info, device, dtype):
    yield from _unary_samples(info, device, dtype)
    if dtype.is_floating_point:
        yield SampleInput(fnx.tensor([-2.0, -0.0, 0.0, 3.0, float("nan"), -float("inf")],
                                     dtype=dtype, device=device))


def _pair_errors():
    def errors(info, device):
        f = make_tensor((2,), D.float32, device)
        yield ErrorInput(SampleInput(make_tensor((2,), D.int64, device),
                                     make_tensor((2,), D.int64, device)), RuntimeError,
                         "Expected both inputs to be Half, Float or Double tensors but got "
                         "Long and Long")
        yield ErrorInput(SampleInput(f, make_tensor((2,), D.float64, device)), RuntimeError,
                         "Expected object of scalar type Float but got scalar type Double "
                         "for second argument")
        yield ErrorInput(SampleInput(f, make_tensor((3,), D.float32, device)), RuntimeError,
                         re.escape("must match"))
    return errors


def _imag_errors(info, device):
    yield ErrorInput(SampleInput(make_tensor((2,), D.float32, device)), RuntimeError,
                     re.escape("imag is not implemented for tensors with non-complex dtypes."))


register(
    OpInfo(C.complex, _complex_ref, PARTS, _pair_samples, tols=CTOLS,
           error_inputs=_pair_errors()),
    OpInfo(C.polar, _polar_ref, PARTS, _pair_samples, tols=CTOLS,
           error_inputs=_pair_errors()),
    OpInfo(C.real, _real_ref, COMPLEX + PARTS, _unary_samples),
    OpInfo(C.imag, _imag_ref, COMPLEX, _unary_samples, error_inputs=_imag_errors),
    OpInfo(C.angle, _angle_ref, COMPLEX + FLOATS + INTS, _angle_samples, tols=CTOLS),
    OpInfo(C.conj, _conj_ref, COMPLEX + PARTS + INTS, _unary_samples),
    OpInfo(C.conj_physical, _conj_ref, COMPLEX + PARTS + INTS, _unary_samples),
    OpInfo(C.resolve_conj, _same_ref, COMPLEX + PARTS, _unary_samples),
)
