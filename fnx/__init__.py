"""fnx: PyTorch-style eager tensors through a key-based dispatcher, compiled with JAX/XLA.

``import fnx`` boots the layers in order (``fnx._boot``, first), then offers the public
namespace (``fnx.api``) and the subpackages, as ``import torch`` does.

>>> import fnx
>>> x = fnx.ones(2, 3)
>>> (x * 2 + 1).sum()
tensor(18.)
"""
from . import _boot  # noqa: F401  (first: defines every op and registers every kernel)
import importlib as _importlib
import sys as _sys

from . import (accelerator, amp, autograd, compiler, cpu, cuda, distributed, distributions,
               export, fft, func, jit, library, linalg, nn, onnx, ops, optim, profiler, random,
               serialization, sparse, special, utils, version)
from .version import __version__
# the torch.backends-style flags (fnx.backends.cudnn.benchmark, ...): loaded with fnx
from .backends import cudnn as _cudnn, mps as _mps  # noqa: F401
# torch._dynamo / torch._inductor: their config, reset, mark_dynamic, explain (fnx.compile)
from . import _dynamo, _inductor  # noqa: F401
from .api import *  # noqa: F403
from .api import __all__ as _api_all
from .spectral import istft, stft

# torch.cuda.amp: fnx.cuda is a module of a lower layer than amp, so the amp face for
# cuda lives in fnx.amp and is installed here (``from fnx.cuda.amp import GradScaler``).
cuda.amp = amp.cuda_amp
_sys.modules["fnx.cuda.amp"] = amp.cuda_amp
# torch.autograd.profiler: fnx.autograd is a lower layer than the profiler, so its face
# lives in fnx.profiler.legacy and is installed here
from .profiler import legacy as _profiler_legacy  # noqa: E402
autograd.profiler = _profiler_legacy
_sys.modules["fnx.autograd.profiler"] = _profiler_legacy
vmap = func.vmap        # torch.vmap is torch.func.vmap
cond, while_loop = func.cond, func.while_loop      # torch.cond, torch.while_loop
# torch.<loss>(..., reduction: int), conv_tbc, ...: written with nn.functional (L7)
from .nn._aten_forms import *  # noqa: E402, F403
from .nn._aten_forms import __all__ as _aten_forms_all  # noqa: E402
from .nn._rnn_forms import *  # noqa: E402, F403
from .nn._rnn_forms import __all__ as _rnn_forms_all  # noqa: E402

__all__ = ["accelerator", "amp", "autograd", "compiler", "cpu", "cuda", "distributed",
           "distributions", "export",
           "fft", "func", "jit", "vmap", "cond", "while_loop", "library", "linalg", "nn", "onnx",
           "ops",
           "optim", "profiler", "random",
           "serialization", "sparse", "special", "utils", "stft", "istft", "version",
           "__version__"]
__all__ += _api_all + _aten_forms_all + _rnn_forms_all


def __getattr__(name):
    # ``torch.testing`` is there after ``import torch``; fnx.testing holds the OpInfo
    # database (half a second to import), so it is loaded on first use
    if name == "testing":
        return _importlib.import_module("fnx.testing")
    raise AttributeError(f"module 'fnx' has no attribute {name!r}")
