"""A multi-output op whose backward needs one output saves only that one, as PyTorch does:
changing another output in place afterwards (``MaxPool2d`` then ``ReLU(inplace=True)``, as in
the Spatial Transformer tutorial's localization net) leaves the backward valid, and the
gradients match NumPy's."""
import numpy as np
import pytest

import fnx
import fnx.nn.functional as F

RNG = np.random.default_rng(0)


def _x(*shape):
    # distinct values: no ties for the max/sort/topk positions
    return RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float64) - np.prod(shape) / 2


def _grad_after_relu_(f, a):
    x = fnx.tensor(a, requires_grad=True)
    y = f(x)
    y.relu_()                  # in place on the output the backward does not need
    y.sum().backward()
    return x.grad.numpy()


def test_max_pool2d_then_inplace_relu():
    a = _x(2, 3, 4, 4)
    got = _grad_after_relu_(lambda x: fnx.nn.ReLU(True)(fnx.nn.MaxPool2d(2)(x)) * 1.0, a)
    got2 = _grad_after_relu_(lambda x: F.max_pool2d(x, 2), a)
    w = a.reshape(2, 3, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 4)
    ref = np.zeros_like(w)
    best = w.argmax(-1)
    np.put_along_axis(ref, best[..., None], (np.take_along_axis(w, best[..., None], -1) > 0), -1)
    ref = ref.reshape(2, 3, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 4, 4)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got2, ref)


def test_max_pool3d_then_inplace_relu():
    a = _x(1, 2, 2, 2, 4)                  # output (1, 2, 1, 1, 2): windows of 2x2x2
    got = _grad_after_relu_(lambda x: F.max_pool3d(x, 2), a)
    ref = np.zeros_like(a)
    for c in range(2):
        for o in range(2):
            win = a[0, c, :, :, 2 * o:2 * o + 2]
            i, j, k = np.unravel_index(win.argmax(), win.shape)
            ref[0, c, i, j, 2 * o + k] = win.max() > 0
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("which", ["max", "min"])
def test_max_min_dim_values_changed_in_place(which):
    a = _x(3, 5)
    got = _grad_after_relu_(lambda x: getattr(x, which)(1)[0], a)
    i = getattr(a, "arg" + which)(1)
    ref = np.zeros_like(a)
    ref[np.arange(3), i] = a[np.arange(3), i] > 0
    np.testing.assert_array_equal(got, ref)


def test_sort_and_topk_values_changed_in_place():
    a = _x(3, 5)
    np.testing.assert_array_equal(_grad_after_relu_(lambda x: x.sort(1)[0], a),
                                  (a > 0).astype(np.float64))
    got = _grad_after_relu_(lambda x: x.topk(2, 1)[0], a)
    ref = np.zeros_like(a)
    top = np.argsort(-a, 1)[:, :2]
    np.put_along_axis(ref, top, np.take_along_axis(a, top, 1) > 0, 1)
    np.testing.assert_array_equal(got, ref)


def test_std_mean_mean_changed_in_place():
    a = _x(3, 4)
    x = fnx.tensor(a, requires_grad=True)
    std, mean = fnx.std_mean(x, 1)
    mean.mul_(3)                       # only the std is saved
    (std + mean).sum().backward()
    n = a.shape[1]
    c = a - a.mean(1, keepdims=True)
    ref = c / ((n - 1) * a.std(1, ddof=1, keepdims=True)) + 3 / n
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-12)
    # the std is saved: changing it in place still makes backward raise, as in PyTorch
    x = fnx.tensor(a, requires_grad=True)
    std, _ = fnx.std_mean(x, 1)
    std.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        std.sum().backward()


def test_dropout_output_changed_in_place():
    a = np.abs(_x(4, 6)) + 1.0          # nonzero: a zero output means dropped
    x = fnx.tensor(a, requires_grad=True)
    y = F.dropout(x, 0.25)
    kept = y.detach().numpy() != 0
    y.mul_(3.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept * 3.0 / 0.75, rtol=1e-12)


def test_embedding_bag_max_output_changed_in_place():
    w = _x(5, 3)
    weight = fnx.tensor(w, requires_grad=True)
    idx = fnx.tensor([0, 1, 2, 3, 4])
    out = F.embedding_bag(idx, weight, fnx.tensor([0, 2]), mode="max")
    out.relu_()
    out.sum().backward()
    ref = np.zeros_like(w)
    for bag in ([0, 1], [2, 3, 4]):
        rows = np.array(bag)[w[bag].argmax(0)]
        ref[rows, np.arange(3)] = w[rows, np.arange(3)] > 0
    np.testing.assert_array_equal(weight.grad.numpy(), ref)
