"""Neural-network operators, one module per family: activations (with softmax), dropout,
embedding, normalization, convolution, pooling, padding, sampling (grid sampling,
col2im), losses (with distances), attention, the real FFTs, upsampling (every
``interpolate`` mode) and the pixel/channel shuffles.  Importing a family defines its ops.

Two levels live here.  Core ATen ops (tag "core") carry a meta function that does
PyTorch's validation and a decomposition written with fnx ops, registered as their
CompositeExplicitAutograd kernel (``explicit=True``); a few also get a direct NumPy
kernel in ``fnx/backends/cpu/nn.py`` where the decomposition is slow in eager.  The
aten-level ops users call (``softmax.int``, ``conv2d``, ``cross_entropy_loss``, ...)
only have a decomposition to core ops, which is their CompositeImplicitAutograd kernel.

Derivative formulas (``@derivative``) follow each op they differentiate; they are written
with fnx ops, so they run on every backend and can be differentiated again.  Ops without
one (the aten-level convenience ops, pads, upsampling, ...) are differentiated through
their decomposition.  Multi-output ops whose first output users commonly modify in place
(``relu_`` after batch norm) recompute their statistics from the input rather than name
``result``, because naming ``result`` saves every output and pins its version.
"""
# In the order the ops were defined before the split (registration order is kept).
from . import (activation, dropout, embedding, normalization, conv, pooling, padding,
               sampling, loss, attention, fft, upsample, shuffle, pooling_max)

__all__ = ["activation", "dropout", "embedding", "normalization", "conv", "pooling", "padding",
           "sampling", "loss", "attention", "fft", "upsample", "shuffle", "pooling_max"]
