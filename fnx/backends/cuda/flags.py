"""``fnx.backends.cuda.matmul`` and the attention flags: those of ``torch.backends.cuda``.

``allow_tf32`` is the float32 precision of matrix products in fnx's programs
(``fnx.lower.precision``: ``True`` allows TF32, ``'high'``; ``False``, the default as in
PyTorch, is full float32). The reduced-precision-reduction flags are accepted and kept:
XLA chooses how half-precision products accumulate.

The ``enable_*_sdp`` flags turn attention backends on and off (shared with
``fnx.nn.attention.sdpa_kernel``; fnx's one attention kernel serves them all:
``fnx.core.sdp_backends``).

>>> import fnx
>>> fnx.backends.cuda.matmul.allow_tf32, fnx.backends.cuda.flash_sdp_enabled()
(False, True)
"""
from __future__ import annotations

import contextlib
import warnings

from ...core import sdp_backends
from ...core.sdp_backends import SDPBackend
from ...lower import precision

__all__ = ["matmul", "enable_flash_sdp", "flash_sdp_enabled", "enable_mem_efficient_sdp",
           "mem_efficient_sdp_enabled", "enable_math_sdp", "math_sdp_enabled",
           "enable_cudnn_sdp", "cudnn_sdp_enabled", "sdp_kernel",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed"]


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


def _flag(backend):
    def enable(enabled: bool) -> None:
        sdp_backends.set_enabled(backend, bool(enabled))

    def is_enabled() -> bool:
        return backend in sdp_backends.enabled()
    return enable, is_enabled


enable_flash_sdp, flash_sdp_enabled = _flag(SDPBackend.FLASH_ATTENTION)
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _flag(SDPBackend.EFFICIENT_ATTENTION)
enable_math_sdp, math_sdp_enabled = _flag(SDPBackend.MATH)
enable_cudnn_sdp, cudnn_sdp_enabled = _flag(SDPBackend.CUDNN_ATTENTION)

_reduction = {"math_sdp": True}


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    """Kept for PyTorch's API: XLA chooses how half-precision attention accumulates."""
    _reduction["math_sdp"] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _reduction["math_sdp"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated form of ``fnx.nn.attention.sdpa_kernel``: the flags given are set inside
    and restored on exit."""
    warnings.warn("fnx.backends.cuda.sdp_kernel() is deprecated; use "
                  "fnx.nn.attention.sdpa_kernel() instead (a list of SDPBackend values)",
                  FutureWarning, stacklevel=3)
    before = sdp_backends.enabled()
    wanted = {SDPBackend.FLASH_ATTENTION: enable_flash, SDPBackend.MATH: enable_math,
              SDPBackend.EFFICIENT_ATTENTION: enable_mem_efficient,
              SDPBackend.CUDNN_ATTENTION: enable_cudnn}
    for b, on in wanted.items():
        sdp_backends.set_enabled(b, bool(on))
    try:
        yield {}
    finally:
        for b in wanted:
            sdp_backends.set_enabled(b, b in before)
