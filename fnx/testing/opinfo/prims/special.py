"""OpInfo entries of the special-function prims (fnx/ir/prims/special.py), against SciPy.

The Bessel references go through ``scipy.special.iv`` (the unscaled functions) times
``exp(-|x|)``, where the kernels call ``i0e``/``i1e``; polygamma is written from the Hurwitz
zeta function, ``(-1)^(m+1) m! zeta(m + 1, x)`` (``psi`` for m = 0). Samples stay where lax
and SciPy agree (lax gives NaN at some poles and infinite parameters where SciPy gives a
limit: the ATen ops built on these prims state PyTorch's values there).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

import fnx

from ....core import dtype as D
from ....ir import prims as P
from ...database import OpInfo, SampleInput, make_tensor, register
from ._common import wide

_F = (D.float32, D.float64)
_TOLS = {D.float32: (1e-5, 1e-6), D.float64: (1e-10, 1e-12)}


def _same(fn):
    def ref(*arrays):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(wide(a) for a in arrays))).astype(arrays[0].dtype)
    return ref


def _i0e(x):
    # e^-|x| I0(x) decays like 1 / sqrt(2 pi |x|): 0 at +-inf (iv * exp gives inf * 0 there)
    return np.where(np.isinf(x), 0.0, sp.iv(0, x) * np.exp(-np.abs(x)))


def _i1e(x):
    return np.where(np.isinf(x), 0.0, sp.iv(1, x) * np.exp(-np.abs(x)))


def _polygamma(m, x):
    m = np.asarray(m)
    fact = np.vectorize(lambda k: float(math.factorial(int(k))))(m) if m.size else m
    high = (-1.0) ** (m + 1) * fact * sp.zeta(m + 1, x)
    return np.where(m == 0, sp.psi(x), high)


def _unary_samples(info, device, dtype):
    yield SampleInput(make_tensor((3, 4), dtype, device, low=-20, high=20))
    yield SampleInput(make_tensor((), dtype, device))
    yield SampleInput(make_tensor((0, 3), dtype, device))
    yield SampleInput(make_tensor((4, 3), dtype, device).t())
    v = np.array([0.0, 1e-3, -0.5, 3.0, -30.0, 400.0, np.inf, -np.inf, np.nan])
    yield SampleInput(_tensor(v, dtype, device))


def _tensor(values, dtype, device):
    return fnx.tensor(np.asarray(values, np.float64).astype(dtype.numpy), device=device)


def _positive(shape, dtype, device, low=0.1, high=6.0, **kw):
    return make_tensor(shape, dtype, device, low=low, high=high, **kw)


def _igamma_samples(info, device, dtype):
    yield SampleInput(_positive((3, 4), dtype, device), _positive((3, 4), dtype, device))
    yield SampleInput(_positive((), dtype, device), _positive((), dtype, device))
    yield SampleInput(_positive((0, 2), dtype, device), _positive((0, 2), dtype, device))
    yield SampleInput(_positive((3, 4), dtype, device, noncontiguous=True),
                      _positive((4, 3), dtype, device).t())
    # x = 0, a large, x large, x negative (NaN)
    yield SampleInput(_tensor([1.0, 2.5, 50.0, 3.0, 2.0], dtype, device),
                      _tensor([0.0, 1e-3, 40.0, 80.0, -1.0], dtype, device))


def _polygamma_samples(info, device, dtype):
    for shape in ((3, 4), (), (0, 2)):
        m = make_tensor(shape, D.int64, device, low=0, high=4).to(dtype)
        yield SampleInput(m, make_tensor(shape, dtype, device, low=0.2, high=8))
    yield SampleInput(_tensor([0, 1, 2, 3, 1, 0], dtype, device),
                      _tensor([-2.5, -0.5, 1e-2, 30.0, -1.3, 1.0], dtype, device))


def _zeta_samples(info, device, dtype):
    yield SampleInput(_positive((3, 4), dtype, device, low=1.1, high=8),
                      _positive((3, 4), dtype, device))
    yield SampleInput(_positive((), dtype, device, low=1.1, high=8), _positive((), dtype, device))
    yield SampleInput(_positive((0, 2), dtype, device), _positive((0, 2), dtype, device))
    yield SampleInput(_positive((4, 3), dtype, device, low=1.5, high=4).t(),
                      _positive((3, 4), dtype, device, noncontiguous=True))
    # x = 1 (the pole), x < 1 (NaN), q a negative non-integer
    yield SampleInput(_tensor([1.0, 0.5, 2.0, 3.0], dtype, device),
                      _tensor([1.0, 2.0, -1.5, 0.25], dtype, device))


_NO_GRAD = {"grad": "no derivative with respect to the first argument (as PyTorch): the one "
                    "with respect to the second is checked in tests/test_special.py"}

register(
    OpInfo(P.bessel_i0e, _same(_i0e), _F, _unary_samples, tols=_TOLS),
    OpInfo(P.bessel_i1e, _same(_i1e), _F, _unary_samples, tols=_TOLS),
    OpInfo(P.igamma, _same(sp.gammainc), _F, _igamma_samples, tols=_TOLS,
           skips=_NO_GRAD),
    OpInfo(P.igammac, _same(sp.gammaincc), _F, _igamma_samples, tols=_TOLS,
           skips=_NO_GRAD),
    OpInfo(P.polygamma, _same(_polygamma), _F, _polygamma_samples,
           tols={D.float32: (1e-4, 1e-5), D.float64: (1e-9, 1e-10)}, skips=_NO_GRAD),
    OpInfo(P.zeta, _same(sp.zeta), _F, _zeta_samples, tols=_TOLS, skips=_NO_GRAD),
)
