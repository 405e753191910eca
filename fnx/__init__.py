"""fnx: PyTorch-style eager tensors through a key-based dispatcher, compiled with JAX/XLA.

>>> import fnx
>>> x = fnx.ones(2, 3)
>>> (x * 2 + 1).sum()
tensor(18.)
"""
from .core import dtype as _dtype
from .core.device import device
from .core.dtype import (bfloat16, bool, can_cast, complex64, complex128, dtype, float16,
                     float32, float64, get_default_dtype, int8, int16, int32, int64,
                     promote_types, result_type, set_default_dtype, uint8)
from .core.tensor import Size, Tensor

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

# Operators (their one definition site), then the kernels of each backend, then the
# key-generic kernels (ADInplaceOrView, Meta) that read every op's schema.
from .dispatch import defaults as _defaults  # noqa: E402
_defaults.install()
from .ir import aten as _ir_ops  # noqa: E402,F401
from .backends import cpu as _cpu  # noqa: E402,F401
from .keys import inplace_or_view as _inplace_or_view  # noqa: E402
from .backends import meta as _meta  # noqa: E402

from . import ops  # noqa: E402
from .api import *  # noqa: E402,F401,F403
from . import api as _api  # noqa: E402
from . import library, utils  # noqa: E402
from . import autograd, compiler  # noqa: E402
from .autograd import (enable_grad, inference_mode, is_grad_enabled,  # noqa: E402,F401
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd import kernels as _autograd_kernels  # noqa: E402
from .graph.decompose import decompose  # noqa: E402,F401
from .lower.compiled_function import compile  # noqa: E402,F401
from .random import Generator, default_generator, initial_seed, manual_seed, seed  # noqa: E402,F401

_inplace_or_view.register_all()
_meta.register_all()
_autograd_kernels.install()
from .backends import cuda as _cuda_backend  # noqa: E402
_cuda_backend.register()      # the CUDA key's kernels and the Functionalize key's

from . import cuda, nn, optim, random  # noqa: E402
from .serialization import load, save  # noqa: E402,F401

__all__ = ["Tensor", "Size", "device", "dtype", "ops", "library", "decompose", "compile",
           "autograd", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "nn", "optim", "cuda", "save",
           "load"] + _api.__all__
