"""``fnx._inductor``: Inductor's ``config``, for PyTorch scripts that set it.

Its switches tune the kernels Inductor generates (autotuning, CUDA graphs, Triton
naming, the FX graph cache). fnx hands its programs to XLA, which picks its own kernels,
so they are accepted with no effect (as ``fnx.compile``'s ``options``); an unknown name is
an AttributeError, so a misspelt one is not silently ignored.

>>> import fnx
>>> fnx._inductor.config.coordinate_descent_tuning = True
>>> fnx._inductor.config.triton.unique_kernel_names = True
>>> fnx._inductor.config.triton.unique_kernel_name = True
Traceback (most recent call last):
...
AttributeError: fnx._inductor.config.triton.unique_kernel_name does not exist
"""
from __future__ import annotations

from .lower.settings import INDUCTOR as config

__all__ = ["config"]
