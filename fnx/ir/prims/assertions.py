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

``check_linalg_info`` passes a factorization's result through and raises
``LinAlgError`` (``fnx.linalg.LinAlgError``) for the first matrix whose LAPACK ``info``
is not 0: ``"{api}: (Batch element {i}): {message}"``, each ``{}`` in ``message`` replaced
by that info (no batch element when ``info`` is 0-dim):

>>> prims.check_linalg_info(fnx.ones(2, 2, 2), fnx.tensor([0, 3], dtype=fnx.int32), "f",
...                         "minor {} failed")
Traceback (most recent call last):
    ...
fnx.linalg.LinAlgError: f: (Batch element 1): minor 3 failed
"""
from __future__ import annotations

from ..registry import TensorMeta, derivative, nondifferentiable
from ._common import prim
from .checks import INT, check_category, check_tensor, fail

__all__ = ["check_in_range", "check_linalg_info", "ERRORS", "LinAlgError", "range_error",
           "linalg_error", "check_failure"]


class LinAlgError(RuntimeError):
    """A linear-algebra function met a singular or non-positive-definite matrix
    (``torch.linalg.LinAlgError``)."""


LinAlgError.__module__ = "fnx.linalg"   # where users meet it, as torch.linalg.LinAlgError

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


# ----------------------------------------------------------------------------- linalg info

def _check_linalg_info_meta(self, info, api, message):
    n = "check_linalg_info"
    check_tensor(n, "self", self)
    check_tensor(n, "info", info)
    check_category(n, info, INT, "info")
    return TensorMeta(tuple(self.shape), self.dtype)


check_linalg_info = prim("check_linalg_info(Tensor self, Tensor info, str api, str message) "
                         "-> Tensor", _check_linalg_info_meta)


@derivative(check_linalg_info)
def _check_linalg_info_backward(grad):
    return grad, None


def linalg_error(api: str, message: str, value: int, index: int, batched: bool) -> Exception:
    """The exception a failed ``check_linalg_info`` raises, on every backend."""
    where = f"(Batch element {index}): " if batched else ""
    return LinAlgError(f"{api}: {where}{message.replace('{}', str(value))}")


def check_failure(check, value: int, index: int) -> Exception:
    """The exception of one failed check as a compiled program records it (``check`` from
    ``fnx.lower.jax_compile.graph_program``: ``(error, message)`` for ``check_in_range``,
    ``("LinAlgError", api, message, batched)`` for ``check_linalg_info``; ``value`` the
    first bad value or info, ``index`` its flat position)."""
    if check[0] == "LinAlgError":
        return linalg_error(check[1], check[2], value, index, bool(check[3]))
    return range_error(check[0], check[1], value)
