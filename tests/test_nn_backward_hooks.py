"""Module backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``
and the deprecated ``register_backward_hook``) against gradients worked out with NumPy."""
import warnings

import numpy as np
import pytest

import fnx
from fnx import nn


def _linear(rng):
    lin = nn.Linear(3, 2)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    with fnx.no_grad():
        lin.weight.copy_(fnx.tensor(w))
    return lin, w


def test_full_backward_hook_sees_the_gradients_of_inputs_and_outputs(rng):
    lin, w = _linear(rng)
    x = fnx.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    c = rng.standard_normal((4, 2)).astype(np.float32)
    seen = []
    handle = lin.register_full_backward_hook(
        lambda m, gi, go: seen.append((m, [g.numpy() for g in gi], [g.numpy() for g in go])))
    (lin(x) * fnx.tensor(c)).sum().backward()
    (module, (gx,), (gy,)), = seen
    assert module is lin
    np.testing.assert_allclose(gy, c)                       # dL/dy
    np.testing.assert_allclose(gx, c @ w, rtol=1e-6)        # dL/dx = dL/dy W
    np.testing.assert_allclose(x.grad.numpy(), c @ w, rtol=1e-6)
    handle.remove()
    (lin(x) * fnx.tensor(c)).sum().backward()
    assert len(seen) == 1


def test_hooks_replace_gradients(rng):
    lin, w = _linear(rng)
    x = fnx.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    xn = x.detach().numpy()
    # the pre-hook doubles grad_output: the weight's gradient doubles; the hook then
    # replaces grad_input with zeros: x gets none
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    lin.register_full_backward_hook(lambda m, gi, go: (fnx.zeros_like(gi[0]),))
    lin(x).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * np.ones((2, 4)) @ xn, rtol=1e-6)
    assert not x.grad.numpy().any()


def test_a_module_whose_inputs_need_no_grad_gets_none_input_gradients():
    lin = nn.Linear(3, 2)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].shape)))
    lin(fnx.ones(5, 3)).sum().backward()
    assert seen == [((None,), (5, 2))]
    lin2 = nn.Linear(3, 2)
    lin2.register_full_backward_hook(lambda m, gi, go: (fnx.ones(5, 3),))
    with pytest.raises(RuntimeError, match="must return None"):
        lin2(fnx.ones(5, 3)).sum().backward()


def test_wrong_number_of_replacements_and_mixed_hook_kinds_raise():
    lin = nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                           "expected 1"):
        lin(fnx.ones(1, 3, requires_grad=True)).sum().backward()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        lin.register_backward_hook(lambda m, gi, go: None)


def test_legacy_backward_hook_sees_the_last_ops_gradients():
    relu = nn.ReLU()
    seen = []
    relu.register_backward_hook(lambda m, gi, go: seen.append((gi[0].tolist(), go[0].tolist())))
    x = fnx.tensor([-1.0, 2.0], requires_grad=True) * 1     # (made by a node: as relu's input)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # one op on it: no deprecation warning
        (relu(x) * fnx.tensor([3.0, 5.0])).sum().backward()
    assert seen == [([0.0, 5.0], [3.0, 5.0])]
    seq = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    seq.register_backward_hook(lambda m, gi, go: None)
    with pytest.warns(FutureWarning, match="non-full backward hook"):
        seq(fnx.ones(1, 2, requires_grad=True))
