"""PyTorch's flat-weight recurrent functions ``torch.lstm``/``gru``/``rnn_tanh``/``rnn_relu``
(the ``input`` overloads: a padded tensor, not a packed sequence) and the one-step cells
``torch.lstm_cell``/``gru_cell``/``rnn_tanh_cell``/``rnn_relu_cell``.

They run the layers' own machinery (``fnx/nn/modules/rnn.py``): the input projection as
one matmul, then one ``prims.rnn_scan`` per layer and direction; a cell is one ``_step``.
``params`` holds, per layer and direction, ``w_ih, w_hh`` then ``b_ih, b_hh`` when
``has_biases`` (then ``w_hr`` for a projected LSTM), the order of ``LSTM._flat_weights``.

>>> import fnx
>>> h = fnx.rnn_tanh_cell(fnx.ones(1, 2), fnx.zeros(1, 1), fnx.ones(1, 2), fnx.ones(1, 1))
>>> h
tensor([[0.9640]])
"""
from __future__ import annotations

from .. import api as fnx
from ..ops import prims as _p
from . import functional as F
from .modules.rnn import _step

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]


def _layers(mode, input, h0, c0, params, has_biases, num_layers, dropout, train,
            bidirectional, batch_first):
    if isinstance(input, (list, tuple)) or not hasattr(input, "ndim"):
        raise TypeError(f"{mode.lower()}: the packed-sequence (data, batch_sizes) form is not "
                        f"supported; pass a padded input tensor")
    if input.ndim != 3:
        raise RuntimeError(f"{mode.lower()}: input must have 3 dimensions, got {input.ndim}")
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    groups = num_layers * dirs
    if len(params) == groups * (per + 1) and mode == "LSTM":
        per += 1                                          # with projections (w_hr)
    elif len(params) != groups * per:
        raise RuntimeError(f"{mode.lower()}: expected {groups * per} parameters for "
                           f"{num_layers} layer(s), {dirs} direction(s) and "
                           f"has_biases={has_biases}, got {len(params)}")
    x = input.transpose(0, 1) if batch_first else input
    batch = x.shape[1]
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = list(params[k * per:(k + 1) * per])
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if per in (3, 5) else None
            gi = F.linear(x, w_ih, b_ih)
            ck = c0[k] if c0 is not None else fnx.zeros(batch, 0, dtype=x.dtype,
                                                        device=x.device)
            out, h, c = _p.rnn_scan(gi, h0[k], ck, w_hh, b_hh, w_hr, None, mode, d == 1)
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = outs[0] if dirs == 1 else fnx.cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, training=True)
    if batch_first:
        x = x.transpose(0, 1)
    return x, fnx.stack(h_n), (fnx.stack(c_n) if c0 is not None else None)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    """A multi-layer LSTM over ``input`` from ``hx = (h0, c0)``; returns
    ``(output, h_n, c_n)``, as ``torch.lstm``."""
    h0, c0 = hx
    return _layers("LSTM", input, h0, c0, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A multi-layer GRU; returns ``(output, h_n)``, as ``torch.gru``."""
    return _layers("GRU", input, hx, None, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)[:2]


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first):
    """A multi-layer Elman RNN with tanh; returns ``(output, h_n)``, as ``torch.rnn_tanh``."""
    return _layers("RNN_TANH", input, hx, None, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)[:2]


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first):
    """A multi-layer Elman RNN with ReLU; returns ``(output, h_n)``, as ``torch.rnn_relu``."""
    return _layers("RNN_RELU", input, hx, None, params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first)[:2]


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step from ``hx = (h, c)``; returns ``(h', c')``, as ``torch.lstm_cell``."""
    h, c = hx
    return _step("LSTM", F.linear(input, w_ih, b_ih), h, c, w_hh, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step; returns ``h'``, as ``torch.gru_cell``."""
    return _step("GRU", F.linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``tanh(x w_ih^T + b_ih + h w_hh^T + b_hh)``, as ``torch.rnn_tanh_cell``."""
    return _step("RNN_TANH", F.linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``relu(x w_ih^T + b_ih + h w_hh^T + b_hh)``, as ``torch.rnn_relu_cell``."""
    return _step("RNN_RELU", F.linear(input, w_ih, b_ih), hx, None, w_hh, b_hh)[0]
