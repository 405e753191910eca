"""Recurrent layers (``RNN``, ``LSTM``, ``GRU``, the cells) and ``nn.utils.rnn`` against
NumPy recurrences written out step by step, one sequence at a time, with the same
weights; gradients against central finite differences of those recurrences (float64);
``fnx.compile`` against eager; PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
from fnx.graph.tracer import trace
from fnx.lower import jax_compile
from fnx.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence,
                              pad_packed_sequence, pad_sequence, unpack_sequence,
                              unpad_sequence)


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_cell(mode, x, h, c, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One step of one sequence (vectors)."""
    gi = w_ih @ x + (0 if b_ih is None else b_ih)
    gh = w_hh @ h + (0 if b_hh is None else b_hh)
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        return (h if w_hr is None else w_hr @ h), c
    if mode == "GRU":
        i_r, i_z, i_n = np.split(gi, 3)
        h_r, h_z, h_n = np.split(gh, 3)
        r, z = _sig(i_r + h_r), _sig(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)), None


def np_rnn(mode, x, P, num_layers=1, bidirectional=False, lengths=None, h0=None, c0=None,
           hidden=None, proj=0, layer_input=None):
    """``x``: (T, B, I) time-major. Each sequence ``b`` runs over its first ``lengths[b]``
    steps (zeros after); returns ``(output, h_n, c_n)`` as PyTorch lays them out."""
    T, B, _ = x.shape
    lengths = [T] * B if lengths is None else list(lengths)
    dirs = 2 if bidirectional else 1
    hs = proj or hidden
    h0 = np.zeros((num_layers * dirs, B, hs)) if h0 is None else h0
    c0 = np.zeros((num_layers * dirs, B, hidden)) if c0 is None else c0
    h_n, c_n = np.zeros_like(h0), np.zeros_like(c0)
    inp = x
    for layer in range(num_layers):
        out = np.zeros((T, B, dirs * hs))
        for d in range(dirs):
            k = layer * dirs + d
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            W = [P.get(n + sfx) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                          "weight_hr")]
            for b in range(B):
                h, c = h0[k, b], c0[k, b]
                order = range(lengths[b]) if d == 0 else range(lengths[b] - 1, -1, -1)
                for t in order:
                    h, c = np_cell(mode, inp[t, b], h, c, *W)
                    out[t, b, d * hs:(d + 1) * hs] = h
                h_n[k, b] = h
                if mode == "LSTM":
                    c_n[k, b] = c
        inp = out if layer_input is None else layer_input(layer, out)
    return out, h_n, c_n


def params_of(m):
    return {n: p.numpy(force=True).copy() for n, p in m.named_parameters()}


CASES = [
    ("RNN_TANH", {}), ("RNN_RELU", {"num_layers": 2}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "proj_size": 2, "batch_first": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False}),
]


def make(mode, input_size, hidden, **kw):
    if mode.startswith("RNN"):
        return nn.RNN(input_size, hidden, nonlinearity="tanh" if mode == "RNN_TANH" else "relu",
                      **kw).double()
    return getattr(nn, mode)(input_size, hidden, **kw).double()


@pytest.mark.parametrize("mode,kw", CASES)
def test_forward_matches_numpy_recurrence(mode, kw):
    rng = np.random.default_rng(0)
    T, B, n_in, H = 5, 3, 4, 6
    m = make(mode, n_in, H, **kw)
    dirs = 2 if kw.get("bidirectional") else 1
    L, proj = kw.get("num_layers", 1), kw.get("proj_size", 0)
    x = rng.standard_normal((T, B, n_in))
    h0 = rng.standard_normal((L * dirs, B, proj or H))
    c0 = rng.standard_normal((L * dirs, B, H))
    xin = x.transpose(1, 0, 2) if kw.get("batch_first") else x
    hx = (fnx.tensor(h0), fnx.tensor(c0)) if mode == "LSTM" else fnx.tensor(h0)
    out, hidden = m(fnx.tensor(xin), hx)
    ref_out, ref_h, ref_c = np_rnn(mode, x, params_of(m), L, dirs == 2, h0=h0, c0=c0,
                                   hidden=H, proj=proj)
    if kw.get("batch_first"):
        ref_out = ref_out.transpose(1, 0, 2)
    np.testing.assert_allclose(out.numpy(force=True), ref_out, rtol=1e-10, atol=1e-12)
    h_n = hidden[0] if mode == "LSTM" else hidden
    np.testing.assert_allclose(h_n.numpy(force=True), ref_h, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(hidden[1].numpy(force=True), ref_c, rtol=1e-10, atol=1e-12)
    # no hx: zeros
    out0 = m(fnx.tensor(xin))[0]
    ref0 = np_rnn(mode, x, params_of(m), L, dirs == 2, hidden=H, proj=proj)[0]
    if kw.get("batch_first"):
        ref0 = ref0.transpose(1, 0, 2)
    np.testing.assert_allclose(out0.numpy(force=True), ref0, rtol=1e-10, atol=1e-12)


def test_parameter_names_shapes_and_init():
    fnx.manual_seed(0)
    m = nn.LSTM(5, 8, 2, bidirectional=True, proj_size=3)
    shapes = dict((n, tuple(p.shape)) for n, p in m.named_parameters())
    for sfx in ("", "_reverse"):
        assert shapes["weight_ih_l0" + sfx] == (32, 5)
        assert shapes["weight_hh_l0" + sfx] == (32, 3)
        assert shapes["bias_ih_l0" + sfx] == (32,) and shapes["bias_hh_l0" + sfx] == (32,)
        assert shapes["weight_hr_l0" + sfx] == (3, 8)
        assert shapes["weight_ih_l1" + sfx] == (32, 6)
    assert list(shapes)[:6] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                "weight_hr_l0", "weight_ih_l0_reverse"]
    assert list(m.state_dict()) == list(shapes)
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 5
    g = nn.GRU(5, 100)
    assert tuple(g.weight_ih_l0.shape) == (300, 5)
    bound = 1 / math.sqrt(100)
    w = g.weight_hh_l0.numpy(force=True)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.005
    assert [n for n, _ in nn.RNN(3, 4, bias=False).named_parameters()] == ["weight_ih_l0",
                                                                            "weight_hh_l0"]
    assert repr(nn.LSTM(10, 20, 2, bias=False, batch_first=True, dropout=0.5,
                        bidirectional=True, proj_size=3)) == (
        "LSTM(10, 20, proj_size=3, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
        "bidirectional=True)")
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4, bias=False)) == "LSTMCell(3, 4, bias=False)"


def test_unbatched_input():
    rng = np.random.default_rng(1)
    for batch_first in (False, True):
        m = nn.LSTM(3, 4, 2, bidirectional=True, batch_first=batch_first).double()
        x = rng.standard_normal((5, 3))
        h0, c0 = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
        out, (h, c) = m(fnx.tensor(x), (fnx.tensor(h0), fnx.tensor(c0)))
        ro, rh, rc = np_rnn("LSTM", x[:, None], params_of(m), 2, True, h0=h0[:, None],
                            c0=c0[:, None], hidden=4)
        assert tuple(out.shape) == (5, 8) and tuple(h.shape) == (4, 4)
        np.testing.assert_allclose(out.numpy(force=True), ro[:, 0], rtol=1e-10)
        np.testing.assert_allclose(h.numpy(force=True), rh[:, 0], rtol=1e-10)
        np.testing.assert_allclose(c.numpy(force=True), rc[:, 0], rtol=1e-10)
    g = nn.GRU(3, 4).double()
    out, h = g(fnx.tensor(x))
    np.testing.assert_allclose(out.numpy(force=True),
                               np_rnn("GRU", x[:, None], params_of(g), hidden=4)[0][:, 0],
                               rtol=1e-10)
    assert tuple(h.shape) == (1, 4)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_packed_sequence_input(mode):
    rng = np.random.default_rng(2)
    T, B, n_in, H = 6, 4, 3, 5
    lengths = [4, 6, 1, 3]                                  # unsorted
    m = make(mode, n_in, H, num_layers=2, bidirectional=True)
    x = rng.standard_normal((T, B, n_in))
    h0 = rng.standard_normal((4, B, H))
    c0 = rng.standard_normal((4, B, H))
    packed = pack_padded_sequence(fnx.tensor(x), fnx.tensor(lengths), enforce_sorted=False)
    hx = (fnx.tensor(h0), fnx.tensor(c0)) if mode == "LSTM" else fnx.tensor(h0)
    out, hidden = m(packed, hx)
    assert isinstance(out, PackedSequence)
    assert out.batch_sizes.tolist() == [4, 3, 3, 2, 1, 1]
    padded, lens = pad_packed_sequence(out)
    assert lens.tolist() == lengths
    ro, rh, rc = np_rnn(mode, x, params_of(m), 2, True, lengths=lengths, h0=h0, c0=c0,
                        hidden=H)
    np.testing.assert_allclose(padded.numpy(force=True), ro, rtol=1e-10, atol=1e-12)
    h_n = hidden[0] if mode == "LSTM" else hidden
    np.testing.assert_allclose(h_n.numpy(force=True), rh, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(hidden[1].numpy(force=True), rc, rtol=1e-10, atol=1e-12)


def _fd_check(m, mode, x, lengths, L, bidirectional, hidden, proj=0, batch_first=False,
              compiled=False):
    """Gradients of ``sum(out * R1) + sum(h_n * R2)`` (``+ sum(c_n * R3)``) for the input
    and every parameter against central differences of the NumPy recurrence; ``compiled``:
    forward and backward as one ``fnx.compile`` program."""
    rng = np.random.default_rng(3)
    P = params_of(m)
    ro, rh, rc = np_rnn(mode, x, P, L, bidirectional, lengths=lengths, hidden=hidden,
                        proj=proj)
    R = [rng.standard_normal(a.shape) for a in (ro, rh, rc)]
    xt = fnx.tensor(x.transpose(1, 0, 2) if batch_first else x, requires_grad=True)

    def run(xt):
        if lengths is None:
            out, hidden_t = m(xt)
        else:
            out, hidden_t = m(pack_padded_sequence(xt, lengths, batch_first=batch_first,
                                                   enforce_sorted=False))
            out = pad_packed_sequence(out, batch_first=batch_first)[0]
        if batch_first:
            out = out.transpose(0, 1)
        h_n, c_n = hidden_t if mode == "LSTM" else (hidden_t, None)
        loss = (out * fnx.tensor(R[0])).sum() + (h_n * fnx.tensor(R[1])).sum()
        if c_n is not None:
            loss = loss + (c_n * fnx.tensor(R[2])).sum()
        loss.backward()

    (fnx.compile(run) if compiled else run)(xt)
    env = dict(P, x=x.copy())

    def f():
        o, h, c = np_rnn(mode, env["x"], env, L, bidirectional, lengths=lengths,
                         hidden=hidden, proj=proj)
        return float((o * R[0]).sum() + (h * R[1]).sum()
                     + ((c * R[2]).sum() if mode == "LSTM" else 0.0))

    def numeric(key, eps=1e-6):
        a, g = env[key], np.zeros_like(env[key])
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            fp = f()
            a[idx] = old - eps
            fm = f()
            a[idx] = old
            g[idx] = (fp - fm) / (2 * eps)
        return g

    gx = xt.grad.numpy()
    np.testing.assert_allclose(gx.transpose(1, 0, 2) if batch_first else gx, numeric("x"),
                               rtol=1e-5, atol=1e-7, err_msg="input")
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), numeric(name), rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_lstm_gradients_finite_differences():
    rng = np.random.default_rng(4)
    m = nn.LSTM(2, 3, 2, bidirectional=True, proj_size=2).double()
    _fd_check(m, "LSTM", rng.standard_normal((3, 2, 2)), None, 2, True, 3, proj=2)


def test_compiled_lstm_step_gradients_finite_differences():
    # forward and backward in one program: the backward scans reuse the forward's residuals
    rng = np.random.default_rng(7)
    m = nn.LSTM(2, 3, 2, bidirectional=True, proj_size=2).double()
    _fd_check(m, "LSTM", rng.standard_normal((3, 2, 2)), None, 2, True, 3, proj=2,
              compiled=True)


def test_compiled_step_shares_the_forward_scan_with_its_backward(monkeypatch):
    pairs = []
    find = jax_compile._paired_backwards
    monkeypatch.setattr(jax_compile, "_paired_backwards",
                        lambda *a: pairs.append(find(*a)) or pairs[-1])
    m = nn.GRU(3, 4, 2)

    def step(x):
        loss = m(x)[0].sum()
        loss.backward()
        return loss.detach()
    fnx.compile(step)(fnx.randn(5, 2, 3))
    # each lowering of the step's graph (the program, and its variants: host-checked,
    # gradients packed) pairs both layers' scans
    got = [sorted((f.target.name, b.target.name) for f, b in p.items()) for p in pairs]
    assert got and got == [[("rnn_scan", "rnn_scan_backward")] * 2] * len(got)


def test_gru_packed_gradients_finite_differences():
    rng = np.random.default_rng(5)
    m = nn.GRU(2, 3, bidirectional=True, batch_first=True).double()
    _fd_check(m, "GRU", rng.standard_normal((4, 3, 2)), [2, 4, 3], 1, True, 3,
              batch_first=True)


def test_rnn_relu_gradients_finite_differences():
    rng = np.random.default_rng(6)
    m = nn.RNN(2, 3, 2, nonlinearity="relu").double()
    _fd_check(m, "RNN_RELU", rng.standard_normal((3, 2, 2)), None, 2, False, 3)


def test_dropout_between_layers():
    rng = np.random.default_rng(7)
    m = nn.GRU(3, 4, 2, dropout=1.0).double()
    x = rng.standard_normal((5, 2, 3))
    P = params_of(m)
    # p = 1 zeroes layer 0's output in training: layer 1 sees zeros
    out = m(fnx.tensor(x))[0]
    ref = np_rnn("GRU", x, P, 2, hidden=4, layer_input=lambda layer, o: np.zeros_like(o))[0]
    np.testing.assert_allclose(out.numpy(force=True), ref, rtol=1e-10, atol=1e-12)
    m.eval()
    np.testing.assert_allclose(m(fnx.tensor(x))[0].numpy(force=True),
                               np_rnn("GRU", x, P, 2, hidden=4)[0], rtol=1e-10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.LSTM(3, 4, dropout=0.5)
    assert "non-zero dropout expects num_layers greater than 1" in str(w[0].message)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_numpy(cls):
    rng = np.random.default_rng(8)
    m = getattr(nn, cls)(3, 4).double()
    mode = {"RNNCell": "RNN_TANH", "LSTMCell": "LSTM", "GRUCell": "GRU"}[cls]
    W = [m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh]
    W = [w.numpy(force=True) for w in W]
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    state = (fnx.tensor(h), fnx.tensor(c)) if mode == "LSTM" else fnx.tensor(h)
    got = m(fnx.tensor(x), state)
    for b in range(2):
        rh, rc = np_cell(mode, x[b], h[b], c[b], *W)
        gh = got[0] if mode == "LSTM" else got
        np.testing.assert_allclose(gh.numpy(force=True)[b], rh, rtol=1e-12)
        if mode == "LSTM":
            np.testing.assert_allclose(got[1].numpy(force=True)[b], rc, rtol=1e-12)
    # unbatched, no state: zeros
    got = m(fnx.tensor(x[0]))
    rh, _ = np_cell(mode, x[0], np.zeros(4), np.zeros(4), *W)
    np.testing.assert_allclose((got[0] if mode == "LSTM" else got).numpy(force=True), rh,
                               rtol=1e-12)
    # the cell's gradient matches finite differences of the NumPy step
    xt = fnx.tensor(x[0], requires_grad=True)
    out = m(xt, (fnx.tensor(h[0]), fnx.tensor(c[0])) if mode == "LSTM" else fnx.tensor(h[0]))
    (out[0] if mode == "LSTM" else out).sum().backward()
    eps, num = 1e-6, np.zeros(3)
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        num[i] = (np_cell(mode, x[0] + d, h[0], c[0], *W)[0].sum()
                  - np_cell(mode, x[0] - d, h[0], c[0], *W)[0].sum()) / (2 * eps)
    np.testing.assert_allclose(xt.grad.numpy(), num, rtol=1e-6)


def test_compiled_lstm_model_matches_eager():
    fnx.manual_seed(0)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(11, 6)
            self.rnn = nn.LSTM(6, 8, 2, dropout=0.0)
            self.head = nn.Linear(8, 11)

        def forward(self, tokens, hidden):
            out, hidden = self.rnn(self.emb(tokens), hidden)
            return self.head(out), hidden

    model = LM()
    tokens = fnx.randint(0, 11, (7, 3))
    hidden = (fnx.randn(2, 3, 8), fnx.randn(2, 3, 8))
    eager_out, (eh, ec) = model(tokens, hidden)
    eager_out.sum().backward()
    eager_grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.zero_grad()
    compiled = fnx.compile(model)
    out, (h, c) = compiled(tokens, hidden)
    out.sum().backward()
    for a, b in ((out, eager_out), (h, eh), (c, ec)):
        np.testing.assert_allclose(a.numpy(force=True), b.numpy(force=True), rtol=1e-5,
                                   atol=1e-6)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), eager_grads[n], rtol=1e-4, atol=1e-6,
                                   err_msg=n)


def test_traced_layer_is_one_scan_per_layer_and_direction():
    m = nn.LSTM(3, 4, 2, bidirectional=True)

    def ops(steps):
        g = trace(lambda x: m(x)[0], fnx.randn(steps, 2, 3))
        return [n.target.name for n in g.nodes if hasattr(getattr(n, "target", None), "name")]
    short, long = ops(5), ops(60)
    assert short.count("rnn_scan") == 4
    assert long == short                                  # the graph does not grow with T


def test_compiled_packed_lstm_matches_numpy():
    rng = np.random.default_rng(11)
    m = nn.LSTM(3, 4, 2, bidirectional=True, batch_first=True).double()
    lengths = [2, 5, 3]

    def f(x):
        out, (h, c) = m(pack_padded_sequence(x, lengths, batch_first=True,
                                             enforce_sorted=False))
        return pad_packed_sequence(out, batch_first=True)[0], h, c
    x = rng.standard_normal((3, 5, 3))
    got = fnx.compile(f)(fnx.tensor(x))
    ref = np_rnn("LSTM", x.transpose(1, 0, 2), params_of(m), 2, True, lengths=lengths,
                 hidden=4)
    np.testing.assert_allclose(got[0].numpy(force=True), ref[0].transpose(1, 0, 2),
                               rtol=1e-10, atol=1e-12)
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_allclose(a.numpy(force=True), b, rtol=1e-10, atol=1e-12)
    g = trace(lambda x: f(x)[0], fnx.tensor(x))
    assert sum(getattr(getattr(n, "target", None), "name", "") == "rnn_scan"
               for n in g.nodes) == 4


def test_compiled_module_given_a_packed_sequence_runs_eagerly():
    # its batch sizes are data the trace does not have: fnx.compile warns and runs eagerly
    rng = np.random.default_rng(12)
    m = nn.GRU(3, 4).double()
    x = [rng.standard_normal((4, 3)), rng.standard_normal((2, 3))]
    with pytest.warns(UserWarning, match="running GRU eagerly"):
        out, h = fnx.compile(m)(pack_sequence([fnx.tensor(a) for a in x]))
    padded = np.zeros((4, 2, 3))
    padded[:, 0], padded[:2, 1] = x
    ro, rh, _ = np_rnn("GRU", padded, params_of(m), lengths=[4, 2], hidden=4)
    np.testing.assert_allclose(pad_packed_sequence(out)[0].numpy(force=True), ro, rtol=1e-10)
    np.testing.assert_allclose(h.numpy(force=True), rh, rtol=1e-10)


def test_compiled_gru_bidirectional_matches_numpy():
    rng = np.random.default_rng(9)
    m = nn.GRU(3, 4, 2, bidirectional=True, batch_first=True).double()
    x = rng.standard_normal((2, 5, 3))
    out, h = fnx.compile(m)(fnx.tensor(x))
    ro, rh, _ = np_rnn("GRU", x.transpose(1, 0, 2), params_of(m), 2, True, hidden=4)
    np.testing.assert_allclose(out.numpy(force=True), ro.transpose(1, 0, 2), rtol=1e-10)
    np.testing.assert_allclose(h.numpy(force=True), rh, rtol=1e-10)


# ----------------------------------------------------------------------------- nn.utils.rnn

def test_pack_pad_utilities():
    a, b, c = fnx.tensor([1., 2., 3.]), fnx.tensor([4., 5.]), fnx.tensor([6.])
    padded = pad_sequence([a, b, c])
    assert padded.tolist() == [[1., 4., 6.], [2., 5., 0.], [3., 0., 0.]]
    assert pad_sequence([a, b], batch_first=True, padding_value=-1.,
                        padding_side="left").tolist() == [[1., 2., 3.], [-1., 4., 5.]]
    p = pack_sequence([a, b, c])
    assert p.data.tolist() == [1., 4., 6., 2., 5., 3.]
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.batch_sizes.dtype is fnx.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    q = pack_sequence([b, a, c], enforce_sorted=False)
    assert q.data.tolist() == [1., 4., 6., 2., 5., 3.]
    assert q.sorted_indices.tolist() == [1, 0, 2] and q.unsorted_indices.tolist() == [1, 0, 2]
    out, lens = pad_packed_sequence(q, batch_first=True, total_length=4, padding_value=9.)
    assert out.tolist() == [[4., 5., 9., 9.], [1., 2., 3., 9.], [6., 9., 9., 9.]]
    assert lens.tolist() == [2, 3, 1]
    assert [s.tolist() for s in unpack_sequence(q)] == [[4., 5.], [1., 2., 3.], [6.]]
    assert [s.tolist() for s in unpad_sequence(padded, [3, 2, 1])] == [[1., 2., 3.], [4., 5.],
                                                                       [6.]]
    # batch_first packing of a 2-D feature batch, and gradients flow back to the padded input
    x = fnx.arange(12.).reshape(2, 3, 2).requires_grad_()
    pk = pack_padded_sequence(x, [3, 1], batch_first=True)
    assert pk.data.tolist() == [[0., 1.], [6., 7.], [2., 3.], [4., 5.]]
    (pk.data * fnx.arange(1., 9.).reshape(4, 2)).sum().backward()
    assert x.grad.tolist() == [[[1., 2.], [5., 6.], [7., 8.]], [[3., 4.], [0., 0.], [0., 0.]]]
    assert pk.double().data.dtype is fnx.float64


def test_pack_errors():
    x = fnx.randn(5, 3, 2)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order "
                                           "when `enforce_sorted` is True"):
        pack_padded_sequence(x, [3, 5, 2])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [5, 3, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to "
                                           r"batch_size, but got 2 \(batch_size=3\)"):
        pack_padded_sequence(x, [5, 3])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of "
                                         "the longest sequence in input, but got "
                                         "total_length=4 and max sequence length being 5"):
        pad_packed_sequence(pack_padded_sequence(x, [5, 3, 2]), total_length=4)
    with pytest.raises(ValueError, match="Expected padding_side to be one of left or right"):
        pad_sequence([fnx.ones(2)], padding_side="up")


def test_recurrent_errors():
    m = nn.LSTM(10, 20, 2)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. "
                                           r"Expected 10, got 7"):
        m(fnx.randn(5, 3, 7))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        m(fnx.randn(5, 3, 10, 1))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 3, 20\), got "
                                           r"\[2, 4, 20\]"):
        m(fnx.randn(5, 3, 10), (fnx.zeros(2, 4, 20), fnx.zeros(2, 3, 20)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 3, 20\)"):
        m(fnx.randn(5, 3, 10), (fnx.zeros(2, 3, 20), fnx.zeros(2, 4, 20)))
    with pytest.raises(ValueError, match="RNN input dtype"):
        m(fnx.randn(5, 3, 10, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx and cx should also be "
                                           "2-D but got"):
        m(fnx.randn(5, 10), (fnx.zeros(2, 3, 20), fnx.zeros(2, 3, 20)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 3, 20\), got "
                                           r"\[1, 4, 20\]"):
        nn.GRU(10, 20)(fnx.randn(5, 3, 10), fnx.zeros(1, 4, 20))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D"):
        nn.RNN(10, 20)(fnx.randn(5, 3, 10), fnx.zeros(1, 20))
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sig'"):
        nn.RNN(10, 20, nonlinearity="sig")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(10, 20, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(10, 20, proj_size=20)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTM(10, 0)
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        nn.LSTM(10, 2.0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.LSTM(10, 2, 0)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(10, 2, dropout=2)
    c = nn.LSTMCell(10, 20)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 7 "
                                           "expected 10"):
        c(fnx.randn(3, 7))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D"):
        c(fnx.randn(3, 10, 1))
    with pytest.raises(RuntimeError, match="Input batch size 3 doesn't match hidden1 batch "
                                           "size 4"):
        c(fnx.randn(3, 10), (fnx.zeros(3, 20), fnx.zeros(4, 20)))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 3, "
                                           "expected 20"):
        nn.GRUCell(10, 20)(fnx.randn(2, 10), fnx.zeros(2, 3))


def test_cuda_backend_matches_cpu():
    if not fnx.cuda.is_available():
        pytest.skip("no CUDA backend available (set FNX_CUDA_ON_CPU=1 to emulate one)")
    rng = np.random.default_rng(10)
    m = nn.LSTM(3, 4, 2, bidirectional=True).double()
    x = rng.standard_normal((5, 2, 3))
    ref = np_rnn("LSTM", x, params_of(m), 2, True, lengths=[5, 3], hidden=4)
    m.cuda()
    xt = fnx.tensor(x, device="cuda", requires_grad=True)
    out, (h, c) = m(pack_padded_sequence(xt, [5, 3]))
    padded = pad_packed_sequence(out)[0]
    assert padded.device.type == "cuda" and h.device.type == "cuda"
    np.testing.assert_allclose(padded.numpy(force=True), ref[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(force=True), ref[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.numpy(force=True), ref[2], rtol=1e-10, atol=1e-12)
    (padded.sum() + h.sum()).backward()
    assert xt.grad.device.type == "cuda" and m.weight_hh_l1_reverse.grad is not None
    cell = nn.GRUCell(3, 4).double().cuda()
    hc = cell(fnx.tensor(x[0], device="cuda"))
    W = [p.numpy(force=True) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                       cell.bias_hh)]
    np.testing.assert_allclose(hc.numpy(force=True)[1],
                               np_cell("GRU", x[0, 1], np.zeros(4), None, *W)[0], rtol=1e-10)


# ----------------------------------------------------------------------------- a program

class WordLM(nn.Module):
    """A word-level language model written as a PyTorch program would be (the rnn type
    chosen by name, ``init_hidden`` from ``next(self.parameters())``, log-softmax output)."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def _repackage(h):
    return h.detach() if isinstance(h, fnx.Tensor) else tuple(_repackage(v) for v in h)


def _train_word_lm(rnn_type, compiled, steps=3):
    fnx.manual_seed(0)
    model = WordLM(rnn_type, 50, 16, 16, 2)
    run = fnx.compile(model) if compiled else model
    data = fnx.randint(0, 50, (8 * steps + 1, 4), generator=fnx.Generator().manual_seed(1))
    criterion = nn.NLLLoss()
    hidden = model.init_hidden(4)
    losses = []
    for i in range(0, 8 * steps, 8):
        x, y = data[i:i + 8], data[i + 1:i + 9].reshape(-1)
        hidden = _repackage(hidden)
        model.zero_grad()
        out, hidden = run(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-20)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN_TANH"])
def test_word_language_model_program(rnn_type):
    eager = _train_word_lm(rnn_type, compiled=False)
    # decoder weights in U(-0.1, 0.1) and zero bias: the first logits are nearly equal
    assert abs(eager[0] - math.log(50)) < 0.05
    np.testing.assert_allclose(_train_word_lm(rnn_type, compiled=True), eager, rtol=1e-4)
