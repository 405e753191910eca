"""AdaptiveLogSoftmaxWithLoss, Softmax2d and NLLLoss2d against NumPy: the full
log-probability matrix is computed from the module's weights."""
import numpy as np
import pytest

import fnx
from fnx import nn


def _log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _full_logp(asm, x):
    w = {k: v.detach().numpy().astype(np.float64) for k, v in asm.state_dict().items()}
    head = _log_softmax(x @ w["head.weight"].T + w.get("head.bias", 0))
    parts = [head[:, :asm.shortlist_size]]
    for i in range(asm.n_clusters):
        z = (x @ w[f"tail.{i}.0.weight"].T) @ w[f"tail.{i}.1.weight"].T
        parts.append(_log_softmax(z) + head[:, asm.shortlist_size + i:asm.shortlist_size + i + 1])
    return np.concatenate(parts, 1)


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_matches_the_full_distribution(head_bias):
    fnx.manual_seed(0)
    asm = nn.AdaptiveLogSoftmaxWithLoss(12, 15, cutoffs=[4, 9], div_value=2.0,
                                        head_bias=head_bias).double()
    assert [tuple(m[0].weight.shape) for m in asm.tail] == [(6, 12), (3, 12)]
    x = np.random.default_rng(0).standard_normal((7, 12))
    target = np.array([0, 3, 4, 8, 9, 14, 2])
    full = _full_logp(asm, x)
    np.testing.assert_allclose(np.exp(full).sum(1), 1, rtol=1e-12)
    out, loss = asm(fnx.tensor(x), fnx.tensor(target))
    expected = full[np.arange(7), target]
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    assert loss.item() == pytest.approx(-expected.mean(), rel=1e-12)
    np.testing.assert_allclose(asm.log_prob(fnx.tensor(x)).detach().numpy(), full, rtol=1e-12)
    assert asm.predict(fnx.tensor(x)).tolist() == full.argmax(1).tolist()
    one, one_loss = asm(fnx.tensor(x[3]), fnx.tensor(target[3]))   # unbatched
    assert one.dim() == 0 and one.item() == pytest.approx(expected[3], rel=1e-12)
    # gradients reach the tails of the clusters the targets fall in
    loss.backward()
    assert all(p.grad is not None for p in asm.parameters())


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 5, [3, 3])
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 5, [])
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
    x = fnx.ones(3, 4)
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 5\], but values "
                                           r"in range \[0, 6\]"):
        asm(x, fnx.tensor([0, 1, 6]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        asm(x, fnx.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        asm(x, fnx.zeros(3, 2, dtype=fnx.int64))


def test_softmax2d_and_nllloss2d():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(nn.Softmax2d()(fnx.tensor(x)).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(fnx.ones(2, 2))
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        loss = nn.NLLLoss2d()
    t = np.random.default_rng(2).integers(0, 3, (2, 4, 5))
    ref = -np.take_along_axis(x, t[:, None], 1).mean()
    assert loss(fnx.tensor(x), fnx.tensor(t)).item() == pytest.approx(ref, rel=1e-5)
