"""Reverse-mode automatic differentiation, as ``torch.autograd``.

Tensors that require grad carry their backend's Autograd dispatch key, so every op on them
reaches an autograd kernel (``kernels.py``) that runs the op below and records a ``Node``
(``graph.py``) holding what the op's derivative formula needs. Formulas live at each op's
definition site (``fnx/ir/aten/``, ``fnx/ir/prims/``) and are written with fnx ops, so
they run on every backend, can be traced (a compiled training step records them) and can be
differentiated again (``create_graph=True``). Ops without a formula are differentiated
through their decomposition.

>>> import fnx
>>> w = fnx.tensor([[1., 2.], [3., 4.]], requires_grad=True)
>>> loss = (w @ w).sum()
>>> loss.backward()
>>> w.grad
tensor([[ 7., 11.],
        [ 9., 13.]])
"""
from ..core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                              is_inference_mode_enabled, no_grad, set_grad_enabled)
from .anomaly import detect_anomaly, set_detect_anomaly
from . import tensor_methods  # noqa: F401  (binds Tensor.backward, register_hook, ...)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import Node
from .variable import Variable
from . import functional

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Node",
           "detect_anomaly", "set_detect_anomaly", "Variable", "functional"]
