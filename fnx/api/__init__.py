"""The public namespace: what ``import fnx`` offers at its top level, as ``torch.*``.

The functions (``fnx.add``, ``fnx.sum``, ``fnx.zeros``, ...) live in this package, one
module per family; each maps PyTorch's Python signatures onto operator overloads and
binds the matching ``Tensor`` methods, and none computes anything itself. The names of
lower layers that PyTorch also exports at its top (``Tensor``, dtypes, ``no_grad``,
``manual_seed``, ``compile``, ``save``, ...) are gathered here too, so the packages above
(``fnx.nn``, ``fnx.optim``) reach the whole namespace without importing ``fnx`` itself.
"""
import math as _math

from .. import ops
from ..core.autocast_mode import (autocast, autocast_decrement_nesting,
                                  autocast_increment_nesting, clear_autocast_cache,
                                  get_autocast_dtype, is_autocast_cache_enabled,
                                  is_autocast_enabled, set_autocast_cache_enabled,
                                  set_autocast_dtype, set_autocast_enabled)
from ..core.device import device
from ..core.errors import OutOfMemoryError
from ..core.memory_format import (channels_last, channels_last_3d, contiguous_format,
                                  legacy_contiguous_format, memory_format, preserve_format)
from ..core.dtype import (bfloat16, bool, can_cast, complex64, complex128, dtype, float16, float32,
                          float64, get_default_dtype, int8, int16, int32, int64, promote_types,
                          result_type, set_default_dtype, uint8)
from ..core.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                              is_inference_mode_enabled, no_grad, set_grad_enabled)
from ..core.random import Generator, default_generator, initial_seed, manual_seed, seed
from ..core.tensor import Size, Tensor
from ..core.type_info import finfo, iinfo
from ..graph.decompose import decompose
from ..lower.frontend import compile
from ..serialization import load, save
from . import (combine, complex_ops, conversion, creation, factorizations, index_ops, indexing,
               linalg, math, nn, order_statistics, pointwise_math, precision, reduction, shape,
               sorting, special, statistics, vision)
from . import aliases, copy_forms, histograms, inplace_forms, matrix_extras, tensor_extras
from . import inplace_views
from . import array_helpers, legacy, legacy_types, windows
from . import quantization, storage
from .quantization import *  # noqa: F403
from .storage import *  # noqa: F403
from . import sparse_tensors
from .sparse_tensors import *  # noqa: F403
from . import finite_differences, foreach, segments
from .foreach import *  # noqa: F403
from .finite_differences import *  # noqa: F403
from .segments import *  # noqa: F403
from .legacy import *  # noqa: F403
from .legacy_types import *  # noqa: F403
from .array_helpers import *  # noqa: F403
from .windows import *  # noqa: F403
from . import lobpcg_solver, lowrank
from .lobpcg_solver import *  # noqa: F403
from .lowrank import *  # noqa: F403
from . import interop, nn_extras, runtime, sampling, sync_batch_norm, symbolic
from .sampling import *  # noqa: F403
from .sync_batch_norm import *  # noqa: F403
from .interop import *  # noqa: F403
from .nn_extras import *  # noqa: F403
from .runtime import *  # noqa: F403
from .aliases import *  # noqa: F403
from .combine import *  # noqa: F403
from .histograms import *  # noqa: F403
from .matrix_extras import *  # noqa: F403
from .complex_ops import *  # noqa: F403
from .conversion import *  # noqa: F403
from .creation import *  # noqa: F403
from .factorizations import *  # noqa: F403
from .index_ops import *  # noqa: F403
from .indexing import *  # noqa: F403
from .inplace_forms import *  # noqa: F403
from .copy_forms import *  # noqa: F403
from .tensor_extras import *  # noqa: F403
from .inplace_views import *  # noqa: F403
from .linalg import *  # noqa: F403
from .math import *  # noqa: F403
from .nn import *  # noqa: F403
from .order_statistics import *  # noqa: F403
from .pointwise_math import *  # noqa: F403
from .precision import *  # noqa: F403
from .reduction import *  # noqa: F403
from .statistics import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special import *  # noqa: F403
from .symbolic import *  # noqa: F403
from .vision import *  # noqa: F403

half, float, double = float16, float32, float64
# PyTorch's constants (torch.inf, torch.pi, x[:, torch.newaxis])
inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

__all__ = (["Tensor", "Size", "device", "dtype", "ops", "decompose", "compile", "save", "load",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
            "is_inference_mode_enabled", "Generator", "default_generator", "initial_seed",
            "manual_seed", "seed", "can_cast", "promote_types", "result_type", "finfo", "iinfo",
            "get_default_dtype", "set_default_dtype", "bool", "uint8", "int8", "int16", "int32",
            "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
            "half", "float", "double", "short", "int", "long", "cfloat", "cdouble",
            "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
            "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
            "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
            "OutOfMemoryError", "memory_format", "contiguous_format", "channels_last",
            "channels_last_3d", "preserve_format", "legacy_contiguous_format", "inf", "nan",
            "pi", "e", "newaxis"]
           + conversion.__all__ + creation.__all__ + factorizations.__all__ + index_ops.__all__
           + indexing.__all__
           + linalg.__all__ + math.__all__ + nn.__all__ + precision.__all__ + reduction.__all__
           + shape.__all__ + sorting.__all__ + statistics.__all__ + special.__all__
           + pointwise_math.__all__ + order_statistics.__all__ + complex_ops.__all__
           + combine.__all__ + vision.__all__ + histograms.__all__ + aliases.__all__
           + nn_extras.__all__ + runtime.__all__ + interop.__all__
           + sync_batch_norm.__all__ + sampling.__all__
           + matrix_extras.__all__ + symbolic.__all__ + inplace_forms.__all__
           + copy_forms.__all__ + tensor_extras.__all__ + inplace_views.__all__
           + array_helpers.__all__ + windows.__all__ + legacy.__all__ + legacy_types.__all__
           + lowrank.__all__ + lobpcg_solver.__all__
           + quantization.__all__ + storage.__all__ + sparse_tensors.__all__
           + finite_differences.__all__ + segments.__all__ + foreach.__all__)
