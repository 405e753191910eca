"""``fnx.special``: special functions, as ``torch.special``.

Most names are the top-level functions under their SciPy-style names, as in PyTorch
(``expit`` is ``fnx.sigmoid``, ``gammaln`` is ``fnx.lgamma``, ``psi`` is ``fnx.digamma``,
``gammainc`` is ``fnx.igamma``); the others call the ``special_*`` ATen ops
(``fnx/ir/aten/special.py``).

>>> import fnx
>>> fnx.special.ndtr(fnx.tensor([0.0]))
tensor([0.5000])
"""
from __future__ import annotations

from . import api
from .core.tensor import Tensor
from .ops import aten

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta", "bessel_j0",
           "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]

digamma = psi = api.digamma
erf = api.erf
erfc = api.erfc
erfinv = api.erfinv
exp2 = api.exp2
expit = api.sigmoid
expm1 = api.expm1
gammainc = api.igamma
gammaincc = api.igammac
gammaln = api.lgamma
i0 = api.i0
log1p = api.log1p
logit = api.logit
logsumexp = api.logsumexp
multigammaln = api.mvlgamma
polygamma = api.polygamma
sinc = api.sinc
xlogy = api.xlogy


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """Rounds half to even to ``decimals`` decimal places, as ``torch.special.round``.

    >>> import fnx
    >>> fnx.special.round(fnx.tensor([0.5, 1.5, 1.25]), decimals=1)
    tensor([0.5000, 1.5000, 1.2000])
    """
    if decimals == 0:
        return api.round(input, out=out)
    r = aten.round.decimals(input, decimals=decimals)
    return r if out is None else out.copy_(r)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, as ``torch.special.softmax``.

    >>> import fnx
    >>> fnx.special.softmax(fnx.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return api.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, as ``torch.special.log_softmax``.

    >>> import fnx
    >>> fnx.special.log_softmax(fnx.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    return api.log_softmax(input, dim, dtype=dtype)


def _special(name, summary, example, result):
    op = getattr(aten, f"special_{name}")

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return op.default(input) if out is None else op.out(input, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{summary}, as ``torch.special.{name}``.\n\n    >>> import fnx\n"
                  f"    >>> fnx.special.{name}(fnx.tensor({example}))\n    {result}\n")
    return fn


def _binary_call(op, input, other, out):
    """``op`` (a binary ``torch.special`` op) on ``input``, a Python number allowed."""
    if not isinstance(input, Tensor):
        input = api.math._wrapped(input)
    return op.default(input, other) if out is None else op.out(input, other, out=out)


def _special2(name, summary, example, result):
    op = getattr(aten, f"special_{name}")

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        return _binary_call(op, input, other, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{summary}, as ``torch.special.{name}``; either argument may be a "
                  f"Python number.\n\n    >>> import fnx\n    >>> fnx.special.{name}{example}\n"
                  f"    {result}\n")
    return fn


entr = _special("entr", "The elementwise entropy ``-x log(x)`` (0 at 0, -inf below)",
                "[0.5, 0.0]", "tensor([0.3466, 0.0000])")
erfcx = _special("erfcx", "The scaled complementary error function ``exp(x^2) erfc(x)``",
                 "[0.0]", "tensor([1.])")
i0e = _special("i0e", "The exponentially scaled modified Bessel function of the first kind "
                      "of order 0, ``exp(-|x|) I0(x)``", "[0.0]", "tensor([1.])")
i1 = _special("i1", "The modified Bessel function of the first kind of order 1", "[0.0]",
              "tensor([0.])")
i1e = _special("i1e", "The exponentially scaled modified Bessel function of the first kind "
                      "of order 1, ``exp(-|x|) I1(x)``", "[0.0]", "tensor([0.])")
ndtr = _special("ndtr", "The standard normal distribution function", "[0.0]",
                "tensor([0.5000])")
ndtri = _special("ndtri", "The inverse of ``ndtr`` (the standard normal quantile function)",
                 "[0.5]", "tensor([0.])")
log_ndtr = _special("log_ndtr", "``log(ndtr(x))``, accurate far into the lower tail",
                    "[0.0]", "tensor([-0.6931])")
xlog1py = _special2("xlog1py", "``input * log1p(other)``, 0 where ``input`` is 0 (unless "
                               "``other`` is NaN)", "(fnx.tensor([0.0, 2.0]), 0.0)",
                    "tensor([0., 0.])")
zeta = _special2("zeta", "The Hurwitz zeta function ``sum_k (k + other)^-input``",
                 "(fnx.tensor([2.0]), 1.0)", "tensor([1.6449])")

# Bessel and Airy functions (fnx/ir/aten/bessel.py); no derivatives, as PyTorch
bessel_j0 = _special("bessel_j0", "The Bessel function of the first kind of order 0",
                     "[1.0]", "tensor([0.7652])")
bessel_j1 = _special("bessel_j1", "The Bessel function of the first kind of order 1",
                     "[1.0]", "tensor([0.4401])")
bessel_y0 = _special("bessel_y0", "The Bessel function of the second kind of order 0 (NaN "
                                  "below 0)", "[1.0]", "tensor([0.0883])")
bessel_y1 = _special("bessel_y1", "The Bessel function of the second kind of order 1 (NaN "
                                  "below 0)", "[1.0]", "tensor([-0.7812])")
modified_bessel_i0 = _special("modified_bessel_i0", "The modified Bessel function of the "
                              "first kind of order 0", "[1.0]", "tensor([1.2661])")
modified_bessel_i1 = _special("modified_bessel_i1", "The modified Bessel function of the "
                              "first kind of order 1", "[1.0]", "tensor([0.5652])")
modified_bessel_k0 = _special("modified_bessel_k0", "The modified Bessel function of the "
                              "second kind of order 0 (NaN below 0)", "[1.0]",
                              "tensor([0.4210])")
modified_bessel_k1 = _special("modified_bessel_k1", "The modified Bessel function of the "
                              "second kind of order 1 (NaN below 0)", "[1.0]",
                              "tensor([0.6019])")
scaled_modified_bessel_k0 = _special("scaled_modified_bessel_k0", "``exp(x) K0(x)``, the "
                                     "exponentially scaled modified Bessel function of the "
                                     "second kind of order 0", "[1.0]", "tensor([1.1445])")
scaled_modified_bessel_k1 = _special("scaled_modified_bessel_k1", "``exp(x) K1(x)``, the "
                                     "exponentially scaled modified Bessel function of the "
                                     "second kind of order 1", "[1.0]", "tensor([1.6362])")
spherical_bessel_j0 = _special("spherical_bessel_j0", "The spherical Bessel function of the "
                               "first kind of order 0, ``sin(x) / x``", "[1.0]",
                               "tensor([0.8415])")
airy_ai = _special("airy_ai", "The Airy function Ai", "[1.0]", "tensor([0.1353])")


def _polynomial(name, what, example, result):
    op = getattr(aten, f"special_{name}")

    def fn(input, n, *, out: Tensor | None = None) -> Tensor:
        return _binary_call(op, input, n, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{what} ``P_n(input)``, as ``torch.special.{name}``: ``n`` an order "
                  f"tensor or number (floats truncated; a negative order gives 0), "
                  f"broadcast with ``input``; PyTorch's recurrence and special cases, no "
                  f"derivative.\n\n    >>> import fnx\n    >>> fnx.special.{name}{example}"
                  f"\n    {result}\n")
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t",
                                     "The Chebyshev polynomial of the first kind",
                                     "(fnx.tensor([0.5]), 3)", "tensor([-1.])")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u",
                                     "The Chebyshev polynomial of the second kind",
                                     "(fnx.tensor([0.5]), 3)", "tensor([-1.])")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v",
                                     "The Chebyshev polynomial of the third kind",
                                     "(fnx.tensor([0.5]), 2)", "tensor([-1.])")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w",
                                     "The Chebyshev polynomial of the fourth kind",
                                     "(fnx.tensor([0.5]), 2)", "tensor([1.])")
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind on [0, 1]",
    "(fnx.tensor([0.75]), 3)", "tensor([-1.])")
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind on [0, 1]",
    "(fnx.tensor([0.75]), 3)", "tensor([-1.])")
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind on [0, 1]",
    "(fnx.tensor([0.75]), 2)", "tensor([-1.])")
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind on [0, 1]",
    "(fnx.tensor([0.75]), 2)", "tensor([1.])")
hermite_polynomial_h = _polynomial("hermite_polynomial_h",
                                   "The physicists' Hermite polynomial",
                                   "(fnx.tensor([0.5]), 2)", "tensor([-1.])")
hermite_polynomial_he = _polynomial("hermite_polynomial_he",
                                    "The probabilists' Hermite polynomial",
                                    "(fnx.tensor([0.5]), 2)", "tensor([-0.7500])")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "The Laguerre polynomial",
                                    "(fnx.tensor([0.5]), 2)", "tensor([0.1250])")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "The Legendre polynomial",
                                    "(fnx.tensor([0.5]), 2)", "tensor([-0.1250])")
