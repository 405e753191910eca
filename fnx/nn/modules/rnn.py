"""Recurrent layers ``RNN``, ``LSTM``, ``GRU`` and their cells, as PyTorch's: the same
arguments, parameter names and shapes, default initialization and errors.

Each layer projects the whole input sequence through ``weight_ih`` at once (one matmul),
then runs the recurrence with one ``prims.rnn_scan`` per layer and direction: a NumPy
loop eagerly, one ``jax.lax.scan`` under ``fnx.compile`` (so the program does not grow
with the sequence length), backpropagation through time as ``prims.rnn_scan_backward``.
A ``PackedSequence`` runs padded, with its lengths (each sequence's state holds past its
end). The cells are one step of tensor ops.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import api as fnx
from ...ir.prims.recurrence import RNN_MODES as _GATES
from ...ops import prims as _p
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .._packed_sequence import PackedSequence, batch_sizes_list
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

def _step(mode, gi, h, c, w_hh, b_hh, w_hr=None):
    """One step of a cell: ``gi`` is the input's projection (with ``bias_ih``); returns the
    new ``(h, c)`` (``c`` is None but for LSTM)."""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, c
    if mode == "GRU":
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = (i_r + h_r).sigmoid()
        z = (i_z + h_z).sigmoid()
        n = (i_n + r * h_n).tanh()
        return n + z * (h - n), None              # (1 - z) * n + z * h
    pre = gi + gh
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


def _unpack(data, batch_sizes):
    """A packed batch as a padded ``(T, B, *)`` one (zeros past each sequence's end), its
    lengths, and the index that takes the padded rows (flattened) back to packed order."""
    steps, batch, total = len(batch_sizes), batch_sizes[0], data.shape[0]
    offsets = [0]
    for b in batch_sizes[:-1]:
        offsets.append(offsets[-1] + b)
    # padded (t, b) reads packed row offsets[t] + b, or the zero row appended at ``total``
    to_padded = [offsets[t] + b if b < batch_sizes[t] else total
                 for t in range(steps) for b in range(batch)]
    to_packed = [t * batch + b for t in range(steps) for b in range(batch_sizes[t])]
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]

    def idx(values):
        return fnx.tensor(values, dtype=fnx.int64, device=data.device)
    padded = fnx.cat([data, data.new_zeros(1, *data.shape[1:])]).index_select(0, idx(to_padded))
    return padded.reshape(steps, batch, *data.shape[1:]), idx(lengths), idx(to_packed)


def _check_dropout(dropout):
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")


def _check_size(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be greater than zero")


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the stacked, optionally bidirectional
    parameters and the layer-by-layer forward (``mode``: ``'RNN_TANH'``, ``'RNN_RELU'``,
    ``'LSTM'`` or ``'GRU'``)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        _check_dropout(dropout)
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, "
                          f"so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        _check_size("hidden_size", hidden_size)
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        kw = {"device": device, "dtype": dtype}
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_input = input_size if layer == 0 else real_hidden * self._directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, Parameter(fnx.empty(*shape, **kw)))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _directions(self):
        return 2 if self.bidirectional else 1

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Does nothing: the weights are never packed into one buffer here."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")

        def get(kind):
            return getattr(self, kind + suffix, None)
        return (get("weight_ih"), get("bias_ih") if self.bias else None,
                (get("weight_hh"), get("bias_hh") if self.bias else None,
                 get("weight_hr") if self.proj_size > 0 else None))

    def _name(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _check_input(self, input, expected_dim):
        if input.ndim != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.ndim}")
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, which=""):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected hidden{which} size {expected}, got {list(hx.shape)}")

    def _forward(self, input, hx):
        """``input``: a ``PackedSequence`` or a batched time-major/batch-first tensor;
        ``hx``: ``None``, ``h0``, or ``(h0, c0)`` (batched). Returns ``(output, h_n, c_n)``."""
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            self._check_input(data, 2)
            x, lengths, to_packed = _unpack(data, batch_sizes_list(batch_sizes_t))
        else:
            self._check_input(input, 3)
            x = input.transpose(0, 1) if self.batch_first else input
            sorted_indices = unsorted_indices = None
        batch = x.shape[1]
        dirs = self._directions
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_shape = (self.num_layers * dirs, batch, real_hidden)
        c_shape = (self.num_layers * dirs, batch, self.hidden_size)
        if hx is None:
            h0 = fnx.zeros(h_shape, dtype=x.dtype, device=x.device)
            c0 = fnx.zeros(c_shape, dtype=x.dtype, device=x.device) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if sorted_indices is not None:        # hx follows the caller's batch order
                h0 = h0.index_select(1, sorted_indices)
                c0 = None if c0 is None else c0.index_select(1, sorted_indices)
            self._check_hidden(h0, h_shape, "[0]" if lstm else "")
            if lstm:
                self._check_hidden(c0, c_shape, "[1]")
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            dir_outs = []
            for d in range(dirs):
                w_ih, b_ih, recurrent = self._weights(layer, d)
                gi = F.linear(x, w_ih, b_ih)
                k = layer * dirs + d
                ck = c0[k] if lstm else fnx.zeros(batch, 0, dtype=x.dtype, device=x.device)
                out, h, c = _p.rnn_scan(gi, h0[k], ck, *recurrent, lengths, self.mode, d == 1)
                dir_outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = dir_outs[0] if dirs == 1 else fnx.cat(dir_outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        h_n = fnx.stack(h_n)
        c_n = fnx.stack(c_n) if lstm else None
        if packed:
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = None if c_n is None else c_n.index_select(1, unsorted_indices)
            x = x.reshape(-1, x.shape[-1]).index_select(0, to_packed)
            return PackedSequence(x, batch_sizes_t, sorted_indices, unsorted_indices), h_n, c_n
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n, c_n

    def _unbatched(self, input, hx):
        """Unbatched ``(L, H_in)`` input: adds the batch dim to ``input`` and ``hx`` (checking
        ``hx``'s rank against the input's, as PyTorch); returns ``(input, hx, batched)``."""
        if isinstance(input, PackedSequence):
            return input, hx, True
        name = self._name()
        if input.ndim not in (2, 3):
            shape = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D"
                             f"{shape} instead")
        batched = input.ndim == 3
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if hx is not None:
            if self.mode == "LSTM":
                h, c = hx
                if h.ndim != want or c.ndim != want:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({h.ndim}-D, {c.ndim}-D) tensors")
                if not batched:
                    hx = (h.unsqueeze(1), c.unsqueeze(1))
            else:
                if hx.ndim != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                       f"{hx.ndim}-D tensor")
                if not batched:
                    hx = hx.unsqueeze(1)
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, hx, batched

    def _finish(self, output, hidden, batched):
        if batched:
            return output, hidden
        output = output.squeeze(0 if self.batch_first else 1)
        if isinstance(hidden, tuple):
            return output, tuple(h.squeeze(1) for h in hidden)
        return output, hidden.squeeze(1)

    def forward(self, input, hx=None):
        input, hx, batched = self._unbatched(input, hx)
        output, h_n, c_n = self._forward(input, hx)
        return self._finish(output, (h_n, c_n) if self.mode == "LSTM" else h_n, batched)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (``relu`` with
    ``nonlinearity='relu'``), stacked ``num_layers`` deep, optionally bidirectional.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``;
    ``forward(input, hx=None)`` returns ``(output, h_n)``.

    >>> import fnx
    >>> rnn = fnx.nn.RNN(10, 20, 2)
    >>> out, h_n = rnn(fnx.randn(5, 3, 10))
    >>> out.shape, h_n.shape
    (fnx.Size([5, 3, 20]), fnx.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args,
                         **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gates ``i, f, g, o`` (that order in ``weight_ih``):
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (times ``weight_hr^T`` with
    ``proj_size > 0``).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)``;
    ``forward(input, (h_0, c_0)=None)`` returns ``(output, (h_n, c_n))``.

    >>> import fnx
    >>> lstm = fnx.nn.LSTM(10, 20, 2, batch_first=True)
    >>> out, (h_n, c_n) = lstm(fnx.randn(3, 5, 10))
    >>> out.shape, h_n.shape, c_n.shape
    (fnx.Size([3, 5, 20]), fnx.Size([2, 3, 20]), fnx.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit, gates ``r, z, n`` (that order in ``weight_ih``):
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``.

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)``; ``forward(input,
    hx=None)`` returns ``(output, h_n)``.

    >>> import fnx
    >>> gru = fnx.nn.GRU(4, 6, bidirectional=True)
    >>> out, h_n = gru(fnx.randn(7, 4))                       # unbatched (L, H_in)
    >>> out.shape, h_n.shape
    (fnx.Size([7, 12]), fnx.Size([2, 6]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """What the cells share: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``
    initialized U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), and the input checks."""

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(fnx.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(fnx.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(fnx.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(fnx.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, states):
        """Checks ``input`` and the states (``None`` or tensors); returns the batched
        input, the batched states (zeros for ``None``) and whether the input was batched."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             f"instead")
        for s in states:
            if s is not None and s.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {s.ndim}D "
                                 f"instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        out = []
        for i, s in enumerate(states):
            if s is None:
                s = fnx.zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                              device=input.device)
            elif not batched:
                s = s.unsqueeze(0)
            if s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                                   f"batch size {s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
            out.append(s)
        return input, out, batched

    def _cell(self, input, h, c):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return _step(self._mode, gi, h, c, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``).

    >>> import fnx
    >>> cell = fnx.nn.RNNCell(10, 20)
    >>> cell(fnx.randn(3, 10)).shape
    fnx.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, (hx,))
        h, _ = self._cell(input, h, None)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, (h, c)=None)`` returns ``(h', c')``.

    >>> import fnx
    >>> cell = fnx.nn.LSTMCell(10, 20)
    >>> h, c = cell(fnx.randn(3, 10))
    >>> h.shape, c.shape
    (fnx.Size([3, 20]), fnx.Size([3, 20]))
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prepare(input, (None, None) if hx is None else hx)
        h, c = self._cell(input, h, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = (1 - z) * n + z * h``.

    >>> import fnx
    >>> fnx.nn.GRUCell(10, 20)(fnx.randn(3, 10)).shape
    fnx.Size([3, 20])
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, (hx,))
        h, _ = self._cell(input, h, None)
        return h if batched else h.squeeze(0)
