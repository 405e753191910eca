"""``fnx.set_float32_matmul_precision`` and ``fnx.get_float32_matmul_precision``, as
PyTorch's: the float32 precision of matrix products in compiled programs
(``fnx.lower.precision``; ``fnx.backends.cuda.matmul.allow_tf32`` is the same setting).
"""
from __future__ import annotations

from ..lower import precision as _precision

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision"]


def set_float32_matmul_precision(precision: str) -> None:
    """``'highest'`` (full float32, the default), ``'high'`` (TF32 allowed) or
    ``'medium'`` (bfloat16 allowed) for float32 matrix products, as
    ``torch.set_float32_matmul_precision``; programs compiled before are dropped.

    >>> import fnx
    >>> fnx.set_float32_matmul_precision("high")
    >>> fnx.get_float32_matmul_precision(), fnx.backends.cuda.matmul.allow_tf32
    ('high', True)
    >>> fnx.set_float32_matmul_precision("highest")
    """
    _precision.set_precision("matmul", precision)


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision: ``'highest'``, ``'high'`` or ``'medium'``.

    >>> import fnx
    >>> fnx.get_float32_matmul_precision()
    'highest'
    """
    return _precision.get_precision("matmul")
