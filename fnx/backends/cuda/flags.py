"""``fnx.backends.cuda.matmul``: the flags of ``torch.backends.cuda.matmul``.

``allow_tf32`` is the float32 precision of matrix products in fnx's programs
(``fnx.lower.precision``: ``True`` allows TF32, ``'high'``; ``False``, the default as in
PyTorch, is full float32). The reduced-precision-reduction flags are accepted and kept:
XLA chooses how half-precision products accumulate.

>>> import fnx
>>> fnx.backends.cuda.matmul.allow_tf32
False
"""
from __future__ import annotations

from ...lower import precision

__all__ = ["matmul"]


class _Matmul:
    """The ``matmul`` flags object (attributes are read and set as PyTorch's)."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return precision.get_precision("matmul") != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        precision.set_precision("matmul", "high" if value else "highest")

    def __repr__(self):
        return f"<fnx.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _Matmul()
