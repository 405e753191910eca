"""``PackedSequence`` and the helpers the recurrent layers share with
``fnx.nn.utils.rnn`` (which re-exports them): kept here so that ``nn.modules`` does not
import ``nn.utils`` (whose parametrizations import ``nn.modules``)."""
from __future__ import annotations

from typing import NamedTuple

from .. import api as fnx
from ..core.meta_array import MetaArray
from ..core.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "batch_sizes_list"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """The sequences of a batch packed time step by time step (made by
    ``pack_padded_sequence`` or ``pack_sequence``; the recurrent layers take and return it).

    ``sorted_indices`` orders the original batch by decreasing length (None when it already
    was); ``unsorted_indices`` is its inverse.

    >>> import fnx
    >>> from fnx.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([fnx.tensor([1., 2., 3.]), fnx.tensor([4., 5.])])
    >>> p.data, p.batch_sizes
    (tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:                   # PackedSequence((data, batch_sizes[, ...]))
            data, batch_sizes, *rest = tuple(data)
            if rest:
                sorted_indices, unsorted_indices = rest
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html"
                             "#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same packing with ``data.to(*args, **kwargs)``; the indices follow ``data``'s
        device, ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def double(self):
        return self.to(dtype=fnx.float64)

    def float(self):
        return self.to(dtype=fnx.float32)

    def half(self):
        return self.to(dtype=fnx.float16)

    def long(self):
        return self.to(dtype=fnx.int64)

    def int(self):
        return self.to(dtype=fnx.int32)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return fnx.argsort(permutation)


def batch_sizes_list(batch_sizes):
    """``batch_sizes`` (or lengths) as Python ints. Under ``fnx.compile`` a
    ``PackedSequence`` made inside the function holds constants; one that came in as an
    argument has no data, and ``int()`` raises the tracer's data-dependence error, so the
    function runs eagerly."""
    if isinstance(batch_sizes._data, MetaArray):
        return [int(b) for b in batch_sizes]
    return [int(b) for b in batch_sizes.tolist()]


# its public home
PackedSequence.__module__ = "fnx.nn.utils.rnn"
