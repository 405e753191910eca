"""The prims: a small closed op set modelled on ``jax.lax`` that every core op decomposes to.

Prims are explicit: no implicit broadcasting or type promotion, no Python scalars in
tensor slots, no negative dims and no ``-1`` in shapes (callers normalize).  Each prim's
meta function enforces that (with ``checks``) and raises ``RuntimeError("prims.<name>:
<problem>")``; the eager kernels call the same meta function first, so every backend
checks alike.  Semantics follow ``jax.lax`` (so the JAX lowering is one lax call per prim),
with the exceptions the family modules spell out.

One module per family holds each prim's definition, meta function and derivative formula
side by side; this package re-exports every prim by name (``prims.exp``) and ``OPS``, every
prim by name as a dict.

>>> import fnx
>>> prims = fnx.ops.prims
>>> prims.add(fnx.tensor([1, 2]), fnx.tensor([3, 4])).tolist()
[4, 6]
>>> prims.broadcast_in_dim(fnx.tensor([1, 2]), [3, 2], [1]).shape
fnx.Size([3, 2])
>>> from fnx.ir import prims as P
>>> P.exp is prims.exp.default is P.OPS["exp"]
True
"""
from __future__ import annotations

from . import (assertions, checks, contraction, creation, ctc, data_dependent, elementwise, fft,
               gather_scatter, layout, linalg, random, recurrence, reduction, scan, sorting,
               special)
from .assertions import *  # noqa: F403
from ._common import OPS, POINTWISE, PRIM, RNG
from .checks import category_name, check_dims, check_tensor, scalar_for
from .contraction import *  # noqa: F403
from .creation import *  # noqa: F403
from .ctc import *  # noqa: F403
from .data_dependent import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .fft import *  # noqa: F403
from .gather_scatter import *  # noqa: F403
from .layout import *  # noqa: F403
from .linalg import *  # noqa: F403
from .random import *  # noqa: F403
from .recurrence import *  # noqa: F403
from .reduction import *  # noqa: F403
from .scan import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special import *  # noqa: F403
from . import bessel
from .bessel import *  # noqa: F403
from . import polynomials
from .polynomials import *  # noqa: F403

__all__ = ["OPS", "PRIM", "POINTWISE", "RNG", "check_tensor", "check_dims", "category_name",
           "scalar_for", "checks",
           *(name for m in (elementwise, layout, reduction, scan, creation, contraction,
                            gather_scatter, sorting, data_dependent, fft, linalg, random,
                            recurrence, special, assertions, bessel, ctc,
                            polynomials)
             for name in m.__all__)]
