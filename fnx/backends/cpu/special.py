"""SciPy kernels of the special functions (``fnx.ir.aten.special``), with PyTorch's values
where SciPy's differ (digamma's poles, lgamma(-inf)), and their in-place and ``out=`` forms.

Each kernel takes the result dtype from the op's meta (its promotion and checks), computes
in that dtype (half types in float32, as PyTorch's CPU kernels) and casts back once.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from ...ir.aten import special as S
from ...ir.promotion import opmath_dtype
from ...ops import aten
from ._core import data, register, wrap
from .elementwise import inplace_from, out_from


def _lgamma(a):
    return np.where(a == -np.inf, np.inf, sp.gammaln(a))     # log|gamma(-inf)| = inf


def _digamma(a):
    # PyTorch: digamma(+-0) = -+inf, NaN at the negative integers
    r = sp.psi(a)
    r = np.where((a < 0) & (a == np.floor(a)), np.nan, r)
    return np.where(a == 0, np.where(np.signbit(a), np.inf, -np.inf), r)


def _polygamma(a, n):
    return _digamma(a) if n == 0 else sp.polygamma(n, a)


def _mvlgamma(a, p):
    if np.any(~(a > (p - 1) / 2)):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    acc = np.full(a.shape, p * (p - 1) / 4 * np.log(np.pi), a.dtype)
    for j in range(p):
        acc = acc + sp.gammaln(a - a.dtype.type(j / 2))
    return acc


def _logit(a, eps=None):
    if eps is not None and eps >= 0:
        a = np.where(a < eps, a.dtype.type(eps), np.where(a > 1 - eps, a.dtype.type(1 - eps), a))
    return np.log(a / (1 - a))


def _entr(a):
    return sp.entr(a)


UNARY_FNS = {
    "lgamma": _lgamma, "digamma": _digamma, "erfc": sp.erfc, "i0": sp.i0, "sinc": np.sinc,
    "special_i0e": sp.i0e, "special_i1": sp.i1, "special_i1e": sp.i1e, "special_entr": _entr,
    "special_ndtr": sp.ndtr, "special_ndtri": sp.ndtri, "special_log_ndtr": sp.log_ndtr,
    "special_erfcx": sp.erfcx,
}
BINARY_FNS = {"xlogy": sp.xlogy, "special_xlog1py": sp.xlog1py, "special_zeta": sp.zeta,
              "igamma": sp.gammainc, "igammac": sp.gammaincc}


def _compute(x, dtype, name):
    a = data(x, name)
    return np.asarray(a).astype(opmath_dtype(dtype).numpy, copy=False)


def kernel_of(op, fn, tensors, extra):
    """``fn(*arrays, *extra(args, kwargs))`` on the operands named by position ``tensors``,
    broadcast, in the meta's dtype."""
    def kernel(ks, *args, **kwargs):
        m = op.meta(*args, **kwargs)
        arrays = np.broadcast_arrays(*(_compute(args[i], m.dtype, op.name) for i in tensors))
        with np.errstate(all="ignore"):
            r = fn(*arrays, *extra(args, kwargs))
        return wrap(np.asarray(r).astype(m.dtype.numpy), m.dtype)
    return kernel


def no_extra(args, kwargs):
    return ()


def _checked_first(op, kernel):
    """An in-place kernel that refuses a result ``self`` cannot hold before it computes
    (PyTorch's order: mvlgamma_ on a bool tensor is a cast error, not a domain error)."""
    def checked(ks, self, *args, **kwargs):
        op.meta(self, *args, **kwargs)
        return kernel(ks, self, *args, **kwargs)
    return checked


def register_family(op, kernel):
    fam = S.FAMILIES.get(op, {"functional": op})
    register(op, kernel)
    if "inplace" in fam:
        register(fam["inplace"], _checked_first(fam["inplace"],
                                                inplace_from(kernel, fam["inplace"].name)))
    if "out" in fam:
        register(fam["out"], out_from(kernel, op.name))


for _name, _fn in UNARY_FNS.items():
    _op = getattr(aten, _name).default
    register_family(_op, kernel_of(_op, _fn, (0,), no_extra))
for _name, _fn in BINARY_FNS.items():
    _op = aten.xlogy.Tensor if _name == "xlogy" else getattr(aten, _name).default
    register_family(_op, kernel_of(_op, _fn, (0, 1), no_extra))

_polygamma_kernel = kernel_of(S.polygamma, _polygamma, (1,), lambda a, k: (a[0],))
register(S.polygamma, _polygamma_kernel)
register(S.polygamma_out, out_from(_polygamma_kernel, "polygamma"))
register_family(S.mvlgamma, kernel_of(S.mvlgamma, _mvlgamma, (0,),
                              lambda a, k: (a[1] if len(a) > 1 else k["p"],)))
register_family(S.logit, kernel_of(S.logit, _logit, (0,),
                           lambda a, k: (a[1] if len(a) > 1 else k.get("eps"),)))
