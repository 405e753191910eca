"""``fnx.amp``: automatic mixed precision, as ``torch.amp``.

``autocast`` runs the ops of a region in float16/bfloat16 where that is safe and fast
(``fnx.core.autocast_mode``; the per-op policy is ``fnx.ir.autocast_policy``), and
``GradScaler`` scales the loss so float16 gradients do not underflow. ``fnx.cpu.amp`` and
``fnx.cuda.amp`` hold the same with the device fixed, as in PyTorch.

>>> import fnx
>>> with fnx.amp.autocast("cpu"):
...     y = fnx.ones(2, 3) @ fnx.ones(3, 2)
>>> y.dtype
fnx.bfloat16
"""
from ..core.autocast_mode import autocast, is_autocast_available
from . import cuda_amp
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "is_autocast_available", "GradScaler", "OptState", "cuda_amp"]
