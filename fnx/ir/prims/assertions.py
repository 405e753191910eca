"""Value checks as prims: a check passes its operand through and raises PyTorch's error
when a value is out of range.

Eager kernels check values as they compute; a traced program has no values, so a
decomposition that must refuse bad data (an out-of-range index or target) routes the
tensor through ``check_in_range``. The CPU kernel checks at once; the JAX lowering
(``fnx.lower.jax_compile``) computes the check inside the jitted program and raises on
the host after it, so compiled programs and the cuda backend refuse what eager refuses.
The op that failed is named by ``message``, which the decomposition writes in that op's
words; ``{}`` in it is replaced by the first bad value (row-major order).

>>> import fnx
>>> prims = fnx.ops.prims
>>> prims.check_in_range(fnx.tensor([0, 2]), 0, 3, "IndexError", "index {} is bad").tolist()
[0, 2]
>>> prims.check_in_range(fnx.tensor([0, 5, 7]), 0, 3, "IndexError", "index {} is bad")
Traceback (most recent call last):
    ...
IndexError: index 5 is bad
"""
from __future__ import annotations

from ..registry import TensorMeta, nondifferentiable
from ._common import prim
from .checks import INT, check_category, check_tensor, fail

__all__ = ["check_in_range", "ERRORS", "range_error"]

# the exception types a check may raise, by the name its schema carries
ERRORS = {"IndexError": IndexError, "RuntimeError": RuntimeError, "ValueError": ValueError}


def _check_in_range_meta(self, low, high, error, message):
    n = "check_in_range"
    check_tensor(n, "self", self)
    check_category(n, self, INT)
    if error not in ERRORS:
        raise fail(n, f"error must be one of {', '.join(ERRORS)}, got {error!r}")
    if message.count("{}") > 1:
        raise fail(n, "message takes at most one {} (the first bad value)")
    return TensorMeta(tuple(self.shape), self.dtype)


check_in_range = prim("check_in_range(Tensor self, int low, int high, str error, str message) "
                      "-> Tensor", _check_in_range_meta)
nondifferentiable(check_in_range)


def range_error(error: str, message: str, bad: int) -> Exception:
    """The exception a failed ``check_in_range`` raises, on every backend."""
    return ERRORS[error](message.replace("{}", str(bad)))
