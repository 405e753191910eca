"""The float32 precision of matrix products and convolutions in lowered programs.

PyTorch's ``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32``
(``fnx.backends.cuda.matmul``, ``fnx.backends.cudnn``) and
``set_float32_matmul_precision`` set these. ``'highest'`` is full float32
(``lax.Precision.HIGHEST``), ``'high'`` allows TF32 (``HIGH``), ``'medium'`` bfloat16
(``DEFAULT``); JAX's own default for code outside fnx (``jax_default_matmul_precision``) is
set to match. fnx's default is ``'highest'`` for both, as PyTorch's for matmuls. A change
applies from the next call on: it empties the caches of compiled programs (each cache
registers itself with ``on_change``), so nothing compiled before runs with the old one.

>>> from fnx.lower import precision
>>> precision.get_precision("matmul")
'highest'
"""
from __future__ import annotations

import jax
from jax import lax

__all__ = ["get_precision", "set_precision", "lax_precision", "on_change"]

_LAX = {"highest": lax.Precision.HIGHEST, "high": lax.Precision.HIGH,
        "medium": lax.Precision.DEFAULT}
_JAX_NAME = {"highest": "float32", "high": "tensorfloat32", "medium": "bfloat16"}
_state = {"matmul": "highest", "conv": "highest"}
_listeners = []     # called with no argument after a precision changed


def on_change(fn):
    """Call ``fn()`` after every change of a precision (a cache of compiled programs
    registers its ``clear``); returns ``fn``."""
    _listeners.append(fn)
    return fn


def get_precision(kind: str) -> str:
    """``'highest'``, ``'high'`` or ``'medium'`` for ``kind`` ``'matmul'`` or ``'conv'``."""
    return _state[kind]


def set_precision(kind: str, value: str) -> None:
    """Set ``kind``'s float32 precision (and JAX's default for matmuls)."""
    if value not in _LAX:
        raise RuntimeError(f"Invalid precision {value!r}: expected one of 'highest', 'high', "
                           f"'medium'")
    changed = _state[kind] != value
    _state[kind] = value
    if kind == "matmul":
        jax.config.update("jax_default_matmul_precision", _JAX_NAME[value])
    if changed:
        for fn in _listeners:
            fn()


def lax_precision(kind: str):
    """The ``lax.Precision`` a float32 product of ``kind`` is computed with."""
    return _LAX[_state[kind]]
