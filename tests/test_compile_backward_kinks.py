"""A compiled function called outside a trace and differentiated afterwards
(``fnx.compile(model)`` then an eager ``loss.backward()``) gets its backward from fnx's own
derivative formulas (a joint trace, ``fnx.graph.joint``). It used to be ``jax.vjp`` of the
lowered program: JAX's derivative of the decomposition, not the op's own formula, and only
where the program let JAX see a stop. Where they differed (a tie of ``maximum``, a clamp
bound, abs at 0, ``detach()``, a ``no_grad`` block, ``.data``, an embedding's padding row)
the compiled gradient was silently not eager's. These tests pin those points against
hand-computed PyTorch gradients (the ``jax.vjp`` path, still the fallback, keeps the
decompositions' fixes)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F

NAN = math.nan

CASES = {
    # name: (function, input, d sum(out * g) / dx for g = [1, 2, 3, 4, 5])
    "relu": (fnx.relu, [0.0, -1.0, 2.0, -0.0, NAN], [0, 0, 3, 0, 5]),
    "relu of relu": (lambda x: fnx.relu(fnx.relu(x)), [0.0, -1.0, 2.0, 0.0, 3.0],
                     [0, 0, 3, 0, 5]),
    "clamp at its bounds": (lambda x: x.clamp(0.0, 1.0), [0.0, 1.0, 0.5, 2.0, NAN],
                            [1, 2, 3, 0, 0]),
    "clamp_min": (lambda x: x.clamp(min=0), [0.0, -1.0, 2.0, 0.0, NAN], [1, 0, 3, 4, 0]),
    "clamp with min > max": (lambda x: x.clamp(2.0, 1.0), [0.0, 1.0, 1.5, 2.0, 3.0],
                             [0, 0, 0, 0, 0]),
    "hardtanh": (lambda x: F.hardtanh(x, 0.0, 1.0), [0.0, 1.0, 0.5, 2.0, NAN],
                 [0, 0, 3, 0, 5]),
    "relu6": (F.relu6, [0.0, 6.0, 3.0, 7.0, -1.0], [0, 0, 3, 0, 0]),
    "hardsigmoid": (F.hardsigmoid, [-3.0, 3.0, 0.0, 4.0, -4.0], [0, 0, 0.5, 0, 0]),
    "hardswish at -3 and 3": (F.hardswish, [-3.0, 3.0, 0.0, 4.0, -4.0],
                              [-0.5, 3.0, 1.5, 4, 0]),
    "abs": (lambda x: x.abs(), [0.0, -1.0, 2.0, -0.0, -3.0], [0, -2, 3, 0, -5]),
    "x * x.detach()": (lambda x: x * x.detach(), [1.0, -1.0, 2.0, 0.5, 3.0],
                       [1, -2, 6, 2, 15]),
    "x * x.data": (lambda x: x * x.data, [1.0, -1.0, 2.0, 0.5, 3.0], [1, -2, 6, 2, 15]),
    "no_grad block": (lambda x: x * _no_grad_double(x), [1.0, -1.0, 2.0, 0.5, 3.0],
                      [2, -4, 12, 4, 30]),
}


def _no_grad_double(x):
    with fnx.no_grad():
        return x * 2


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_gradient_at_kinks_is_the_ops_own(name):
    fn, values, expected = CASES[name]
    g = fnx.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    grads = []
    for run in (fn, fnx.compile(fn)):
        x = fnx.tensor(values, requires_grad=True)
        out = run(x)
        (out * g).sum().backward()
        grads.append(x.grad.numpy())
        ref = np.asarray(fn(fnx.tensor(values)).numpy())
        np.testing.assert_array_equal(out.detach().numpy(), ref)    # values: NaN stays
    eager, compiled = grads
    np.testing.assert_array_equal(eager, np.float32(expected))
    np.testing.assert_array_equal(compiled, eager)


def test_compiled_module_on_zero_padded_rows_gets_eager_gradients():
    # a zero (padding) row through a Linear whose bias starts at zero (nn.init.zeros_) is
    # exactly 0 before the ReLU: the compiled module's first bias got half its gradient
    def make():
        fnx.manual_seed(0)
        m = fnx.nn.Sequential(fnx.nn.Linear(6, 8), fnx.nn.ReLU(), fnx.nn.Linear(8, 1))
        fnx.nn.init.zeros_(m[0].bias)
        return m
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    x[3:] = 0.0
    grads = []
    for compiled in (False, True):
        m = make()
        run = fnx.compile(m) if compiled else m
        run(fnx.tensor(x)).sum().backward()
        grads.append([p.grad.numpy() for p in m.parameters()])
    # the first bias's gradient by hand: rows with a positive pre-activation pass w2
    w2 = make()[2].weight.detach().numpy()[0]
    m = make()
    h = x @ m[0].weight.detach().numpy().T
    np.testing.assert_allclose(grads[0][1], ((h > 0) * w2).sum(0), rtol=1e-5, atol=1e-6)
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_compiled_embedding_leaves_its_padding_row_alone():
    e = fnx.nn.Embedding(4, 2, padding_idx=0)
    g = fnx.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for run in (e, fnx.compile(e)):
        e.zero_grad()
        (run(fnx.tensor([0, 1, 0])) * g).sum().backward()
        # row 1 gets its one lookup's gradient; the padding row 0 none
        np.testing.assert_array_equal(e.weight.grad.numpy(),
                                      [[0, 0], [3, 4], [0, 0], [0, 0]])


def test_compiled_fake_quantize_passes_the_gradient_straight_through():
    # quantization-aware training: the gradient passes where the value is in range (the
    # straight-through estimator), where JAX alone would differentiate round() to 0
    x = [0.05, -0.3, 1.0, 20.0, -20.0]       # scale 0.1, range [-128, 127] * 0.1
    g = fnx.tensor([1.0, 2.0, 3.0, 4.0, 5.0])

    def per_tensor(t):
        return fnx.fake_quantize_per_tensor_affine(t, 0.1, 0, -128, 127)

    def per_channel(t):
        return fnx.fake_quantize_per_channel_affine(t.reshape(1, 5), fnx.full((5,), 0.1),
                                                    fnx.zeros(5, dtype=fnx.int32), 1,
                                                    -128, 127).reshape(5)
    for fn in (per_tensor, per_channel):
        for run in (fn, fnx.compile(fn)):
            t = fnx.tensor(x, requires_grad=True)
            out = run(t)
            (out * g).sum().backward()
            np.testing.assert_array_equal(t.grad.numpy(), [1, 2, 3, 0, 0])
            np.testing.assert_allclose(out.detach().numpy(), [0.0, -0.3, 1.0, 12.7, -12.8],
                                       rtol=1e-6, atol=1e-7)


def test_compiled_gradient_of_clamp_with_tensor_bounds_at_a_bound():
    lo, hi = fnx.zeros(3), fnx.ones(3)
    grads = []
    for run in (lambda x: x.clamp(lo, hi), fnx.compile(lambda x: x.clamp(lo, hi))):
        x = fnx.tensor([0.0, 1.0, 0.5], requires_grad=True)
        run(x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [1.0, 1.0, 1.0]
