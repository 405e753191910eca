"""Special functions (``torch.special`` and their ``torch.*`` names): gamma-family functions
(``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, ``igamma``/``igammac``, ``special_zeta``),
error functions (``erfc``, ``special_erfcx``, the normal distribution's ``special_ndtr``,
``special_ndtri``, ``special_log_ndtr``), modified Bessel functions (``i0``, ``special_i0e``,
``special_i1``, ``special_i1e``), and ``xlogy``, ``special_xlog1py``, ``logit``,
``special_entr``, ``sinc``.

Each op is a row: schema, promotion (integers compute in the default float dtype), its
in-place and ``out=`` variants; below come each one's decomposition to prims (with
PyTorch's values where a lax prim differs: poles, infinite parameters) and its derivative
formula (PyTorch's). Complex inputs are refused, as PyTorch's CPU kernels do.
"""
from __future__ import annotations

import math

from ...ops import aten, prims
from .. import refs
from ..promotion import INT_TO_FLOAT
from ..registry import decomposition, defop, derivative
from ..variants import VARIANTS
from ._common import inplace_meta, not_implemented, out_meta, pointwise_meta
from .elementwise import full_like

__all__ = ["UNARY", "BINARY", "FAMILIES", "polygamma", "polygamma_out", "mvlgamma", "logit",
           "real_meta", "pointwise_family"]

ATEN = ("pointwise",)

# name, has an in-place variant (PyTorch's special_* ops have none)
UNARY = [("lgamma", True), ("digamma", True), ("erfc", True), ("i0", True), ("sinc", True),
         ("special_i0e", False), ("special_i1", False), ("special_i1e", False),
         ("special_entr", False), ("special_ndtr", False), ("special_ndtri", False),
         ("special_log_ndtr", False), ("special_erfcx", False)]
BINARY = [("xlogy", "Tensor", True), ("special_xlog1py", "default", False),
          ("special_zeta", "default", False), ("igamma", "default", True),
          ("igammac", "default", True)]
# ``FAMILIES[functional op] = {"functional", "inplace", "out"}``
FAMILIES = {}


def real_meta(name, n, kind=INT_TO_FLOAT, floats_only=False):
    """The pointwise meta of ``kind`` refusing complex results (and, ``floats_only``,
    integer ones), with PyTorch's "not implemented" error."""
    base = pointwise_meta(kind, n)

    def meta(*args, **kwargs):
        m = base(*args, **kwargs)
        if m.dtype.is_complex or (floats_only and not m.dtype.is_floating_point):
            raise not_implemented(f"{name}_cpu", m.dtype)
        return m
    meta.__name__ = f"_{name}_meta"
    return meta


_real_meta = real_meta


def pointwise_family(name, overload, args, meta, inplace, kind=INT_TO_FLOAT):
    """``name.overload``, ``name_.overload`` (when ``inplace``) and ``name.out``, recorded
    in ``FAMILIES`` and ``VARIANTS``."""
    ov = "" if overload == "default" else f".{overload}"
    op = defop(f"{name}{ov}({args}) -> Tensor", tags=ATEN, promotion=kind, meta=meta)
    fam = {"functional": op}
    if inplace:
        a = args.replace("Tensor self", "Tensor(a!) self", 1)
        fam["inplace"] = defop(f"{name}_{ov}({a}) -> Tensor(a!)", tags=("inplace", "pointwise"),
                               promotion=kind, meta=inplace_meta(meta, f"{name}_"))
    kw = ", *" if "*" not in args else ""
    fam["out"] = defop(f"{name}.out({args}{kw}, Tensor(a!) out) -> Tensor(a!)",
                       tags=("out", "pointwise"), promotion=kind,
                       meta=out_meta(meta, name))
    FAMILIES[op] = fam
    VARIANTS[op] = fam
    return op


for _name, _inplace in UNARY:
    pointwise_family(_name, "default", "Tensor self", _real_meta(_name, 1), _inplace)
for _name, _ov, _inplace in BINARY:
    pointwise_family(_name, _ov, "Tensor self, Tensor other", _real_meta(_name, 2), _inplace)


def _polygamma_meta(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _real_meta("polygamma", 1)(self)


def _mvlgamma_meta(self, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _real_meta("mvlgamma", 1)(self)


def _logit_meta(self, eps=None):
    return _real_meta("logit", 1)(self)


# polygamma's in-place form takes (self, n): the functional op comes first in its schema
polygamma = defop("polygamma(int n, Tensor self) -> Tensor", tags=ATEN, promotion=INT_TO_FLOAT,
                  meta=_polygamma_meta)
polygamma_out = defop("polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
                      tags=("out", "pointwise"), promotion=INT_TO_FLOAT,
                      meta=out_meta(_polygamma_meta, "polygamma"))
mvlgamma = pointwise_family("mvlgamma", "default", "Tensor self, int p", _mvlgamma_meta, True)
logit = pointwise_family("logit", "default", "Tensor self, float? eps=None", _logit_meta, True)


def _op(name):
    return getattr(aten, name).default


# ============================================================================ decompositions
# ``refs.promote`` hands the bodies float operands of one shape (half types as float32).

_INF = math.inf
_SQRT1_2 = math.sqrt(0.5)
_SQRT_PI = math.sqrt(math.pi)


def _checked(op, fn):
    """``fn`` after the op's meta: PyTorch's refusals (complex inputs) on every backend."""
    def checked(*args, **kwargs):
        op.meta(*args, **kwargs)
        return fn(*args, **kwargs)
    checked.__name__ = fn.__name__
    return checked


def _unary_decomposition(name):
    op = _op(name)
    return lambda fn: decomposition(op)(_checked(op, refs.promote(INT_TO_FLOAT,
                                                                  ("self",))(fn)))


def _binary_decomposition(name, overload="default"):
    op = getattr(getattr(aten, name), overload)
    return lambda fn: decomposition(op)(_checked(op, refs.promote(INT_TO_FLOAT,
                                                                  ("self", "other"))(fn)))


def _c(x, v):
    return full_like(x, v)


def _is(x, v):
    return prims.eq(x, _c(x, v))


def _isnan(x):
    return prims.ne(x, x)


@_unary_decomposition("lgamma")
def _lgamma(self):
    return prims.lgamma(self)


def _digamma_of(x):
    # PyTorch: digamma(+-0) = -+inf (lax: NaN); the negative integers stay NaN
    return prims.where(_is(x, 0), prims.where(prims.signbit(x), _c(x, _INF), _c(x, -_INF)),
                       prims.digamma(x))


@_unary_decomposition("digamma")
def _digamma(self):
    return _digamma_of(self)


@_unary_decomposition("erfc")
def _erfc(self):
    return prims.erfc(self)


def _scaled_up(x, scaled):
    """e^|x| times an exponentially scaled Bessel function (NaN at +-inf, where e^|x| is
    inf and the scaled function 0: PyTorch's and SciPy's value there)."""
    return prims.mul(prims.exp(prims.abs(x)), scaled)


@_unary_decomposition("i0")
def _i0(self):
    return _scaled_up(self, prims.bessel_i0e(self))


@_unary_decomposition("special_i1")
def _i1(self):
    return _scaled_up(self, prims.bessel_i1e(self))


@_unary_decomposition("special_i0e")
def _i0e(self):
    return prims.bessel_i0e(self)


@_unary_decomposition("special_i1e")
def _i1e(self):
    return prims.bessel_i1e(self)


@_unary_decomposition("sinc")
def _sinc(self):
    px = prims.mul(self, _c(self, math.pi))
    zero = _is(self, 0)
    safe = prims.where(zero, _c(self, 1), px)
    return prims.where(zero, _c(self, 1), prims.div(prims.sin(safe), safe))


@_unary_decomposition("special_entr")
def _entr(self):
    # -x log x for x > 0, 0 at 0, -inf below 0, NaN stays NaN
    pos = prims.gt(self, _c(self, 0))
    safe = prims.where(pos, self, _c(self, 1))
    value = prims.neg(prims.mul(self, prims.log(safe)))
    rest = prims.where(_is(self, 0), _c(self, 0),
                       prims.where(_isnan(self), self, _c(self, -_INF)))
    return prims.where(pos, value, rest)


@_unary_decomposition("special_ndtr")
def _ndtr(self):
    return prims.mul(_c(self, 0.5), prims.erfc(prims.mul(self, _c(self, -_SQRT1_2))))


@_unary_decomposition("special_ndtri")
def _ndtri(self):
    # sqrt(2) erfinv(2p - 1): exact at 0, 1/2 and 1, less accurate than PyTorch's Cephes
    # rational approximations deep in the tails (p below ~1e-8)
    two_p_minus_1 = prims.sub(prims.mul(self, _c(self, 2)), _c(self, 1))
    return prims.mul(_c(self, math.sqrt(2)), prims.erf_inv(two_p_minus_1))


def _erfcx_of(x):
    """exp(x^2) erfc(x): directly below a threshold (where erfc(x) is still a normal number
    of the dtype), above it the asymptotic series 1 / (x sqrt(pi)) sum_k (-1)^k
    (2k-1)!! / (2x^2)^k, whose omitted terms are below the dtype's precision there."""
    wide = x.dtype.itemsize >= 8
    threshold, terms = (10.0, 15) if wide else (5.0, 12)
    direct = prims.mul(prims.exp(prims.mul(x, x)), prims.erfc(x))
    big = prims.gt(x, _c(x, threshold))
    safe = prims.where(big, x, _c(x, threshold + 1))
    y = prims.div(_c(x, 0.5), prims.mul(safe, safe))
    acc = _c(x, 1)
    for k in range(terms, 0, -1):
        acc = prims.sub(_c(x, 1), prims.mul(prims.mul(y, _c(x, 2 * k - 1)), acc))
    series = prims.div(acc, prims.mul(safe, _c(x, _SQRT_PI)))
    return prims.where(big, series, direct)


@_unary_decomposition("special_erfcx")
def _erfcx(self):
    return _erfcx_of(self)


@_unary_decomposition("special_log_ndtr")
def _log_ndtr(self):
    # log(erfcx(-t) / 2) - t^2 for x < -1 (no underflow), log1p(-erfc(t) / 2) above
    t = prims.mul(self, _c(self, _SQRT1_2))
    low = prims.sub(prims.log(prims.mul(_erfcx_of(prims.neg(t)), _c(self, 0.5))),
                    prims.mul(t, t))
    high = prims.log1p(prims.mul(prims.erfc(t), _c(self, -0.5)))
    return prims.where(prims.lt(self, _c(self, -1)), low, high)


def _xlog(log_fn):
    def fn(self, other):
        # 0 where self is 0 (even if log(other) is infinite), NaN where other is NaN
        value = prims.mul(self, log_fn(other))
        out = prims.where(_is(self, 0), _c(value, 0), value)
        return prims.where(_isnan(other), other, out)
    return fn


_binary_decomposition("xlogy", "Tensor")(_xlog(prims.log))
_binary_decomposition("special_xlog1py")(_xlog(prims.log1p))


@_binary_decomposition("special_zeta")
def _zeta(self, other):
    # PyTorch (Cephes): a pole at whole q <= 0 (lax: NaN)
    pole = prims.bitwise_and(prims.le(other, _c(other, 0)),
                             prims.eq(other, prims.floor(other)))
    return prims.where(prims.bitwise_and(pole, prims.gt(self, _c(self, 1))),
                       _c(self, _INF), prims.zeta(self, other))


def _igamma_with(prim, at_infinite_a):
    def fn(self, other):
        # PyTorch: an infinite a gives P = 0 / Q = 1 for finite x (lax: NaN)
        finite_x = prims.isfinite(other)
        inf_a = prims.bitwise_and(_is(self, _INF), finite_x)
        return prims.where(inf_a, _c(self, at_infinite_a), prim(self, other))
    return fn


_binary_decomposition("igamma")(_igamma_with(prims.igamma, 0))
_binary_decomposition("igammac")(_igamma_with(prims.igammac, 1))


@decomposition(polygamma)
def _polygamma(n, self):
    _polygamma_meta(n, self)
    return _polygamma_promoted(n, self)


@refs.promote(INT_TO_FLOAT, ("self",))
def _polygamma_promoted(n, self):
    if n == 0:
        return _digamma_of(self)
    # psi^(n)(+inf) = 0 (SciPy's value; lax gives NaN)
    return prims.where(_is(self, _INF), _c(self, 0), prims.polygamma(_c(self, n), self))


@decomposition(mvlgamma)
def _mvlgamma(self, p):
    """sum_{j < p} lgamma(x - j / 2) + p (p - 1) / 4 log(pi). (The eager kernel also checks
    PyTorch's domain, every element > (p - 1) / 2; a traced graph cannot look at values.)"""
    _mvlgamma_meta(self, p)
    return _mvlgamma_promoted(self, p)


@refs.promote(INT_TO_FLOAT, ("self",))
def _mvlgamma_promoted(self, p):
    acc = _c(self, p * (p - 1) / 4 * math.log(math.pi))
    for j in range(p):
        acc = prims.add(acc, prims.lgamma(prims.sub(self, _c(self, j / 2))))
    return acc


@decomposition(logit)
def _logit(self, eps=None):
    _logit_meta(self, eps)
    return _logit_promoted(self, eps)


@refs.promote(INT_TO_FLOAT, ("self",))
def _logit_promoted(self, eps=None):
    x = self
    if eps is not None and eps >= 0:        # PyTorch clamps to [eps, 1 - eps] (NaN stays)
        lo, hi = _c(x, eps), _c(x, 1 - eps)
        x = prims.where(prims.lt(x, lo), lo, prims.where(prims.gt(x, hi), hi, x))
    return prims.log(prims.div(x, prims.sub(_c(x, 1), x)))


# ============================================================================ derivatives
# PyTorch's formulas (derivatives.yaml), written with ATen ops.

def _where(cond, a, b):
    return aten.where.self(cond, a, b)


@derivative(_op("lgamma"))
def _lgamma_backward(grad, self):
    return aten.mul.Tensor(grad, aten.digamma.default(self))


@derivative(_op("digamma"))
def _digamma_backward(grad, self):
    return aten.mul.Tensor(grad, polygamma(1, self))


@derivative(polygamma)
def _polygamma_backward(grad, n, self):
    return aten.mul.Tensor(grad, polygamma(n + 1, self))


@derivative(mvlgamma)
def _mvlgamma_backward(grad, self, p):
    acc = aten.digamma.default(self)
    for j in range(1, p):
        acc = aten.add.Tensor(acc, aten.digamma.default(aten.sub.Scalar(self, j / 2)))
    return aten.mul.Tensor(grad, acc)


@derivative(_op("erfc"))
def _erfc_backward(grad, self):
    e = aten.exp.default(aten.neg.default(aten.mul.Tensor(self, self)))
    return aten.mul.Tensor(grad, aten.mul.Scalar(e, -2.0 / _SQRT_PI))


@derivative(_op("special_erfcx"))
def _erfcx_backward(grad, self, result):
    # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
    d = aten.sub.Scalar(aten.mul.Scalar(aten.mul.Tensor(self, result), 2.0), 2.0 / _SQRT_PI)
    return aten.mul.Tensor(grad, d)


@derivative(_op("i0"))
def _i0_backward(grad, self):
    return aten.mul.Tensor(grad, aten.special_i1.default(self))


@derivative(_op("special_i0e"))
def _i0e_backward(grad, self, result):
    d = aten.sub.Tensor(aten.special_i1e.default(self),
                        aten.mul.Tensor(aten.sign.default(self), result))
    return aten.mul.Tensor(grad, d)


def _over_x(value, self):
    """value / x, with x = 0 replaced (the caller masks that point)."""
    zero = aten.eq.Scalar(self, 0)
    return aten.div.Tensor(value, _where(zero, aten.ones_like.default(self), self))


@derivative(_op("special_i1"))
def _i1_backward(grad, self, result):
    # I1' = I0 - I1 / x, 1/2 at 0
    d = aten.sub.Tensor(aten.i0.default(self), _over_x(result, self))
    return aten.mul.Tensor(grad, _where(aten.eq.Scalar(self, 0), 0.5, d))


@derivative(_op("special_i1e"))
def _i1e_backward(grad, self, result):
    d = aten.sub.Tensor(aten.special_i0e.default(self), aten.add.Tensor(
        aten.mul.Tensor(aten.sign.default(self), result), _over_x(result, self)))
    return aten.mul.Tensor(grad, _where(aten.eq.Scalar(self, 0), 0.5, d))


@derivative(_op("sinc"))
def _sinc_backward(grad, self):
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0
    px = aten.mul.Scalar(self, math.pi)
    num = aten.sub.Tensor(aten.mul.Tensor(px, aten.cos.default(px)), aten.sin.default(px))
    d = _over_x(aten.div.Tensor(num, _where(aten.eq.Scalar(self, 0),
                                             aten.ones_like.default(self), px)), self)
    return aten.mul.Tensor(grad, _where(aten.eq.Scalar(self, 0), 0.0, d))


@derivative(_op("special_entr"))
def _entr_backward(grad, self):
    return aten.mul.Tensor(grad, aten.neg.default(aten.add.Scalar(aten.log.default(self), 1)))


@derivative(_op("special_ndtr"))
def _ndtr_backward(grad, self):
    d = aten.mul.Scalar(aten.exp.default(aten.mul.Scalar(aten.mul.Tensor(self, self), -0.5)),
                        1 / math.sqrt(2 * math.pi))
    return aten.mul.Tensor(grad, d)


@derivative(_op("special_ndtri"))
def _ndtri_backward(grad, result):
    d = aten.mul.Scalar(aten.exp.default(aten.mul.Scalar(aten.mul.Tensor(result, result), 0.5)),
                        math.sqrt(2 * math.pi))
    return aten.mul.Tensor(grad, d)


@derivative(_op("special_log_ndtr"))
def _log_ndtr_backward(grad, self, result):
    # pdf(x) / ndtr(x) = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)
    e = aten.exp.default(aten.neg.default(aten.add.Tensor(
        result, aten.mul.Scalar(aten.mul.Tensor(self, self), 0.5))))
    return aten.mul.Tensor(grad, aten.mul.Scalar(e, 1 / math.sqrt(2 * math.pi)))


@derivative(aten.xlogy.Tensor)
def _xlogy_backward(grad, self, other, needs_input_grad):
    gs = go = None
    if needs_input_grad[0]:
        nonzero = aten._to_copy.default(aten.ne.Scalar(self, 0), dtype=grad.dtype)
        gs = aten.mul.Tensor(grad, aten.xlogy.Tensor(nonzero, other))
    if needs_input_grad[1]:
        go = aten.mul.Tensor(grad, aten.div.Tensor(self, other))
    return gs, go


@derivative(_op("special_xlog1py"))
def _xlog1py_backward(grad, self, other, needs_input_grad):
    gs = go = None
    if needs_input_grad[0]:
        nonzero = aten._to_copy.default(aten.ne.Scalar(self, 0), dtype=grad.dtype)
        gs = aten.mul.Tensor(grad, aten.special_xlog1py.default(nonzero, other))
    if needs_input_grad[1]:
        go = aten.mul.Tensor(grad, aten.div.Tensor(self, aten.add.Scalar(other, 1)))
    return gs, go


def _not_implemented(what):
    return RuntimeError(f"the derivative for '{what}' is not implemented.")


@derivative(_op("special_zeta"))
def _zeta_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("zeta: input")
    d = aten.mul.Tensor(self, aten.special_zeta.default(aten.add.Scalar(self, 1), other))
    return None, aten.mul.Tensor(grad, aten.neg.default(d))


def _igamma_grad(self, other):
    # d/dx P(a, x) = exp((a - 1) log x - x - lgamma(a))
    return aten.exp.default(aten.sub.Tensor(aten.sub.Tensor(
        aten.mul.Tensor(aten.sub.Scalar(self, 1), aten.log.default(other)), other),
        aten.lgamma.default(self)))


@derivative(_op("igamma"))
def _igamma_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("igamma: input")
    return None, aten.mul.Tensor(grad, _igamma_grad(self, other))


@derivative(_op("igammac"))
def _igammac_backward(grad, self, other, needs_input_grad):
    if needs_input_grad[0]:
        raise _not_implemented("igammac: input")
    return None, aten.neg.default(aten.mul.Tensor(grad, _igamma_grad(self, other)))


@derivative(logit)
def _logit_backward(grad, self, eps):
    d = aten.div.Tensor(grad, aten.mul.Tensor(self, aten.rsub.Scalar(self, 1)))
    if eps is None or eps < 0:
        lo, hi, outside = 0.0, 1.0, math.nan
    else:
        lo, hi, outside = eps, 1.0 - eps, 0.0
    out = aten.logical_or.default(aten.lt.Scalar(self, lo), aten.gt.Scalar(self, hi))
    return _where(out, outside, d)


