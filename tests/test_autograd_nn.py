"""Derivative formulas of the neural-network ops (fnx/ir/aten/nn/).

Each formula is checked against central finite differences in float64 (``gradcheck``), and
the recorded node is checked to be the formula's own (not a differentiated decomposition).
A few float32 gradients are compared with NumPy gradients derived by hand, and the cases
where a formula differs from the chain rule through the decomposition on purpose
(PyTorch's conventions at kinks, overflow, ignored targets, padding rows) are checked
directly.
"""
import math

import numpy as np
import pytest
from scipy.special import erf

import fnx
from fnx.autograd import gradcheck, gradgradcheck
from fnx.ir.registry import NONDIFFERENTIABLE
from fnx.ops import aten

RNG = np.random.default_rng(1234)


def t64(*shape, lo=None, hi=None, rg=True):
    """A float64 tensor of normal (or uniform in [lo, hi]) values."""
    a = RNG.standard_normal(shape) if lo is None else RNG.uniform(lo, hi, shape)
    return fnx.tensor(a, dtype=fnx.float64, requires_grad=rg)


def away_from(x, points, gap=0.05):
    """``x`` (float64 leaf) nudged away from kinks so finite differences are meaningful."""
    a = x.detach().numpy().copy()
    for p in points:
        near = np.abs(a - p) < gap
        a[near] = p + np.where(a[near] >= p, gap, -gap)
    return fnx.tensor(a, dtype=fnx.float64, requires_grad=True)


def fresh_stats(c):
    return fnx.zeros(c, dtype=fnx.float64), fnx.ones(c, dtype=fnx.float64)


# name, function, input factory, recorded node name (None: several ops, not checked)
CASES = [
    ("softmax", lambda x: aten._softmax(x, 1, False), lambda: (t64(3, 4),),
     "SoftmaxBackward0"),
    ("softmax_neg_dim_3d", lambda x: aten._softmax(x, -3, False), lambda: (t64(2, 3, 2),),
     "SoftmaxBackward0"),
    ("softmax_0dim", lambda x: aten._softmax(x, 0, False), lambda: (t64(),),
     "SoftmaxBackward0"),
    ("log_softmax", lambda x: aten._log_softmax(x, 0, False), lambda: (t64(3, 4),),
     "LogSoftmaxBackward0"),
    ("log_softmax_0dim", lambda x: aten._log_softmax(x, -1, False), lambda: (t64(),),
     "LogSoftmaxBackward0"),
    ("gelu", lambda x: aten.gelu(x), lambda: (t64(3, 4),), "GeluBackward0"),
    ("gelu_tanh", lambda x: aten.gelu(x, approximate="tanh"), lambda: (t64(3, 4),),
     "GeluBackward0"),
    ("elu", lambda x: aten.elu(x, 1.3, 0.7, 1.5),
     lambda: (away_from(t64(3, 4), [0]),), "EluBackward0"),
    ("hardtanh", lambda x: aten.hardtanh(x, -0.5, 0.7),
     lambda: (away_from(t64(3, 4), [-0.5, 0.7]),), "HardtanhBackward0"),
    ("leaky_relu", lambda x: aten.leaky_relu(x, 0.2), lambda: (away_from(t64(3, 4), [0]),),
     "LeakyReluBackward0"),
    ("silu", lambda x: aten.silu(x), lambda: (t64(3, 4),), "SiluBackward0"),
    ("softplus", lambda x: aten.softplus(x, 2, 1), lambda: (away_from(t64(3, 4), [0.5]),),
     "SoftplusBackward0"),
    ("mish", lambda x: aten.mish(x), lambda: (t64(3, 4),), "MishBackward0"),
    ("hardsigmoid", lambda x: aten.hardsigmoid(x),
     lambda: (away_from(t64(3, 4, lo=-5, hi=5), [-3, 3]),), "HardsigmoidBackward0"),
    ("hardswish", lambda x: aten.hardswish(x),
     lambda: (away_from(t64(3, 4, lo=-5, hi=5), [-3, 3]),), "HardswishBackward0"),
    ("log_sigmoid", lambda x: aten.log_sigmoid(x), lambda: (t64(3, 4),),
     "LogSigmoidBackward0"),
    ("native_dropout_eval", lambda x: aten.native_dropout(x, 0.3, False),
     lambda: (t64(3, 4),), "NativeDropoutBackward0"),
    ("embedding", lambda w: aten.embedding(w, fnx.tensor([[1, 2, 2], [0, 9, 1]])),
     lambda: (t64(10, 3),), "EmbeddingBackward0"),
    ("layer_norm_all_outputs", lambda x, w, b: aten.native_layer_norm(x, [4], w, b, 1e-5),
     lambda: (t64(2, 3, 4), t64(4), t64(4)), "NativeLayerNormBackward0"),
    ("layer_norm_2d_shape", lambda x: aten.native_layer_norm(x, [3, 4], None, None, 1e-5)[0],
     lambda: (t64(2, 3, 4),), "NativeLayerNormBackward0"),
    ("layer_norm_stats_only", lambda x: aten.native_layer_norm(x, [4], None, None, 1e-5)[1:],
     lambda: (t64(3, 4),), "NativeLayerNormBackward0"),
    ("group_norm", lambda x, w, b: aten.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5),
     lambda: (t64(2, 6, 5), t64(6), t64(6)), "NativeGroupNormBackward0"),
    ("group_norm_no_affine", lambda x: aten.native_group_norm(x, None, None, 2, 4, 6, 2,
                                                              1e-5)[0],
     lambda: (t64(2, 4, 2, 3),), "NativeGroupNormBackward0"),
    ("batch_norm_train", lambda x, w, b: aten._native_batch_norm_legit(
        x, w, b, *fresh_stats(3), True, 0.1, 1e-5),
     lambda: (t64(4, 3, 2, 2), t64(3), t64(3)), "NativeBatchNormLegitBackward0"),
    ("batch_norm_no_stats", lambda x, w, b: aten._native_batch_norm_legit.no_stats(
        x, w, b, True, 0.1, 1e-5),
     lambda: (t64(4, 3, 5), t64(3), t64(3)), "NativeBatchNormLegitBackward0"),
    ("batch_norm_2d_input", lambda x: aten._native_batch_norm_legit.no_stats(
        x, None, None, True, 0.1, 1e-5)[0],
     lambda: (t64(5, 3),), "NativeBatchNormLegitBackward0"),
    ("batch_norm_legit_eval", lambda x, w, b: aten._native_batch_norm_legit(
        x, w, b, fnx.tensor([0.1, -0.2, 0.3], dtype=fnx.float64),
        fnx.tensor([0.5, 2.0, 1.5], dtype=fnx.float64), False, 0.1, 1e-5)[0],
     lambda: (t64(4, 3, 2, 2), t64(3), t64(3)), "NativeBatchNormLegitBackward0"),
    ("batch_norm_no_training", lambda x, w, b: aten._native_batch_norm_legit_no_training(
        x, w, b, fnx.tensor([0.1, -0.2, 0.3], dtype=fnx.float64),
        fnx.tensor([0.5, 2.0, 1.5], dtype=fnx.float64), 0.1, 1e-5)[0],
     lambda: (t64(4, 3, 2, 2), t64(3), t64(3)), "NativeBatchNormLegitNoTrainingBackward0"),
    ("batch_norm_no_training_running_stats", lambda x, w, m, v:
        aten._native_batch_norm_legit_no_training(x, w, None, m, v, 0.1, 1e-5)[0],
     lambda: (t64(4, 3, 2), t64(3), t64(3), t64(3, lo=0.5, hi=2)),
     "NativeBatchNormLegitNoTrainingBackward0"),
    ("conv2d_strided_dilated_groups", lambda x, w, b: aten.convolution(
        x, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
     lambda: (t64(2, 4, 5, 5), t64(6, 2, 3, 3), t64(6)), "ConvolutionBackward0"),
    ("conv2d_uneven_stride", lambda x, w: aten.convolution(
        x, w, None, [2, 3], [0, 1], [1, 1], False, [0, 0], 1),
     lambda: (t64(1, 2, 6, 7), t64(3, 2, 2, 3)), "ConvolutionBackward0"),
    ("conv_transpose2d", lambda x, w, b: aten.convolution(
        x, w, b, [2, 2], [1, 0], [1, 1], True, [1, 0], 2),
     lambda: (t64(2, 4, 3, 3), t64(4, 3, 2, 2), t64(6)), "ConvolutionBackward0"),
    ("conv_transpose1d_dilated", lambda x, w: aten.convolution(
        x, w, None, [3], [1], [2], True, [1], 1),
     lambda: (t64(2, 2, 4), t64(2, 3, 3)), "ConvolutionBackward0"),
    ("conv1d", lambda x, w, b: aten.convolution(x, w, b, [2], [1], [1], False, [0], 1),
     lambda: (t64(2, 2, 7), t64(3, 2, 3), t64(3)), "ConvolutionBackward0"),
    ("conv3d", lambda x, w: aten.convolution(x, w, None, [1], [0], [1], False, [0], 1),
     lambda: (t64(1, 2, 3, 4, 3), t64(2, 2, 2, 2, 2)), "ConvolutionBackward0"),
    ("max_pool2d", lambda x: aten.max_pool2d_with_indices(x, [3, 2], [2, 2], [1, 1], [1, 1],
                                                          True),
     lambda: (t64(2, 3, 6, 7),), "MaxPool2dWithIndicesBackward0"),
    ("max_pool2d_dilated_unbatched", lambda x: aten.max_pool2d_with_indices(
        x, [2, 2], [1, 1], [0, 1], [2, 1], False)[0],
     lambda: (t64(3, 5, 5),), "MaxPool2dWithIndicesBackward0"),
    ("max_pool3d", lambda x: aten.max_pool3d_with_indices(x, [2, 2, 3], [1, 2, 2], [1, 0, 1],
                                                          [1, 1, 1], False),
     lambda: (t64(2, 4, 5, 6),), "MaxPool3dWithIndicesBackward0"),
    ("avg_pool2d", lambda x: aten.avg_pool2d(x, [3, 2], [2, 2], [1, 1], True, False, None),
     lambda: (t64(2, 3, 6, 7),), "AvgPool2dBackward0"),
    ("avg_pool2d_divisor", lambda x: aten.avg_pool2d(x, [3, 2], [], [1, 0], False, True, 5),
     lambda: (t64(2, 3, 6, 7),), "AvgPool2dBackward0"),
    ("avg_pool3d", lambda x: aten.avg_pool3d(x, [2, 2, 3], [1, 2, 2], [1, 0, 1], True, False,
                                             None),
     lambda: (t64(2, 4, 5, 6),), "AvgPool3dBackward0"),
    ("adaptive_avg_pool2d", lambda x: aten._adaptive_avg_pool2d(x, [3, 4]),
     lambda: (t64(2, 3, 7, 6),), "AdaptiveAvgPool2dBackward0"),
    ("adaptive_avg_pool2d_unbatched", lambda x: aten._adaptive_avg_pool2d(x, [1, 1]),
     lambda: (t64(3, 4, 5),), "AdaptiveAvgPool2dBackward0"),
    ("adaptive_avg_pool3d", lambda x: aten._adaptive_avg_pool3d(x, [3, 4, 2]),
     lambda: (t64(2, 5, 7, 6),), "AdaptiveAvgPool3dBackward0"),
    ("cdist_broadcast_batch", lambda a, b: aten._cdist_forward(a, b, 2.0, None),
     lambda: (t64(2, 3, 4), t64(1, 5, 4)), "CdistForwardBackward0"),
    ("pdist", lambda x: aten._pdist_forward(x, 2.0), lambda: (t64(5, 3),),
     "PdistForwardBackward0"),
    ("bce", lambda x, t: aten.binary_cross_entropy(x, t, None, 1),
     lambda: (t64(3, 4, lo=0.1, hi=0.9), t64(3, 4, lo=0, hi=1)), "BinaryCrossEntropyBackward0"),
    ("bce_logits", lambda x, t: aten.binary_cross_entropy_with_logits(x, t, None, None, 1),
     lambda: (t64(3, 4), t64(3, 4, lo=0, hi=1)), "BinaryCrossEntropyWithLogitsBackward0"),
]


@pytest.mark.parametrize("name,fn,make,node", CASES, ids=[c[0] for c in CASES])
def test_formula_matches_finite_differences(name, fn, make, node):
    inputs = make()
    out = fn(*inputs)
    first = out[0] if isinstance(out, (tuple, list)) else out
    assert first.grad_fn.name() == node
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf])
def test_cdist_pdist_every_p(p):
    a, b = t64(2, 3, 4), t64(2, 5, 4)
    assert gradcheck(lambda a, b: aten._cdist_forward(a, b, p, None), (a, b))
    assert gradcheck(lambda x: aten._pdist_forward(x, p), (t64(4, 3),))


def test_cdist_zero_distance_gets_zero_gradient():
    x = t64(3, 2)
    g, = fnx.autograd.grad(aten._cdist_forward(x, x, 2.0, None).sum(), [x])
    a = x.detach().numpy()
    d = a[:, None] - a[None]
    n = np.sqrt((d * d).sum(-1))
    np.fill_diagonal(n, 1.0)
    ref = 2 * (d / n[..., None]).sum(1)       # x_i appears as both x1 and x2
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-10)
    assert np.isfinite(g.numpy()).all()


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted):
    x = t64(5, 4)
    target = fnx.tensor([0, 3, -100, 1, 3])
    w = fnx.tensor([0.5, 1.0, 2.0, 0.3], dtype=fnx.float64) if weighted else None
    out = aten.nll_loss_forward(x, target, w, reduction, -100)
    assert out[0].grad_fn.name() == "NllLossForwardBackward0"
    assert gradcheck(lambda x: aten.nll_loss_forward(x, target, w, reduction, -100)[0], (x,))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_class_weight_gradient_through_both_outputs(reduction):
    # fnx differentiates the class weights (PyTorch does not): through the loss and the
    # total weight output
    target = fnx.tensor([0, 3, -100, 1, 3])
    assert gradcheck(lambda x, w: aten.nll_loss_forward(x, target, w, reduction, -100),
                     (t64(5, 4), t64(4, lo=0.5, hi=2)))
    assert gradcheck(lambda x, w: aten.nll_loss_forward(x, fnx.tensor(1), w, reduction, -100),
                     (t64(4), t64(4, lo=0.5, hi=2)))


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_second_derivatives(reduction, weighted):
    # the input's gradient is the nll_loss_backward op (one kernel in eager); its own
    # derivative (in grad_output, the class weights and the mean's total weight) is what
    # a double backward (MAML, gradient penalties) differentiates
    target = fnx.tensor([0, 3, -100, 1, 3])
    if weighted:
        assert gradgradcheck(lambda x, w: aten.nll_loss_forward(x, target, w, reduction,
                                                                -100)[0],
                             (t64(5, 4), t64(4, lo=0.5, hi=2)))
    else:
        assert gradgradcheck(lambda x: aten.nll_loss_forward(x, target, None, reduction,
                                                             -100)[0], (t64(5, 4),))
    assert gradgradcheck(lambda x: aten.cross_entropy_loss(x, target, None, reduction),
                         (t64(5, 4),))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_backward_against_numpy(reduction):
    # d loss / d x of the float32 kernel: -w[t_n] g_n at (n, t_n), over the total weight
    # for the mean, zero on ignored rows
    x = fnx.tensor(RNG.standard_normal((5, 4)).astype(np.float32), requires_grad=True)
    t = np.array([0, 3, -100, 1, 3])
    w = np.array([0.5, 1.0, 2.0, 0.3], np.float32)
    out = aten.nll_loss_forward(x, fnx.tensor(t), fnx.tensor(w), reduction, -100)[0]
    g = RNG.uniform(0.5, 2, out.shape).astype(np.float32)
    gx, = fnx.autograd.grad(out, [x], fnx.tensor(g))
    kept = t != -100
    total = w[t[kept]].sum()
    ref = np.zeros((5, 4), np.float32)
    for n in np.flatnonzero(kept):
        gn = g[n] if reduction == 0 else g / total if reduction == 1 else g
        ref[n, t[n]] = -w[t[n]] * gn
    assert gx.dtype is fnx.float32
    np.testing.assert_allclose(gx.numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_1d_input(reduction):
    w = fnx.tensor([0.5, 1.0, 2.0, 0.3], dtype=fnx.float64)
    assert gradcheck(lambda x: aten.nll_loss_forward(x, fnx.tensor(2), w, reduction, -100)[0],
                     (t64(4),))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_nll_loss_all_targets_ignored_gives_zero_gradient():
    # PyTorch writes nothing for ignored rows: the NaN mean (0 / 0) does not leak into them
    x = t64(3, 4)
    loss = aten.nll_loss_forward(x, fnx.tensor([-100, -100, -100]), None, 1, -100)[0]
    assert math.isnan(loss.item())
    g, = fnx.autograd.grad(loss, [x])
    np.testing.assert_array_equal(g.numpy(), np.zeros((3, 4)))


def test_cross_entropy_float32_matches_softmax_minus_one_hot():
    logits = RNG.standard_normal((4, 5)).astype(np.float32)
    target = np.array([1, 0, 4, 2])
    x = fnx.tensor(logits, requires_grad=True)
    loss = aten.cross_entropy_loss(x, fnx.tensor(target))
    loss.backward()
    e = np.exp(logits - logits.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    ref[np.arange(4), target] -= 1
    assert x.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), ref / 4, rtol=1e-5, atol=1e-6)


def test_softmax_float32_hand_gradient():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    g = RNG.standard_normal((3, 4)).astype(np.float32)
    x = fnx.tensor(a, requires_grad=True)
    y = aten._softmax(x, 1, False)
    y.backward(fnx.tensor(g))
    s = np.exp(a) / np.exp(a).sum(1, keepdims=True)
    ref = s * (g - (g * s).sum(1, keepdims=True))
    assert x.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_log_softmax_half_to_float_gradient_is_half():
    x = fnx.tensor(RNG.standard_normal((2, 3)), dtype=fnx.float16, requires_grad=True)
    y = aten._log_softmax(x, 1, True)
    assert y.dtype is fnx.float32
    y.sum().backward()
    assert x.grad.dtype is fnx.float16
    s = np.exp(y.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy().astype(np.float32), 1 - 3 * s, atol=2e-3)


def test_gelu_float32_hand_gradient():
    a = RNG.standard_normal(6).astype(np.float32)
    x = fnx.tensor(a, requires_grad=True)
    aten.gelu(x).sum().backward()
    ref = 0.5 * (1 + erf(a / np.sqrt(2))) + a * np.exp(-a * a / 2) / np.sqrt(2 * np.pi)
    assert x.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_layer_norm_float32_hand_gradient():
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    g = RNG.standard_normal((3, 5)).astype(np.float32)
    wv = RNG.standard_normal(5).astype(np.float32)
    x = fnx.tensor(a, requires_grad=True)
    w = fnx.tensor(wv, requires_grad=True)
    b = fnx.zeros(5, requires_grad=True)
    out = aten.native_layer_norm(x, [5], w, b, 1e-5)[0]
    out.backward(fnx.tensor(g))
    mu = a.mean(1, keepdims=True)
    r = 1 / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    xh = (a - mu) * r
    gy = g * wv
    ref = r * (gy - gy.mean(1, keepdims=True) - xh * (gy * xh).mean(1, keepdims=True))
    for t in (x, w, b):
        assert t.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), (g * xh).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), g.sum(0), rtol=1e-5, atol=1e-6)


def test_batch_norm_float32_hand_gradient_and_buffers_stay_out_of_the_graph():
    a = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    g = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    x = fnx.tensor(a, requires_grad=True)
    rm, rv = fnx.zeros(2), fnx.ones(2)
    out = aten._native_batch_norm_legit(x, None, None, rm, rv, True, 0.1, 1e-5)[0]
    # the running statistics are buffers: updated, but never part of the graph
    assert not rm.requires_grad and not rv.requires_grad and rm.grad_fn is None
    assert rm.abs().sum().item() > 0
    out.backward(fnx.tensor(g))
    mu = a.mean((0, 2), keepdims=True)
    r = 1 / np.sqrt(a.var((0, 2), keepdims=True) + 1e-5)
    xh = (a - mu) * r
    ref = r * (g - g.mean((0, 2), keepdims=True) - xh * (g * xh).mean((0, 2), keepdims=True))
    assert x.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm", ["batch", "layer", "group"])
def test_inplace_relu_after_norm_still_differentiates(norm):
    # the norms recompute their statistics instead of saving their outputs, so modifying
    # the output in place (nn.ReLU(inplace=True) after BatchNorm) is allowed, as in PyTorch
    x = t64(4, 2, 3)
    if norm == "batch":
        y = aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)[0]
    elif norm == "layer":
        y = aten.native_layer_norm(x, [3], None, None, 1e-5)[0]
    else:
        y = aten.native_group_norm(x, None, None, 4, 2, 3, 1, 1e-5)[0]
    mask = y.detach().numpy() > 0
    y2 = y * 1.0
    g_ref, = fnx.autograd.grad(y2, [x], fnx.tensor(mask.astype(np.float64)), retain_graph=True)
    y.relu_()
    g, = fnx.autograd.grad(y, [x], fnx.ones_like(y))
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-12, atol=1e-12)


def test_hardtanh_and_leaky_relu_at_the_kinks():
    x = fnx.tensor([-1.0, -0.5, 0.0, 0.7, 1.0, math.nan], requires_grad=True)
    aten.hardtanh(x, -0.5, 0.7).sum().backward()
    # zero at the bounds themselves (clamp would pass them); NaN passes through
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 0, 0, 1])
    x = fnx.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    aten.leaky_relu(x, 0.25).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.25, 0.25, 1.0])
    assert x.grad.dtype is fnx.float32


def test_hardswish_hardsigmoid_at_the_kinks():
    x = fnx.tensor([-4.0, -3.0, 0.0, 3.0, 4.0], requires_grad=True)
    aten.hardswish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, -0.5, 0.5, 1.5, 1], rtol=1e-6)
    x = fnx.tensor([-4.0, -3.0, 0.0, 3.0, 4.0], requires_grad=True)
    aten.hardsigmoid(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0, 1 / 6, 0, 0], rtol=1e-6)


def test_softplus_and_mish_large_inputs_have_finite_gradients():
    x = fnx.tensor([-200.0, 0.0, 50.0, 200.0], requires_grad=True)
    aten.softplus(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0.5, 1, 1], rtol=1e-6, atol=1e-30)
    x = fnx.tensor([-200.0, 200.0], requires_grad=True)
    aten.mish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 1], atol=1e-6)


def test_bce_gradients_finite_at_zero_and_one():
    x = fnx.tensor([0.0, 1.0, 0.5], dtype=fnx.float64, requires_grad=True)
    t = fnx.tensor([0.0, 1.0, 1.0], dtype=fnx.float64)
    g, = fnx.autograd.grad(aten.binary_cross_entropy(x, t, None, 2), [x])
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, -2.0])
    z = fnx.zeros(3, dtype=fnx.float64, requires_grad=True)
    g, = fnx.autograd.grad(aten.binary_cross_entropy_with_logits(z, t, None, None, 2), [z])
    np.testing.assert_allclose(g.numpy(), [0.5, -0.5, -0.5])     # sigmoid(0) - t


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_bce_weights_and_target_gradients(reduction):
    # the (broadcast) weights and pos_weight get gradients too (PyTorch refuses them)
    w, pw = t64(4, lo=0.1, hi=2), t64(4, lo=0.5, hi=3)
    t = t64(3, 4, lo=0, hi=1)
    assert gradcheck(lambda x, t, w: aten.binary_cross_entropy(x, t, w, reduction),
                     (t64(3, 4, lo=0.1, hi=0.9), t, w))
    assert gradcheck(lambda x, t, w, pw: aten.binary_cross_entropy_with_logits(x, t, w, pw,
                                                                               reduction),
                     (t64(3, 4), t, w, pw))
    assert gradcheck(lambda x, t, w: aten.binary_cross_entropy_with_logits(x, t, w, None,
                                                                           reduction),
                     (t64(3, 4), t, w))


def test_embedding_padding_idx_and_scale_grad_by_freq():
    wv = RNG.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([[1, 2, 2], [0, 5, 2]])
    g = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    w = fnx.tensor(wv, requires_grad=True)
    aten.embedding(w, fnx.tensor(idx), 2).backward(fnx.tensor(g))
    ref = np.zeros_like(wv)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3))
    ref[2] = 0                                              # the padding row gets nothing
    assert w.grad.dtype is fnx.float32
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-6)
    w = fnx.tensor(wv, requires_grad=True)
    aten.embedding(w, fnx.tensor(idx), -1, True).backward(fnx.tensor(g))
    counts = np.bincount(idx.reshape(-1), minlength=6)
    ref = np.zeros_like(wv)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3) / counts[idx.reshape(-1)][:, None])
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [-1, 4])
def test_embedding_bag(mode, include_last_offset, padding_idx):
    idx = fnx.tensor([1, 2, 4, 5, 4, 3, 2, 0])
    offs = fnx.tensor([0, 2, 2, 5])            # an empty bag in the middle
    w = t64(6, 3)

    def f(w):
        return aten._embedding_bag(w, idx, offs, False, mode, False, None, include_last_offset,
                                   padding_idx)[0]
    assert f(w).grad_fn.name() == "EmbeddingBagBackward0"
    assert gradcheck(f, (w,))


def test_embedding_bag_per_sample_weights():
    idx = fnx.tensor([1, 2, 4, 5, 4])
    offs = fnx.tensor([0, 2])
    assert gradcheck(lambda w, p: aten._embedding_bag(w, idx, offs, False, 0, False, p, False,
                                                      4)[0], (t64(6, 3), t64(5)))


def test_native_dropout_gradient_is_mask_times_scale():
    x = fnx.tensor(RNG.standard_normal((40, 50)).astype(np.float32), requires_grad=True)
    out, mask = aten.native_dropout(x, 0.25, True)
    assert out.grad_fn.name() == "NativeDropoutBackward0"
    out.sum().backward()
    m = mask.numpy()
    assert 0 < m.mean() < 1
    assert x.grad.dtype is fnx.float32
    np.testing.assert_allclose(x.grad.numpy(), m / 0.75, rtol=1e-6)
    x = fnx.ones(3, 4, requires_grad=True)
    aten.native_dropout(x, 1.0, True)[0].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))


def test_max_pool2d_float32_gradient_goes_to_the_max():
    a = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)[..., ::-1].copy()
    x = fnx.tensor(a, requires_grad=True)
    aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)[0].sum().backward()
    ref = np.zeros_like(a)
    for i in range(0, 4, 2):
        for j in range(0, 4, 2):
            win = a[0, 0, i:i + 2, j:j + 2]
            k = np.unravel_index(win.argmax(), win.shape)
            ref[0, 0, i + k[0], j + k[1]] = 1
    assert x.grad.dtype is fnx.float32
    np.testing.assert_array_equal(x.grad.numpy(), ref)


def test_conv2d_float32_matches_float64_gradients():
    xs, ws = RNG.standard_normal((2, 3, 5, 5)), RNG.standard_normal((4, 3, 3, 3))
    grads = {}
    for dt in (fnx.float32, fnx.float64):
        x = fnx.tensor(xs, dtype=dt, requires_grad=True)
        w = fnx.tensor(ws, dtype=dt, requires_grad=True)
        b = fnx.zeros(4, dtype=dt, requires_grad=True)
        aten.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1).sum().backward()
        grads[dt] = (x.grad, w.grad, b.grad)
    for g32, g64 in zip(grads[fnx.float32], grads[fnx.float64]):
        assert g32.dtype is fnx.float32
        np.testing.assert_allclose(g32.numpy(), g64.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[fnx.float64][2].numpy(), np.full(4, 50.0))


def test_cosine_similarity_zero_vector_gradient_is_finite():
    # the norm's gradient at a zero vector is 0 (sqrt's chain rule would give 0 * inf)
    x1 = fnx.zeros(2, 3, dtype=fnx.float64, requires_grad=True)
    x2 = t64(2, 3)
    g1, g2 = fnx.autograd.grad(aten.cosine_similarity(x1, x2).sum(), [x1, x2])
    b = x2.detach().numpy()
    np.testing.assert_allclose(g1.numpy(), b / np.linalg.norm(b, axis=1, keepdims=True) / 1e-8)
    np.testing.assert_array_equal(g2.numpy(), np.zeros((2, 3)))


def test_running_stats_that_require_grad_are_updated_outside_the_graph():
    x = t64(2, 3, 4)
    rm, rv = t64(3), t64(3, lo=0.5, hi=2)
    before = rm.detach().numpy().copy()
    out = aten.instance_norm(x, None, None, rm, rv, True, 0.1, 1e-5, False)
    assert rm.grad_fn is None and rm.is_leaf
    assert not np.array_equal(rm.detach().numpy(), before)
    g, = fnx.autograd.grad((out * out).sum(), [x])
    assert np.isfinite(g.numpy()).all()


def test_one_hot_is_nondifferentiable():
    assert aten.one_hot.default.derivative is NONDIFFERENTIABLE


SECOND_ORDER = [
    ("softmax", lambda x: aten._softmax(x, 1, False), lambda: (t64(2, 3),)),
    ("log_softmax", lambda x: aten._log_softmax(x, 1, False), lambda: (t64(2, 3),)),
    ("gelu", lambda x: aten.gelu(x), lambda: (t64(5),)),
    ("gelu_tanh", lambda x: aten.gelu(x, approximate="tanh"), lambda: (t64(5),)),
    ("silu", lambda x: aten.silu(x), lambda: (t64(5),)),
    ("elu", lambda x: aten.elu(x), lambda: (away_from(t64(5), [0]),)),
    ("softplus", lambda x: aten.softplus(x), lambda: (t64(5),)),
    ("layer_norm", lambda x, w: aten.native_layer_norm(x, [3], w, None, 1e-5)[0],
     lambda: (t64(2, 3), t64(3))),
    ("batch_norm", lambda x, w: aten._native_batch_norm_legit.no_stats(x, w, None, True, 0.1,
                                                                        1e-5)[0],
     lambda: (t64(3, 2, 2), t64(2))),
    ("conv2d", lambda x, w: aten.convolution(x, w, None, [2, 1], [1, 0], [1, 1], False, [0, 0],
                                             1),
     lambda: (t64(1, 2, 4, 4), t64(2, 2, 2, 2))),
    ("nll_loss", lambda x: aten.nll_loss_forward(aten._log_softmax(x, 1, False),
                                                 fnx.tensor([0, 2]), None, 1, -100)[0],
     lambda: (t64(2, 3),)),
]


@pytest.mark.parametrize("name,fn,make", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order(name, fn, make):
    assert gradgradcheck(fn, make())
