"""nn.utils.prune against NumPy: which entries each method prunes, the reparametrization
(weight_orig, weight_mask, the pre-hook), iterative pruning, global pruning, remove."""
import numpy as np
import pytest

import fnx
from fnx import nn
from fnx.nn.utils import prune


def _linear(w):
    m = nn.Linear(w.shape[1], w.shape[0]).double()
    with fnx.no_grad():
        m.weight.copy_(fnx.tensor(w))
    return m


def _distinct(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) + 1.0).reshape(shape) * rng.choice([-1, 1], n).reshape(shape)


def test_l1_unstructured_prunes_the_smallest_magnitudes():
    w = _distinct((4, 5))
    m = _linear(w)
    orig = m.weight
    prune.l1_unstructured(m, "weight", amount=0.3)          # round(0.3 * 20) = 6
    mask = np.ones(20)
    mask[np.argsort(np.abs(w).ravel())[:6]] = 0
    mask = mask.reshape(4, 5)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_orig"]
    assert m.weight_orig is orig and [n for n, _ in m.named_buffers()] == ["weight_mask"]
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask)
    np.testing.assert_array_equal(m.weight.detach().numpy(), w * mask)
    assert set(m.state_dict()) == {"bias", "weight_orig", "weight_mask"}
    x = np.random.default_rng(1).standard_normal((3, 5))
    y = m(fnx.tensor(x))
    y.sum().backward()
    # only the kept entries get gradient: d(sum)/dW = mask * (ones^T x)
    np.testing.assert_allclose(m.weight_orig.grad.numpy(), mask * x.sum(0), rtol=1e-12)
    assert prune.is_pruned(m)


def test_the_pre_hook_follows_the_parameter():
    m = _linear(_distinct((2, 3)))
    prune.l1_unstructured(m, "weight", amount=2)
    with fnx.no_grad():
        m.weight_orig.fill_(2.0)
    m(fnx.zeros(1, 3, dtype=fnx.float64))                  # the hook recomputes weight
    np.testing.assert_array_equal(m.weight.detach().numpy(), 2.0 * m.weight_mask.numpy())


def test_iterative_pruning_prunes_among_the_kept():
    w = _distinct((4, 6), seed=2)
    m = _linear(w)
    prune.l1_unstructured(m, "weight", amount=5)
    first = m.weight_mask.numpy().copy()
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)   # one of the 4 rows
    hooks = [h for h in m._forward_pre_hooks.values()]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(x).__name__ for x in hooks[0]] == ["L1Unstructured", "LnStructured"]
    norms = np.linalg.norm(w * first, axis=1)       # rows ranked by what is left of them
    expected = first.copy()
    expected[np.argmin(norms)] = 0
    np.testing.assert_array_equal(m.weight_mask.numpy(), expected)
    prune.remove(m, "weight")
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    np.testing.assert_array_equal(m.weight.detach().numpy(), w * expected)
    assert not prune.is_pruned(m) and not m._forward_pre_hooks


def test_global_unstructured_ranks_across_tensors():
    a, b = _distinct((3, 4), seed=3), _distinct((2, 3), seed=4) * 0.5
    ma, mb = _linear(a), _linear(b)
    prune.global_unstructured([(ma, "weight"), (mb, "weight")],
                              pruning_method=prune.L1Unstructured, amount=7)
    flat = np.abs(np.concatenate([a.ravel(), b.ravel()]))
    keep = np.ones(18)
    keep[np.argsort(flat)[:7]] = 0
    np.testing.assert_array_equal(ma.weight_mask.numpy().ravel(), keep[:12])
    np.testing.assert_array_equal(mb.weight_mask.numpy().ravel(), keep[12:])


def test_random_and_custom_masks():
    m = _linear(_distinct((5, 4)))
    fnx.manual_seed(0)
    prune.random_unstructured(m, "weight", amount=0.25)
    assert int((m.weight_mask == 0).sum()) == 5
    first = m.weight_mask.numpy().copy()
    m2 = _linear(_distinct((5, 4)))
    fnx.manual_seed(0)
    prune.random_unstructured(m2, "weight", amount=0.25)
    np.testing.assert_array_equal(m2.weight_mask.numpy(), first)     # seeded: the same
    prune.random_structured(m2, "weight", amount=2, dim=1)
    cols = m2.weight_mask.numpy().sum(0)
    assert int((cols == 0).sum()) >= 2
    c = _linear(_distinct((2, 2)))
    mask = fnx.tensor([[1.0, 0.0], [0.0, 1.0]])
    prune.custom_from_mask(c, "weight", mask)
    np.testing.assert_array_equal(c.weight.detach().numpy(),
                                  _distinct((2, 2)) * mask.numpy())
    scores = fnx.tensor([[4.0, 3.0], [2.0, 1.0]], dtype=fnx.float64)
    d = _linear(_distinct((2, 2)))
    prune.l1_unstructured(d, "weight", amount=1, importance_scores=scores)
    np.testing.assert_array_equal(d.weight_mask.numpy(), [[1, 1], [1, 0]])


def test_pruning_errors_leave_the_module_unchanged():
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="amount=5 should be smaller than the number of "
                                         "parameters to prune=4"):
        prune.l1_unstructured(m, "weight", amount=5)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(m, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(m, "weight", amount="all")
    with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                         "multidimensional tensors"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(m, "weight")], prune.LnStructured, amount=1, n=2, dim=0)
