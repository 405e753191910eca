"""torch.lstm/gru/rnn_tanh/rnn_relu and the *_cell functions (fnx/nn/_rnn_forms.py) against
a NumPy recurrence, and the SyncBatchNorm pieces (fnx/api/sync_batch_norm.py) against
NumPy statistics: a batch split in replicas, gathered, gives the whole batch's numbers."""
import numpy as np
import pytest

import fnx


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    g = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    if mode == "LSTM":
        i, f, gg, o = np.split(g, 4, 1)
        c = sig(f) * c + sig(i) * np.tanh(gg)
        return sig(o) * np.tanh(c), c
    if mode == "GRU":
        gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        r = sig(gi[:, :h.shape[1]] + gh[:, :h.shape[1]])
        z = sig(gi[:, h.shape[1]:2 * h.shape[1]] + gh[:, h.shape[1]:2 * h.shape[1]])
        n = np.tanh(gi[:, 2 * h.shape[1]:] + r * gh[:, 2 * h.shape[1]:])
        return (1 - z) * n + z * h, None
    return (np.tanh(g) if mode == "RNN_TANH" else np.maximum(g, 0)), None


GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _params(rng, mode, inp, hid, layers, dirs):
    ps = []
    for layer in range(layers):
        for _ in range(dirs):
            isz = inp if layer == 0 else hid * dirs
            ps += [rng.normal(size=(GATES[mode] * hid, isz)) * 0.5,
                   rng.normal(size=(GATES[mode] * hid, hid)) * 0.5,
                   rng.normal(size=GATES[mode] * hid) * 0.1,
                   rng.normal(size=GATES[mode] * hid) * 0.1]
    return ps


def np_rnn(mode, x, h0, c0, ps, layers, dirs):
    hn, cn = [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh = ps[4 * k:4 * k + 4]
            h, c = h0[k], (c0[k] if c0 is not None else None)
            seq = range(x.shape[0])[::-1] if d else range(x.shape[0])
            out = [None] * x.shape[0]
            for t in seq:
                h, c = np_cell(mode, x[t], h, c, w_ih, w_hh, b_ih, b_hh)
                out[t] = h
            outs.append(np.stack(out))
            hn.append(h)
            cn.append(c)
        x = np.concatenate(outs, -1)
    return x, np.stack(hn), (np.stack(cn) if c0 is not None else None)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("bidirectional, batch_first", [(False, False), (True, True)])
def test_flat_weight_rnns_match_numpy(mode, bidirectional, batch_first):
    rng = np.random.default_rng(0)
    T, B, IN, H, L = 4, 2, 3, 5, 2
    dirs = 2 if bidirectional else 1
    ps = _params(rng, mode, IN, H, L, dirs)
    x = rng.normal(size=(T, B, IN))
    h0 = rng.normal(size=(L * dirs, B, H))
    c0 = rng.normal(size=(L * dirs, B, H)) if mode == "LSTM" else None
    ref_out, ref_h, ref_c = np_rnn(mode, x, h0, c0, ps, L, dirs)
    xin = fnx.tensor(x.transpose(1, 0, 2) if batch_first else x)
    params = [fnx.tensor(p) for p in ps]
    args = (params, True, L, 0.0, False, bidirectional, batch_first)
    fn = {"LSTM": fnx.lstm, "GRU": fnx.gru, "RNN_TANH": fnx.rnn_tanh,
          "RNN_RELU": fnx.rnn_relu}[mode]
    res = fn(xin, (fnx.tensor(h0), fnx.tensor(c0)) if mode == "LSTM" else fnx.tensor(h0), *args)
    out = res[0].numpy()
    out = out.transpose(1, 0, 2) if batch_first else out
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res[1].numpy(), ref_h, rtol=1e-9, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(res[2].numpy(), ref_c, rtol=1e-9, atol=1e-12)
    else:
        assert len(res) == 2


def test_flat_weight_rnn_errors_and_gradient():
    rng = np.random.default_rng(1)
    ps = [fnx.tensor(p, requires_grad=True) for p in _params(rng, "GRU", 2, 3, 1, 1)]
    x = fnx.tensor(rng.normal(size=(3, 1, 2)))
    with pytest.raises(RuntimeError, match="expected 4 parameters"):
        fnx.gru(x, fnx.zeros(1, 1, 3, dtype=fnx.float64), ps[:3], True, 1, 0.0, False, False,
                False)
    with pytest.raises(RuntimeError, match="3 dimensions"):
        fnx.gru(x[0], fnx.zeros(1, 1, 3, dtype=fnx.float64), ps, True, 1, 0.0, False, False,
                False)
    out, h = fnx.gru(x, fnx.zeros(1, 1, 3, dtype=fnx.float64), ps, True, 1, 0.0, False,
                     False, False)
    out.sum().backward()
    # finite differences on one weight entry
    w = ps[0].detach().numpy().copy()
    eps = 1e-6

    def loss(wv):
        pp = [fnx.tensor(wv)] + [p.detach() for p in ps[1:]]
        return fnx.gru(x, fnx.zeros(1, 1, 3, dtype=fnx.float64), pp, True, 1, 0.0, False,
                       False, False)[0].sum().item()
    wp, wm = w.copy(), w.copy()
    wp[1, 0] += eps
    wm[1, 0] -= eps
    np.testing.assert_allclose(ps[0].grad.numpy()[1, 0], (loss(wp) - loss(wm)) / (2 * eps),
                               rtol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_cells_match_numpy(mode):
    rng = np.random.default_rng(2)
    B, IN, H = 3, 4, 2
    w_ih, w_hh, b_ih, b_hh = _params(rng, mode, IN, H, 1, 1)
    x, h, c = rng.normal(size=(B, IN)), rng.normal(size=(B, H)), rng.normal(size=(B, H))
    ref_h, ref_c = np_cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh)
    T = fnx.tensor
    if mode == "LSTM":
        got_h, got_c = fnx.lstm_cell(T(x), (T(h), T(c)), T(w_ih), T(w_hh), T(b_ih), T(b_hh))
        np.testing.assert_allclose(got_c.numpy(), ref_c, rtol=1e-12)
    else:
        fn = {"GRU": fnx.gru_cell, "RNN_TANH": fnx.rnn_tanh_cell,
              "RNN_RELU": fnx.rnn_relu_cell}[mode]
        got_h = fn(T(x), T(h), T(w_ih), T(w_hh), T(b_ih), T(b_hh))
    np.testing.assert_allclose(got_h.numpy(), ref_h, rtol=1e-12)
    # no biases: the same as zero biases
    ref0, _ = np_cell(mode, x, h, c, w_ih, w_hh, 0 * b_ih, 0 * b_hh)
    hx = (T(h), T(c)) if mode == "LSTM" else T(h)
    fn = {"LSTM": fnx.lstm_cell, "GRU": fnx.gru_cell, "RNN_TANH": fnx.rnn_tanh_cell,
          "RNN_RELU": fnx.rnn_relu_cell}[mode]
    got = fn(T(x), hx, T(w_ih), T(w_hh))
    got = got[0] if mode == "LSTM" else got
    np.testing.assert_allclose(got.numpy(), ref0, rtol=1e-12)


# ----------------------------------------------------------------------------- sync batch norm

def test_stats_gather_and_elemt_match_the_whole_batch():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 3, 4)) * [[[1.0], [2.0], [0.5]]] + 1.0
    parts = [x[:2], x[2:6], x[6:]]                       # three replicas, unequal counts
    eps, mom = 1e-5, 0.1
    means, invstds = zip(*(fnx.batch_norm_stats(fnx.tensor(p), eps) for p in parts))
    for p, m, s in zip(parts, means, invstds):
        np.testing.assert_allclose(m.numpy(), p.mean((0, 2)), rtol=1e-12)
        np.testing.assert_allclose(s.numpy(), 1 / np.sqrt(p.var((0, 2)) + eps), rtol=1e-12)
    counts = fnx.tensor([p.shape[0] * p.shape[2] for p in parts], dtype=fnx.float64)
    rm, rv = fnx.zeros(3, dtype=fnx.float64), fnx.ones(3, dtype=fnx.float64)
    mean, invstd = fnx.batch_norm_gather_stats_with_counts(
        fnx.tensor(x), fnx.stack(means), fnx.stack(invstds), rm, rv, mom, eps, counts)
    np.testing.assert_allclose(mean.numpy(), x.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(x.var((0, 2)) + eps), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), mom * x.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), (1 - mom) + mom * x.var((0, 2), ddof=1),
                               rtol=1e-10)
    w, b = rng.normal(size=3), rng.normal(size=3)
    out = fnx.batch_norm_elemt(fnx.tensor(x), fnx.tensor(w), fnx.tensor(b), mean, invstd, eps)
    ref = (x - x.mean((0, 2), keepdims=True)) / np.sqrt(x.var((0, 2), keepdims=True) + eps)
    np.testing.assert_allclose(out.numpy(), ref * w[:, None] + b[:, None], rtol=1e-9)
    # equal counts: the int form
    m2, s2 = fnx.batch_norm_gather_stats(fnx.tensor(x), fnx.stack(means[:1] * 2),
                                         fnx.stack(invstds[:1] * 2), None, None, mom, eps, 8)
    np.testing.assert_allclose(m2.numpy(), parts[0].mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(s2.numpy(), invstds[0].numpy(), rtol=1e-10)


def test_backward_pieces_give_the_batch_norm_gradient():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 2, 3))
    w, b = rng.normal(size=2), rng.normal(size=2)
    dy = rng.normal(size=x.shape)
    eps = 1e-5
    xt = fnx.tensor(x, requires_grad=True)
    wt, bt = fnx.tensor(w, requires_grad=True), fnx.tensor(b, requires_grad=True)
    fnx.nn.functional.batch_norm(xt, None, None, wt, bt, training=True, eps=eps).backward(
        fnx.tensor(dy))
    mean, invstd = fnx.batch_norm_stats(fnx.tensor(x), eps)
    sum_dy, sum_dy_xmu, gw, gb = fnx.batch_norm_backward_reduce(
        fnx.tensor(dy), fnx.tensor(x), mean, invstd, fnx.tensor(w), True, True, True)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(gb.numpy(), bt.grad.numpy(), rtol=1e-9)
    gx = fnx.batch_norm_backward_elemt(fnx.tensor(dy), fnx.tensor(x), mean, invstd,
                                       fnx.tensor(w), sum_dy, sum_dy_xmu,
                                       fnx.tensor([15], dtype=fnx.int32))
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-12)
    none = fnx.batch_norm_backward_reduce(fnx.tensor(dy), fnx.tensor(x), mean, invstd, None,
                                          False, False, False)
    assert none == (None, None, None, None)


def test_update_stats():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 2))
    rm, rv = fnx.zeros(3, dtype=fnx.float64), fnx.ones(3, dtype=fnx.float64)
    mean, var = fnx.batch_norm_update_stats(fnx.tensor(x), rm, rv, 0.2)
    np.testing.assert_allclose(mean.numpy(), x.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), x.var((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.2 * x.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * x.var((0, 2), ddof=1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="at least 2 dims"):
        fnx.batch_norm_stats(fnx.ones(3), 1e-5)
