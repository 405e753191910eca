"""The autograd engine: backward/grad, grad mode, leaves, hooks, in-place rules, views,
custom Functions, gradcheck. References are hand-derived derivatives and finite differences."""
import gc
import weakref

import numpy as np
import pytest

import fnx
from fnx.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def t64(a, rg=True):
    return fnx.tensor(np.asarray(a, dtype=np.float64), requires_grad=rg)


def npy(t):
    return t.detach().numpy()


# ----------------------------------------------------------------------------- basics

def test_polynomial_gradient_matches_hand_derivative():
    x = t64([0.5, -1.0, 2.0])
    y = (x * x * x - 2 * x).sum()       # d/dx = 3x^2 - 2
    y.backward()
    np.testing.assert_allclose(npy(x.grad), 3 * npy(x) ** 2 - 2)
    assert x.grad.dtype is fnx.float64 and x.grad.requires_grad is False


def test_broadcasting_gradients_are_summed_to_the_input_shape():
    a = t64(np.arange(6.0).reshape(2, 3))
    b = t64([1.0, 2.0, 3.0])
    (a * b).sum().backward()
    np.testing.assert_allclose(npy(b.grad), npy(a).sum(0))
    np.testing.assert_allclose(npy(a.grad), np.broadcast_to(npy(b), (2, 3)))


def test_gradients_accumulate_across_backward_calls():
    x = t64([1.0, 2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 3 + 2 * npy(x))


def test_matmul_mlp_gradient_matches_numpy():
    rng = np.random.default_rng(0)
    xn, wn, bn = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5)
    w, b = t64(wn), t64(bn)
    h = (fnx.tensor(xn) @ w + b).tanh()
    h.sum().backward()
    dh = 1 - np.tanh(xn @ wn + bn) ** 2
    np.testing.assert_allclose(npy(w.grad), xn.T @ dh, rtol=1e-12)
    np.testing.assert_allclose(npy(b.grad), dh.sum(0), rtol=1e-12)


def test_second_backward_without_retain_graph_raises():
    x = t64([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = t64([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(npy(x.grad), 4 * npy(x))


def test_grad_returns_gradients_and_leaves_dot_grad_alone():
    x, w = t64([1.0, 2.0]), t64([3.0, 4.0])
    gx, gw = fnx.autograd.grad((x * w).sum(), (x, w))
    np.testing.assert_allclose(npy(gx), [3.0, 4.0])
    np.testing.assert_allclose(npy(gw), [1.0, 2.0])
    assert x.grad is None and w.grad is None


def test_second_derivative_with_create_graph():
    x = t64(1.5)
    (g,) = fnx.autograd.grad(x ** 3, x, create_graph=True)
    assert g.requires_grad
    (h,) = fnx.autograd.grad(g, x)
    assert g.item() == pytest.approx(3 * 1.5 ** 2)
    assert h.item() == pytest.approx(6 * 1.5)


def test_grad_of_unused_input_needs_allow_unused():
    x, z = t64([1.0]), t64([2.0])
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        fnx.autograd.grad((x * 2).sum(), (x, z))
    gx, gz = fnx.autograd.grad((x * 2).sum(), (x, z), allow_unused=True)
    assert gz is None and gx.item() == 2.0


def test_implicit_gradient_only_for_scalars():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(fnx.tensor([1.0, 10.0], dtype=fnx.float64))
    np.testing.assert_allclose(npy(x.grad), [2.0, 20.0])


def test_backward_on_a_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        fnx.ones(2).sum().backward()


def test_backward_inputs_restricts_accumulation():
    x, w = t64([1.0, 2.0]), t64([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(npy(w.grad), [1.0, 2.0])


# ----------------------------------------------------------------------------- grad mode

def test_no_grad_enable_grad_and_set_grad_enabled():
    x = t64([1.0])
    with fnx.no_grad():
        assert not (x * 2).requires_grad
        assert not fnx.is_grad_enabled()
        with fnx.enable_grad():
            assert (x * 2).requires_grad
    assert fnx.is_grad_enabled()
    with fnx.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @fnx.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    assert not f(x).requires_grad       # the decorator works on every call
    with fnx.inference_mode():
        assert not (x + 1).requires_grad


def test_leaf_and_non_leaf_semantics():
    x = t64([1.0, 2.0])
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.grad_fn is not None
    assert fnx.ones(2).is_leaf
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating point and complex"):
        fnx.tensor([1, 2]).requires_grad_()
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 7.0                           # shares memory with y, as PyTorch's detach
    assert y[0].item() == 7.0


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = t64([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.retains_grad
    np.testing.assert_allclose(npy(y.grad), 2 * npy(y))
    z = x * 3
    (z * z).sum().backward()
    assert z.grad is None


def test_tensor_hooks_on_leaf_and_non_leaf():
    x = t64([1.0, 2.0])
    seen = []
    hx = x.register_hook(lambda g: g * 10)
    y = x * 2
    y.register_hook(lambda g: seen.append(npy(g).copy()))
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [20.0, 20.0])
    np.testing.assert_allclose(seen[0], [1.0, 1.0])
    hx.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        fnx.ones(1).register_hook(lambda g: g)


def test_grad_assignment_is_checked():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = fnx.zeros(3, dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = fnx.zeros(2)
    x.grad = fnx.ones(2, dtype=fnx.float64)
    (x * 1).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


# ----------------------------------------------------------------------------- in-place rules

def test_inplace_on_a_leaf_that_requires_grad_raises_and_leaves_it_unchanged():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.mul_(2)
    np.testing.assert_allclose(npy(x), [1.0, 2.0])
    with fnx.no_grad():
        x.mul_(2)                        # optimizers update leaves like this
    np.testing.assert_allclose(npy(x), [2.0, 4.0])


def test_modified_saved_tensor_raises_pytorch_error():
    x = t64([1.0, 2.0])
    a = x * 2
    b = a * a                            # saves a
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*version 1; "
                                           "expected version 0"):
        b.sum().backward()


def test_inplace_chain_when_nothing_needed_was_saved():
    x = t64([1.0, -2.0, 3.0])
    a = x + 1                            # add saves nothing
    a.mul_(3)                            # mul_ saves the other operand only
    a.relu_()                            # relu uses its result
    a.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 3.0 * ((npy(x) + 1) * 3 > 0))


def test_inplace_on_a_view_flows_to_the_base():
    w = t64([1.0, 2.0, 3.0])
    x = w.clone()
    x[1:].mul_(5)
    (x * x).sum().backward()
    # x = [w0, 5 w1, 5 w2]; d/dw sum(x^2) = [2 w0, 50 w1, 50 w2]
    np.testing.assert_allclose(npy(w.grad), [2.0, 100.0, 150.0])


def test_setitem_of_a_grad_tensor_into_a_plain_buffer():
    w = t64([2.0, 3.0])
    buf = fnx.zeros(3, 2, dtype=fnx.float64)
    buf[1] = w * w
    assert buf.requires_grad and not buf.is_leaf
    (buf * fnx.tensor([[1.0], [10.0], [100.0]], dtype=fnx.float64)).sum().backward()
    np.testing.assert_allclose(npy(w.grad), 10 * 2 * npy(w))


def test_other_views_see_the_new_history():
    w = t64([1.0, 2.0])
    base = fnx.zeros(2, 2, dtype=fnx.float64)
    row1 = base[1]                       # made before the write
    base[0].copy_(w)
    base[1].copy_(w * 3)
    row1.sum().backward()
    np.testing.assert_allclose(npy(w.grad), [3.0, 3.0])


def test_out_variant_refuses_inputs_that_require_grad():
    x = t64([1.0])
    out = fnx.empty(1, dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic "
                                           "differentiation"):
        fnx.add(x, x, out=out)


def test_graph_is_freed_after_backward():
    x = t64(np.ones(10))
    y = (x * 2).exp().sum()
    ref = weakref.ref(y.grad_fn.next_functions[0][0])
    y.backward()
    del y
    assert ref() is None                  # no reference cycle keeps nodes alive
    gc.collect()


def test_op_without_derivative_raises_at_backward_naming_it():
    lib = fnx.library.Library("agtest", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: fnx.tensor(x.detach().numpy() * 2), "CPU")
        x = t64([1.0])
        y = fnx.ops.agtest.twice(x)
        assert y.requires_grad
        with pytest.raises(RuntimeError, match="derivative for 'agtest::twice' is not "
                                               "implemented"):
            y.sum().backward()
    finally:
        lib._destroy()


# ----------------------------------------------------------------------------- Function

class ScaledExp(Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = x.exp() * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y, None


def test_custom_function_forward_backward_and_needs_input_grad():
    x = t64([0.0, 1.0])
    y = ScaledExp.apply(x, 2.0)
    assert y.grad_fn.name() == "ScaledExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 * np.exp(npy(x)))
    assert gradcheck(lambda t: ScaledExp.apply(t, 3.0), (t64([0.3, -0.2]),))


def test_custom_function_with_wrong_backward_fails_gradcheck():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g        # should be 2 x g

    with pytest.raises(GradcheckError):
        gradcheck(Wrong.apply, (t64([0.5, 2.0]),))
    assert not gradcheck(Wrong.apply, (t64([0.5, 2.0]),), raise_exception=False,
                         fast_mode=True)


def test_gradcheck_and_gradgradcheck_on_composites():
    x, w = t64([[0.2, -0.4], [1.1, 0.3]]), t64([[0.5], [-1.5]])
    assert gradcheck(lambda a, b: (a @ b).tanh() * a.sum(), (x, w))
    assert gradgradcheck(lambda a, b: (a @ b).sin(), (x, w))


def test_views_and_sums_save_only_shapes():
    # PyTorch saves sizes, not the tensor, for these: writing the input afterwards is fine
    x = t64([1.0, 2.0, 3.0])
    h = x * 1
    y = h[0:2].sum() + h.mean() + h.view(3, 1).sum(0).sum()
    h.add_(1)
    y.backward()
    np.testing.assert_allclose(npy(x.grad), [1 + 1 / 3 + 1, 1 + 1 / 3 + 1, 1 / 3 + 1])


def test_gradcheck_with_complex_outputs_follows_pytorchs_convention():
    """A complex output is checked as its real and imaginary parts, so holomorphic and
    non-holomorphic functions of complex inputs pass, and a backward that forgets the
    conjugate (grad * 2z instead of grad * conj(2z) for z * z) fails."""
    z = fnx.tensor([0.5 + 1j, -1.0 + 0.25j], dtype=fnx.complex128, requires_grad=True)
    w = fnx.tensor([[1.0 - 2j, 0.5j], [0.3, -1.0 + 1j]], dtype=fnx.complex128)
    assert gradcheck(lambda a: a * a, (z,))
    assert gradcheck(lambda a: (w @ a).exp(), (z,))
    assert gradcheck(lambda a: a.abs(), (z,), fast_mode=True)

    class NoConj(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x        # PyTorch's convention needs g * conj(2 x)

    assert not gradcheck(NoConj.apply, (z,), raise_exception=False)


def test_gradcheck_perturbs_a_non_contiguous_input():
    # the numerical Jacobian must see each step: a transposed input's reshape(-1) is a
    # copy, which made every column zero and a right gradient "wrong"
    x = fnx.tensor(np.arange(1.0, 7.0).reshape(2, 3)).t().clone().requires_grad_(True)
    assert not x.is_contiguous()
    assert fnx.autograd.gradcheck(lambda a: (a * a * a).sum(dim=0), (x,))


def test_grad_wrt_a_non_leaf_leaves_the_graph_behind_it_whole():
    # grad() captures the gradient at a non-leaf input without running (and freeing) the
    # node that made it, so a later backward through that node still works (PyTorch's
    # engine does the same); with a deeper input too, the node runs once for it
    a = fnx.tensor([1.0, 2.0], requires_grad=True)
    x = a * a
    (g,) = fnx.autograd.grad((x * 2).sum(), x)
    assert g.tolist() == [2.0, 2.0]
    (x * 5).sum().backward()                    # d(5 a^2)/da = 10 a
    assert a.grad.tolist() == [10.0, 20.0]
    b = fnx.tensor([1.0, 2.0], requires_grad=True)
    u = b * b
    gu, gb = fnx.autograd.grad((u * u).sum(), [u, b])     # 2u and 4b^3
    assert gu.tolist() == [2.0, 8.0] and gb.tolist() == [4.0, 32.0]


def test_a_node_no_gradient_reaches_does_not_block_the_nodes_below_it():
    # k's node gets only the None its consumer returns, so it never runs; h's node, below
    # it, still has h.sum()'s gradient and must run (it waited for k's node forever, and
    # x.grad stayed None). d(h.sum())/dx = 2, as PyTorch gives.
    class Drop(fnx.autograd.Function):
        @staticmethod
        def forward(ctx, k):
            return k * 1

        @staticmethod
        def backward(ctx, g):
            return None
    x = fnx.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 2
    k = h * 3
    (Drop.apply(k).sum() + h.sum()).backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    # the same through grad(), and one level deeper
    x2 = fnx.tensor([1.0, -2.0], requires_grad=True)
    h2 = x2 * x2
    (g,) = fnx.autograd.grad(Drop.apply(h2 * 3 + 1).sum() + (h2 * 5).sum(), [x2])
    np.testing.assert_array_equal(g.numpy(), 10 * x2.detach().numpy())


def test_grad_takes_pytorchs_arguments_in_pytorchs_order():
    # only_inputs (deprecated in PyTorch, default True) sits before allow_unused
    # (WGAN-GP's gradient penalty passes it by keyword)
    x = fnx.tensor([1.0, 2.0], requires_grad=True)
    unused = fnx.tensor(1.0, requires_grad=True)
    y = (x ** 2).sum()
    (g,) = fnx.autograd.grad(outputs=y, inputs=x, grad_outputs=fnx.tensor(1.0),
                             create_graph=True, retain_graph=True, only_inputs=True)
    assert g.tolist() == [2.0, 4.0] and g.requires_grad
    gx, gu = fnx.autograd.grad(y, (x, unused), None, True, False, True, True)
    assert gx.tolist() == [2.0, 4.0] and gu is None and x.grad is None
    with pytest.warns(FutureWarning, match="only_inputs=False"):
        fnx.autograd.grad(y, x, only_inputs=False)
    assert x.grad is None
