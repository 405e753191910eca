"""The float32 precision of matrix products and convolutions in lowered programs.

PyTorch's ``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32``
(``fnx.backends.cuda.matmul``, ``fnx.backends.cudnn``) and
``set_float32_matmul_precision`` set these. ``'highest'`` is full float32
(``lax.Precision.HIGHEST``), ``'high'`` allows TF32 (``HIGH``), ``'medium'`` bfloat16
(``DEFAULT``); JAX's own default for code outside fnx (``jax_default_matmul_precision``) is
set to match. fnx's default is ``'highest'`` for both, as PyTorch's for matmuls. A change
applies to programs compiled after it (set these at the start of a program, as PyTorch
programs do).

>>> from fnx.lower import precision
>>> precision.get_precision("matmul")
'highest'
"""
from __future__ import annotations

import jax
from jax import lax

__all__ = ["get_precision", "set_precision", "lax_precision"]

_LAX = {"highest": lax.Precision.HIGHEST, "high": lax.Precision.HIGH,
        "medium": lax.Precision.DEFAULT}
_JAX_NAME = {"highest": "float32", "high": "tensorfloat32", "medium": "bfloat16"}
_state = {"matmul": "highest", "conv": "highest"}


def get_precision(kind: str) -> str:
    """``'highest'``, ``'high'`` or ``'medium'`` for ``kind`` ``'matmul'`` or ``'conv'``."""
    return _state[kind]


def set_precision(kind: str, value: str) -> None:
    """Set ``kind``'s float32 precision (and JAX's default for matmuls)."""
    if value not in _LAX:
        raise RuntimeError(f"Invalid precision {value!r}: expected one of 'highest', 'high', "
                           f"'medium'")
    _state[kind] = value
    if kind == "matmul":
        jax.config.update("jax_default_matmul_precision", _JAX_NAME[value])


def lax_precision(kind: str):
    """The ``lax.Precision`` a float32 product of ``kind`` is computed with."""
    return _LAX[_state[kind]]
