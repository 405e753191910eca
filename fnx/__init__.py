"""fnx: PyTorch-style eager tensors through a key-based dispatcher, compiled with JAX/XLA.

``import fnx`` boots the layers in order (``fnx._boot``, first), then offers the public
namespace (``fnx.api``) and the subpackages, as ``import torch`` does.

>>> import fnx
>>> x = fnx.ones(2, 3)
>>> (x * 2 + 1).sum()
tensor(18.)
"""
from . import _boot  # noqa: F401  (first: defines every op and registers every kernel)
from . import (autograd, compiler, cuda, export, library, nn, ops, optim, random, serialization,
               utils)
from .api import *  # noqa: F403
from .api import __all__ as _api_all

__all__ = ["autograd", "compiler", "cuda", "export", "library", "nn", "ops", "optim", "random",
           "serialization", "utils"] + _api_all
