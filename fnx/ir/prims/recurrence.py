"""Recurrence prims: one direction of one recurrent layer over a whole sequence, so a
compiled recurrent network is one loop (``jax.lax.scan``) rather than a copy of the cell
per time step.

``rnn_scan`` runs the cell of ``mode`` (``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"``,
``"GRU"``: PyTorch's gate layouts) over ``gi``, the input's projection ``x @ W_ih^T + b_ih``
of every step, ``(T, B, G)`` with ``G = gates * H``; in time order, or from the last step
back with ``reverse``. ``h0`` is ``(B, P)`` (``P = H``, or the projection size when
``w_hr`` is given, LSTM only); ``c0`` is ``(B, H)`` for LSTM and ``(B, 0)`` otherwise.
Outputs: every step's ``h`` ``(T, B, P)`` (in time order), the final ``h`` and ``c``.

``lengths`` (int64 ``(B,)``, each in ``[0, T]``, or None for all ``T``) gives sequence
``b`` its first ``lengths[b]`` steps only: outside them its state stays as it is (so a
reverse run starts at its own last step, from ``h0``) and its output is zero. This runs
a ``PackedSequence`` batch padded, as one scan.

Its derivative is ``rnn_scan_backward`` (backpropagation through time), whose own
derivative (a second order gradient through the loop) is not provided: it raises.
"""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import prim, zeros
from .checks import FLOAT, INT, check_category, check_tensor, fail

__all__ = ["rnn_scan", "rnn_scan_backward"]

#: gates per mode (the rows of ``w_hh`` are ``gates * H``)
RNN_MODES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check(name, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode):
    """Checks the operands of ``rnn_scan`` (and its backward); returns (T, B, H, P)."""
    if mode not in RNN_MODES:
        raise fail(name, f"mode must be one of {sorted(RNN_MODES)}, got {mode!r}")
    for arg, t in (("gi", gi), ("h0", h0), ("c0", c0), ("w_hh", w_hh), ("b_hh", b_hh),
                   ("w_hr", w_hr)):
        if t is None:
            continue
        check_tensor(name, arg, t)
        check_category(name, t, FLOAT)
        if t.dtype != gi.dtype:
            raise fail(name, f"{arg} has dtype {t.dtype}, gi has {gi.dtype}")
    if gi.ndim != 3 or h0.ndim != 2 or c0.ndim != 2 or w_hh.ndim != 2:
        raise fail(name, "gi must be (T, B, G); h0, c0 and w_hh 2-D")
    steps, batch, g = gi.shape
    gates = RNN_MODES[mode]
    if g % gates:
        raise fail(name, f"gi's last dim {g} is not a multiple of the {gates} gates of {mode}")
    hidden = g // gates
    proj = hidden
    if w_hr is not None:
        if mode != "LSTM":
            raise fail(name, "w_hr (a projection) is only supported for LSTM")
        if w_hr.ndim != 2 or w_hr.shape[1] != hidden:
            raise fail(name, f"w_hr must be (P, {hidden}), got {list(w_hr.shape)}")
        proj = w_hr.shape[0]
    want = {"h0": (batch, proj), "c0": (batch, hidden if mode == "LSTM" else 0),
            "w_hh": (g, proj)}
    for arg, t in (("h0", h0), ("c0", c0), ("w_hh", w_hh)):
        if tuple(t.shape) != want[arg]:
            raise fail(name, f"{arg} must be {list(want[arg])}, got {list(t.shape)}")
    if b_hh is not None and tuple(b_hh.shape) != (g,):
        raise fail(name, f"b_hh must be [{g}], got {list(b_hh.shape)}")
    if lengths is not None:
        check_tensor(name, "lengths", lengths)
        check_category(name, lengths, INT, "lengths")
        if tuple(lengths.shape) != (batch,):
            raise fail(name, f"lengths must be [{batch}], got {list(lengths.shape)}")
    return steps, batch, hidden, proj


def _rnn_scan_meta(gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    steps, batch, hidden, proj = _check("rnn_scan", gi, h0, c0, w_hh, b_hh, w_hr, lengths,
                                        mode)
    return (TensorMeta((steps, batch, proj), gi.dtype), TensorMeta(tuple(h0.shape), gi.dtype),
            TensorMeta(tuple(c0.shape), gi.dtype))


rnn_scan = prim("rnn_scan(Tensor gi, Tensor h0, Tensor c0, Tensor w_hh, Tensor? b_hh, "
                "Tensor? w_hr, Tensor? lengths, str mode, bool reverse) "
                "-> (Tensor output, Tensor h_n, Tensor c_n)", _rnn_scan_meta)


def _rnn_scan_backward_meta(grad_output, grad_h_n, grad_c_n, gi, h0, c0, w_hh, b_hh, w_hr,
                            lengths, mode, reverse):
    name = "rnn_scan_backward"
    steps, batch, hidden, proj = _check(name, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode)
    for arg, t, shape in (("grad_output", grad_output, (steps, batch, proj)),
                          ("grad_h_n", grad_h_n, tuple(h0.shape)),
                          ("grad_c_n", grad_c_n, tuple(c0.shape))):
        check_tensor(name, arg, t)
        if tuple(t.shape) != shape or t.dtype != gi.dtype:
            raise fail(name, f"{arg} must be {list(shape)} {gi.dtype}, got "
                             f"{list(t.shape)} {t.dtype}")
    shapes = (gi.shape, h0.shape, c0.shape, w_hh.shape, (w_hh.shape[0],),
              w_hr.shape if w_hr is not None else (0, hidden))
    return tuple(TensorMeta(tuple(s), gi.dtype) for s in shapes)


rnn_scan_backward = prim(
    "rnn_scan_backward(Tensor grad_output, Tensor grad_h_n, Tensor grad_c_n, Tensor gi, "
    "Tensor h0, Tensor c0, Tensor w_hh, Tensor? b_hh, Tensor? w_hr, Tensor? lengths, str mode, "
    "bool reverse) "
    "-> (Tensor grad_gi, Tensor grad_h0, Tensor grad_c0, Tensor grad_w_hh, "
    "Tensor grad_b_hh, Tensor grad_w_hr)", _rnn_scan_backward_meta)


@derivative(rnn_scan)
def _rnn_scan_backward(grads, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse):
    g_out, g_h, g_c = grads
    g_out = zeros((gi.shape[0], gi.shape[1], h0.shape[1]), gi) if g_out is None else g_out
    g_h = zeros(h0.shape, gi) if g_h is None else g_h
    g_c = zeros(c0.shape, gi) if g_c is None else g_c
    d_gi, d_h0, d_c0, d_whh, d_bhh, d_whr = _p.rnn_scan_backward(
        g_out, g_h, g_c, gi, h0, c0, w_hh, b_hh, w_hr, lengths, mode, reverse)
    return (d_gi, d_h0, d_c0, d_whh, None if b_hh is None else d_bhh,
            None if w_hr is None else d_whr, None)


@derivative(rnn_scan_backward)
def _rnn_scan_double_backward(grads):
    raise RuntimeError("prims.rnn_scan_backward: a second-order gradient through a recurrent "
                       "layer is not supported")
