"""``histogram`` (function and Tensor method, PyTorch's signature)."""
from __future__ import annotations

from ..core.tensor import Tensor, tensor_method
from ..ir.aten import histogram as H
from .reduction import return_types

__all__ = ["histogram"]

return_types.make("histogram", ["hist", "bin_edges"])


@tensor_method()
def histogram(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: a histogram of ``input``'s values in ``bins`` equal bins over
    ``range`` (the data's min and max by default), or in the bins between the increasing
    edges of a 1-D tensor ``bins``; ``weight`` weighs each element, ``density`` normalizes
    to a density (integral 1).  Values outside the edges are not counted; the last edge is
    in the last bin.

    >>> import fnx
    >>> fnx.histogram(fnx.tensor([1., 2., 1., 4.]), 3).hist
    tensor([2., 1., 1.])
    >>> fnx.histogram(fnx.tensor([1., 2., 1.]), fnx.tensor([0., 1.5, 4.])).hist
    tensor([2., 1.])
    """
    if isinstance(bins, Tensor):
        r = H.histogram_bins_tensor(input, bins, weight=weight, density=density)
    else:
        r = H.histogram_bin_ct(input, bins, range=None if range is None else list(range),
                               weight=weight, density=density)
    return return_types.histogram(r)
