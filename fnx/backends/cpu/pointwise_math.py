"""NumPy kernels of the pointwise math functions (``fnx.ir.aten.pointwise_math``), with
their in-place and ``out=`` forms; ``nextafter`` runs its prim (NumPy has no bfloat16 loop)."""
from __future__ import annotations

import numpy as np

from ...ir.aten import pointwise_math as M
from ._core import data, kernel, wrap
from .special import kernel_of, no_extra, register_family


def _heaviside(a, v):
    return np.where(a == 0, v, a > 0)      # NaN gives 0 (NumPy's heaviside gives NaN)


def _lcm(a, b):
    # PyTorch's |a / gcd * b| in the operands' dtype (NumPy's lcm wraps before the abs)
    g = np.gcd(a, b)
    with np.errstate(all="ignore"):
        return np.where(g == 0, 0, np.abs(a // np.where(g == 0, 1, g) * b)).astype(a.dtype)


_FNS = {"hypot": np.hypot, "copysign": np.copysign, "logaddexp": np.logaddexp,
        "logaddexp2": np.logaddexp2}

for _name, _fn in _FNS.items():
    register_family(M.OPS[_name], kernel_of(M.OPS[_name], _fn, (0, 1), no_extra))
register_family(M.gcd, kernel_of(M.gcd, np.gcd, (0, 1), no_extra))
register_family(M.lcm, kernel_of(M.lcm, _lcm, (0, 1), no_extra))
register_family(M.heaviside, kernel_of(M.heaviside, _heaviside, (0, 1), no_extra))
_next = M.OPS["nextafter"]
register_family(_next, lambda ks, self, other: _next.decomposition(self, other))


@kernel(M.frexp)
def _frexp(ks, self):
    m, e = M.frexp.meta(self)
    a = data(self, "frexp")
    wide = a.astype(np.float32) if a.dtype == m.dtype.numpy and a.dtype.itemsize < 4 else a
    mant, exp = np.frexp(wide)          # C's frexp: (x, 0) for 0, inf and NaN
    return wrap(mant.astype(m.dtype.numpy), m.dtype), wrap(exp.astype(np.int32), e.dtype)
