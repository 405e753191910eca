"""Variable-length batches for the recurrent layers: ``PackedSequence`` and the functions
that pack, pad and unpad them, as ``torch.nn.utils.rnn``.

A packed batch is time-major: ``data`` holds, for each time step ``t``, the ``t``-th
element of the ``batch_sizes[t]`` sequences still running, longest sequences first.
``batch_sizes`` is a CPU int64 tensor, read as Python ints (it fixes the shapes).
"""
from __future__ import annotations

from ... import api as fnx
from ...core.tensor import Tensor
from .._packed_sequence import PackedSequence, batch_sizes_list, invert_permutation

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D {lengths.device.type} {lengths.dtype} tensor")
        return batch_sizes_list(lengths)
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """``batch_sizes[t]``: how many of the (decreasing) ``lengths`` exceed ``t``."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])] if lengths else []


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose
    sequence ``b`` has ``lengths[b]`` valid steps. With ``enforce_sorted`` the lengths must
    decrease; else the batch is sorted here and the order is kept in ``sorted_indices``.

    >>> import fnx
    >>> from fnx.nn.utils.rnn import pack_padded_sequence
    >>> x = fnx.tensor([[1., 4.], [2., 5.], [3., 0.]])      # (T=3, B=2), lengths 3 and 2
    >>> pack_padded_sequence(x, [3, 2]).data
    tensor([1., 4., 2., 5., 3.])
    """
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    sorted_indices = unsorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lens)), key=lambda b: -lens[b])     # stable
        inverse = [0] * len(order)
        for i, b in enumerate(order):
            inverse[b] = i
        lens = [lens[b] for b in order]
        sorted_indices = fnx.tensor(order, dtype=fnx.int64, device=input.device)
        unsorted_indices = fnx.tensor(inverse, dtype=fnx.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    batch = input.shape[batch_dim]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if batch_first:
        input = input.transpose(0, 1)
    if lens and lens[0] > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lens[0]} exceeds the "
                           f"{input.shape[0]} time steps of the input")
    sizes = _batch_sizes(lens)
    data = fnx.cat([input[t, :b] for t, b in enumerate(sizes)])
    return PackedSequence(data, fnx.tensor(sizes, dtype=fnx.int64), sorted_indices,
                          unsorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undoes ``pack_padded_sequence``: returns the padded batch (in the original order) and
    the lengths (a CPU int64 tensor); ``total_length`` pads the time dim further.

    >>> import fnx
    >>> from fnx.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> padded, lengths = pad_packed_sequence(
    ...     pack_sequence([fnx.tensor([1., 2.]), fnx.tensor([3.])]), batch_first=True)
    >>> padded, lengths
    (tensor([[1., 2.],
            [3., 0.]]), tensor([2, 1]))
    """
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = batch_sizes_list(batch_sizes)
    max_len, max_batch = len(sizes), sizes[0]
    if total_length is None:
        total_length = max_len
    elif total_length < max_len:
        raise ValueError(f"Expected total_length to be at least the length of the longest "
                         f"sequence in input, but got total_length={total_length} and max "
                         f"sequence length being {max_len}")
    trailing = tuple(data.shape[1:])
    steps = []
    for chunk, b in zip(data.split(sizes), sizes):
        if b < max_batch:
            chunk = fnx.cat([chunk, chunk.new_full((max_batch - b,) + trailing, padding_value)])
        steps.append(chunk)
    padded = fnx.stack(steps)
    if total_length > max_len:
        padded = fnx.cat([padded, data.new_full((total_length - max_len, max_batch) + trailing,
                                                padding_value)])
    lengths = fnx.tensor([sum(1 for s in sizes if s > b) for b in range(max_batch)],
                         dtype=fnx.int64)
    if unsorted_indices is not None:
        padded = padded.index_select(1, unsorted_indices)
        lengths = lengths.index_select(0, unsorted_indices.cpu())
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors ``(L_i, *)`` of different lengths into ``(max L, B, *)``
    (``(B, max L, *)`` with ``batch_first``), filling with ``padding_value`` on
    ``padding_side``.

    >>> import fnx
    >>> from fnx.nn.utils.rnn import pad_sequence
    >>> pad_sequence([fnx.tensor([1, 2]), fnx.tensor([3])], batch_first=True)
    tensor([[1, 2],
            [3, 0]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: sequence {i} has trailing dims "
                               f"{list(s.shape[1:])}, but sequence 0 has {list(trailing)}")
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        n = max_len - s.shape[0]
        if n:
            fill = s.new_full((n,) + trailing, padding_value)
            s = fnx.cat([s, fill] if padding_side == "right" else [fill, s])
        rows.append(s)
    return fnx.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``pad_sequence`` stacked, cut to ``lengths``."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors ``(L_i, *)`` (decreasing lengths unless
    ``enforce_sorted=False``): ``pack_padded_sequence(pad_sequence(sequences), lengths)``.

    >>> import fnx
    >>> from fnx.nn.utils.rnn import pack_sequence
    >>> pack_sequence([fnx.tensor([1.]), fnx.tensor([2., 3.])], enforce_sorted=False).data
    tensor([2., 1., 3.])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a ``PackedSequence`` holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
