"""OpInfo entries for the neural-network ops (fnx/ir/aten/nn/), one module per family as
there: softmax and activations, dropout, embedding, normalization, convolution, pooling,
padding, sampling, losses and distances, attention and the real FFTs, core and aten
level.  Importing a family registers its entries.

Every reference is written here in NumPy/SciPy, independently of fnx: direct loops over
output positions and kernel offsets (convolution, pooling, col2im, grid sampling), the
adjoint loops for the ``*_backward`` ops, ``np.pad`` for padding and ``np.fft`` for the
FFTs.  Floating references compute in float64 and round once to PyTorch's result dtype.
They restate PyTorch's CPU semantics where it is particular: NaN wins a max pool (the last
NaN's index), ties keep the first index, integer ``avg_pool2d`` truncates, ``nll_loss``
ignores ``ignore_index`` and its mean over nothing is NaN, bicubic grid sampling applies
the padding mode to each tap and not to the source coordinate, ``hardshrink`` and
``softshrink`` keep NaN.

Samples are small: a few per op and dtype, in float32 and float64, plus int64 for the
core pools, the pads, nearest upsampling and the clamping activations (the aten-level
pooling wrappers are sampled in floats only: their integer path is the core op's).  They
cover what each op's arguments change: strides, padding, dilation, groups, ``ceil_mode``,
``count_include_pad``, unbatched and 0-size batches, reduction modes, ``ignore_index``
and ``label_smoothing``, NaN and infinities.  The random ops (``native_dropout``,
``dropout``, ``feature_dropout``) are ``nondeterministic``: only shapes and dtypes are
compared.  ``scaled_dot_product_attention`` is sampled without dropout, so its values
are compared.

The ``*_backward`` ops are sampled with every ``output_mask`` entry True: the checks
compare tuples of tensors and cannot compare the ``None`` a False entry gives.
"""
# In the order the entries were registered before the split (the database keeps it).
from . import (activation, dropout, embedding, normalization, conv, pooling, padding,
               sampling, loss, attention, fft, upsample, shuffle, pooling_max)

__all__ = ["activation", "dropout", "embedding", "normalization", "conv", "pooling", "padding",
           "sampling", "loss", "attention", "fft", "upsample", "shuffle", "pooling_max"]
