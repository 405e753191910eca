"""``fnx.nn``: modules, parameters, functional ops and initializers, as ``torch.nn``.

>>> import fnx
>>> from fnx import nn
>>> _ = fnx.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
>>> loss = nn.MSELoss()(model(fnx.randn(20, 10)), fnx.randn(20, 5))
>>> loss.shape, loss.dtype
(fnx.Size([]), fnx.float32)
"""
from . import attention, functional, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel     # torch.nn.DataParallel
from .parameter import Buffer, Parameter

__all__ = ["Parameter", "Buffer", "DataParallel", "functional", "init", "parallel",
           "utils", "attention"] + _modules_all
