"""``fnx.nn.utils``: gradient clipping, flat parameter vectors, ``rnn`` (packed sequences),
parametrizations (``parametrize``, ``parametrizations``; the older hook-based
``weight_norm``/``spectral_norm``), conv/linear + batch-norm ``fusion``, ``stateless`` and
``prune``."""
from . import fusion, parametrizations, parametrize, prune, rnn, stateless
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                        get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init import skip_init
from .memory_format import (convert_conv2d_weight_memory_format,
                            convert_conv3d_weight_memory_format)
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["rnn", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "parametrize", "parametrizations",
           "stateless", "fusion", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "weight_norm", "remove_weight_norm",
           "spectral_norm", "remove_spectral_norm", "prune", "skip_init", "clip_grads_with_norm_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
