"""fnx.func (torch.func): transforms checked against NumPy loops, hand-computed Jacobians and
finite differences."""
import numpy as np
import pytest

import fnx
from fnx.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                      stack_module_state, vjp, vmap)


def npy(t):
    return np.asarray(t.detach().numpy())


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(npy(a) if isinstance(a, fnx.Tensor) else a,
                               npy(b) if isinstance(b, fnx.Tensor) else b,
                               rtol=tol, atol=tol)


RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def t(a):
    return fnx.tensor(a)


# ----------------------------------------------------------------------------- vmap

def test_vmap_matmul_and_softmax_match_a_python_loop():
    a, b = rand(5, 3, 4), rand(4, 2)

    def f(x, w):
        return fnx.softmax(x @ w, dim=-1)
    got = vmap(f, in_dims=(0, None))(t(a), t(b))
    z = a @ b
    e = np.exp(z - z.max(-1, keepdims=True))
    close(got, e / e.sum(-1, keepdims=True))
    assert got.shape == (5, 3, 2)


def test_vmap_in_dims_and_out_dims():
    x = rand(3, 4)          # mapped over dim 1 (size 4)
    y = rand(4)
    got = vmap(lambda a, b: a * b, in_dims=(1, 0))(t(x), t(y))
    close(got, (x * y).T)                               # out_dims=0: [4, 3]
    got = vmap(lambda a, b: a * b, in_dims=(1, 0), out_dims=1)(t(x), t(y))
    close(got, x * y)
    got = vmap(lambda a: a.sum(), in_dims=-1)(t(x))     # negative in_dim
    close(got, x.sum(0))


def test_vmap_nested_in_dims_dicts_and_per_output_out_dims():
    xs, ys = rand(2, 3), rand(3, 2)

    def f(pair, d):
        a, b = pair
        return a + d["s"], (a * b).sum()
    out, total = vmap(f, in_dims=((0, 1), None), out_dims=(1, 0))(
        (t(xs), t(ys)), {"s": t(np.float32(2.0))})
    close(out, xs.T + 2)                # per-example [3] stacked along dim 1: [3, 2]
    close(total, (xs * ys.T).sum(1))
    assert out.shape == (3, 2)


def test_vmap_unbatched_output_and_out_dims_none():
    x, w = rand(4, 3), rand(3)
    # an output that does not depend on the mapped input is expanded for out_dims=0 ...
    a, b = vmap(lambda r, v: (r * v, v * 2), in_dims=(0, None))(t(x), t(w))
    close(a, x * w)
    close(b, np.broadcast_to(w * 2, (4, 3)))
    # ... and returned once for out_dims=None
    a, b = vmap(lambda r, v: (r * v, v * 2), in_dims=(0, None), out_dims=(0, None))(t(x), t(w))
    close(b, w * 2)
    with pytest.raises(ValueError, match="vmap"):
        vmap(lambda r: r * 2, out_dims=None)(t(x))


def test_vmap_kwargs_are_not_mapped_and_non_tensor_args_pass_through():
    x = rand(4, 3)
    got = vmap(lambda r, scale, *, shift: r * scale + shift, in_dims=(0, None))(
        t(x), 3.0, shift=t(np.ones(3, np.float32)))
    close(got, x * 3 + 1)


def test_vmap_chunk_size_gives_the_same_result():
    x, w = rand(7, 3), rand(3, 2)
    full = vmap(lambda r: fnx.tanh(r @ t(w)))(t(x))
    chunked = vmap(lambda r: fnx.tanh(r @ t(w)), chunk_size=3)(t(x))
    close(full, np.tanh(x @ w))
    close(chunked, full)


def test_vmap_of_vmap_and_fnx_vmap_alias():
    x = rand(2, 3, 4)
    got = fnx.vmap(fnx.vmap(lambda r: (r ** 2).sum()))(t(x))
    close(got, (x ** 2).sum(-1))
    assert fnx.vmap is vmap


def test_vmap_result_backpropagates_with_autograd():
    x, w0 = rand(5, 3), rand(3)
    w = fnx.tensor(w0, requires_grad=True)
    y = vmap(lambda r: ((r * w).sum()) ** 2)(t(x))
    y.sum().backward()
    # d/dw sum_i (x_i.w)^2 = sum_i 2 (x_i.w) x_i
    close(w.grad, (2 * (x @ w0))[:, None].__mul__(x).sum(0), 1e-4)


def test_vmap_randomness():
    x = fnx.ones(4, 1000)

    def drop(r):
        return fnx.nn.functional.dropout(r, 0.5, training=True)
    with pytest.raises(RuntimeError, match="vmap: called random operation while in "
                                           "randomness error mode"):
        vmap(drop)(x)
    same = npy(vmap(drop, randomness="same")(x))
    assert all(np.array_equal(same[0], row) for row in same[1:])
    diff = npy(vmap(drop, randomness="different")(x))
    assert not np.array_equal(diff[0], diff[1])
    assert set(np.unique(diff)) <= {0.0, 2.0}
    assert 0.4 < (diff == 0).mean() < 0.6


def test_vmap_index_out_of_range_raises_inside_the_transform():
    table = t(rand(4, 2))
    idx = fnx.tensor([[0, 1], [2, 7]])
    with pytest.raises(IndexError):
        vmap(lambda i: fnx.nn.functional.embedding(i, table))(idx)
    ok = vmap(lambda i: fnx.nn.functional.embedding(i, table))(fnx.tensor([[0, 1], [2, 3]]))
    close(ok, npy(table)[[[0, 1], [2, 3]]])
    # a nested transform's check is recorded by the outer trace (vmap, fnx.compile)
    emb = vmap(lambda i: fnx.nn.functional.embedding(i, table))
    with pytest.raises(IndexError):
        vmap(emb)(idx[None])
    with pytest.raises(IndexError):
        fnx.compile(lambda i: emb(i) * 2)(idx)
    close(fnx.compile(lambda i: emb(i) * 2)(fnx.tensor([[3, 1]])), 2 * npy(table)[[[3, 1]]])


# ----------------------------------------------------------------------------- grad

def _linear_model():
    fnx.manual_seed(0)
    return fnx.nn.Linear(3, 4)


def test_per_sample_gradients_of_a_linear_model_match_a_numpy_loop():
    model = _linear_model()
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = rand(6, 3), RNG.integers(0, 4, size=6)

    def loss(p, x, y):
        out = functional_call(model, p, (x[None],))
        return fnx.nn.functional.cross_entropy(out, y[None])
    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, t(xs), fnx.tensor(ys))
    W, b = npy(model.weight), npy(model.bias)
    for i in range(6):
        z = W @ xs[i] + b
        p = np.exp(z - z.max())
        p /= p.sum()
        p[ys[i]] -= 1                       # d CE / dz = softmax - onehot
        close(grads["weight"][i], np.outer(p, xs[i]), 1e-5)
        close(grads["bias"][i], p, 1e-5)
    # the module is unchanged
    assert model.weight is not params["weight"] and np.array_equal(npy(model.weight), W)


def test_per_sample_gradients_mse_with_grad_and_value():
    model = _linear_model()
    params = dict(model.named_parameters())
    xs, ys = rand(5, 3), rand(5, 4)

    def loss(p, x, y):
        return ((functional_call(model, p, x) - y) ** 2).mean()
    g, v = vmap(grad_and_value(loss), in_dims=(None, 0, 0))(params, t(xs), t(ys))
    W, b = npy(model.weight), npy(model.bias)
    r = xs @ W.T + b - ys                                   # [5, 4]
    close(v, (r ** 2).mean(1))
    close(g["weight"], 2 / 4 * r[:, :, None] * xs[:, None, :], 1e-5)
    close(g["bias"], 2 / 4 * r, 1e-5)


def test_grad_argnums_has_aux_and_pytrees():
    x, y = rand(3), rand(3)

    def f(a, b):
        return (a * b.sin()).sum(), {"prod": a * b}
    (ga, gb), aux = grad(f, argnums=(0, 1), has_aux=True)(t(x), t(y))
    close(ga, np.sin(y))
    close(gb, x * np.cos(y))
    close(aux["prod"], x * y)
    g = grad(lambda d: (d["u"] ** 2).sum() + d["v"].sum())({"u": t(x), "v": t(y)})
    close(g["u"], 2 * x)
    close(g["v"], np.ones(3))
    g, (value, aux) = grad_and_value(lambda a: ((a ** 2).sum(), a + 1), has_aux=True)(t(x))
    close(g, 2 * x)
    close(value, (x ** 2).sum())
    close(aux, x + 1)


def test_grad_of_grad_matches_the_second_derivative():
    x = fnx.tensor(0.7)
    got = grad(grad(lambda a: a.sin() * a ** 2))(x)
    a = 0.7
    close(got, -np.sin(a) * a ** 2 + 4 * a * np.cos(a) + 2 * np.sin(a))


def test_grad_inside_a_vmapped_function_capturing_the_outer_input():
    xs, w0 = rand(4, 3), rand(3)

    def per_example(x):
        # d/dw (w.x)^2 = 2 (w.x) x, with x from the outer (vmapped) trace
        return grad(lambda w: (w * x).sum() ** 2)(t(w0)) * 2
    got = vmap(per_example)(t(xs))
    close(got, 2 * 2 * (xs @ w0)[:, None] * xs, 1e-5)


def test_grad_respects_detach():
    x = rand(3)
    got = grad(lambda a: (a.detach() * a).sum())(t(x))
    close(got, x)                       # not 2x: the detached factor is a constant


def test_compiled_function_calling_a_transform():
    xs = rand(4, 3)
    f = fnx.compile(lambda x: vmap(grad(lambda r: (r ** 3).sum()))(x) + 1)
    close(f(t(xs)), 3 * xs ** 2 + 1, 1e-5)
    # and compiled functions and modules inside a transform are inlined into its trace
    lin = fnx.nn.Linear(3, 2)
    close(vmap(fnx.compile(lin))(t(xs)), xs @ npy(lin.weight).T + npy(lin.bias), 1e-5)
    close(vmap(grad(fnx.compile(lambda a: (a ** 2).sum())))(t(xs)), 2 * xs)


# ----------------------------------------------------------------------------- jacobians

def _fd_jacobian(f, x, eps=1e-6):
    """Central differences of ``f`` (NumPy float64 -> array) at ``x``."""
    y0 = np.asarray(f(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        jac[(...,) + idx] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return jac


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_jacobian_of_cube_and_matmul_by_hand(jac):
    x = rand(4)
    close(jac(lambda a: a ** 3)(t(x)), np.diag(3 * x ** 2), 1e-5)
    A, v = rand(3, 4), rand(4)
    close(jac(lambda a: t(A) @ a)(t(v)), A)
    # d(A v)/dA [i, j, k] = delta_ij v_k
    got = jac(lambda m, a: m @ a, argnums=0)(t(A), t(v))
    close(got, np.einsum("ij,k->ijk", np.eye(3), v))
    ja, jv = jac(lambda m, a: m @ a, argnums=(0, 1))(t(A), t(v))
    close(jv, A)
    assert ja.shape == (3, 3, 4)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_jacobian_matches_finite_differences(jac):
    x = RNG.standard_normal((2, 3))

    def np_f(a):
        return np.sin(a) * a.sum(0) + np.exp(a[:, :1])

    def f(a):
        return a.sin() * a.sum(0) + a[:, :1].exp()
    got = jac(f)(fnx.tensor(x))
    assert got.shape == (2, 3, 2, 3)
    close(got, _fd_jacobian(np_f, x), 1e-6)


def test_jacobian_of_several_outputs_and_has_aux():
    x = rand(3)
    (j1, j2), aux = jacrev(lambda a: ((a ** 2, a.sum()), a * 0 + 5), has_aux=True)(t(x))
    close(j1, np.diag(2 * x))
    close(j2, np.ones(3))
    close(aux, np.full(3, 5.0))


def test_hessian_by_hand_and_by_finite_differences():
    x = rand(3).astype(np.float64)
    close(hessian(lambda a: (a ** 3).sum())(fnx.tensor(x)), np.diag(6 * x), 1e-10)
    A = RNG.standard_normal((3, 3))
    close(hessian(lambda a: a @ fnx.tensor(A) @ a)(fnx.tensor(x)), A + A.T, 1e-10)

    def np_grad(a):     # the gradient of sum(sin(a) * a0) by hand
        g = np.cos(a) * a[0]
        g[0] += np.sin(a).sum()
        return g
    got = hessian(lambda a: (a.sin() * a[0]).sum())(fnx.tensor(x))
    close(got, _fd_jacobian(np_grad, x), 1e-6)


def test_jacrev_of_jacrev_is_the_hessian():
    x = rand(3).astype(np.float64)
    f = jacrev(jacrev(lambda a: (a ** 3).sum() * a[0]))
    a = x
    expected = np.diag(6 * a * a[0])
    expected[0, :] += 3 * a ** 2
    expected[:, 0] += 3 * a ** 2
    close(f(fnx.tensor(x)), expected, 1e-10)


# ----------------------------------------------------------------------------- vjp, jvp

def test_vjp_and_jvp_against_the_jacobian():
    A, x = rand(3, 4), rand(4)

    def f(a):
        return fnx.tanh(t(A) @ a)
    J = (1 - np.tanh(A @ x) ** 2)[:, None] * A
    out, vjp_fn = vjp(f, t(x))
    close(out, np.tanh(A @ x))
    u = rand(3)
    (g,) = vjp_fn(t(u))
    close(g, u @ J, 1e-5)
    v = rand(4)
    out, tangent = jvp(f, (t(x),), (t(v),))
    close(tangent, J @ v, 1e-5)


def test_vjp_several_primals_and_has_aux():
    x, y = rand(3), rand(3)
    out, fn, aux = vjp(lambda a, b: (a * b, a.sum()), t(x), t(y), has_aux=True)
    ga, gb = fn(fnx.ones(3))
    close(ga, y)
    close(gb, x)
    close(aux, x.sum())
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        fn(fnx.ones(4))


def test_jvp_has_aux_and_errors():
    x = rand(3)
    out, tan, aux = jvp(lambda a: (a ** 2, a + 1), (t(x),), (fnx.ones(3),), has_aux=True)
    close(tan, 2 * x)
    close(aux, x + 1)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        jvp(lambda a: a, t(x), (t(x),))
    with pytest.raises(RuntimeError, match="same shape"):
        jvp(lambda a: a, (t(x),), (fnx.ones(4),))


# ----------------------------------------------------------------------------- ensembles

def test_model_ensembling_with_stack_module_state_matches_a_loop():
    fnx.manual_seed(1)
    models = [fnx.nn.Sequential(fnx.nn.Linear(3, 5), fnx.nn.ReLU(), fnx.nn.Linear(5, 2))
              for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert params["0.weight"].shape == (4, 5, 3) and params["0.weight"].requires_grad
    x = rand(6, 3)
    base = models[0]

    def run(p, b, data):
        return functional_call(base, (p, b), (data,))
    got = vmap(run, in_dims=(0, 0, None))(params, buffers, t(x))
    for i, m in enumerate(models):
        W1, b1 = npy(m[0].weight), npy(m[0].bias)
        W2, b2 = npy(m[2].weight), npy(m[2].bias)
        close(got[i], np.maximum(x @ W1.T + b1, 0) @ W2.T + b2, 1e-5)
    # training the ensemble: gradients reach the stacked parameters
    got.pow(2).sum().backward()
    for i, m in enumerate(models):
        m(t(x)).pow(2).sum().backward()
        close(params["0.weight"].grad[i], npy(m[0].weight.grad), 1e-4)
        close(params["2.bias"].grad[i], npy(m[2].bias.grad), 1e-4)
    # different data per model
    xs = rand(4, 6, 3)
    got = vmap(run)(params, buffers, t(xs))
    for i, m in enumerate(models):
        close(got[i], npy(m(t(xs[i]))), 1e-5)


def test_stack_module_state_stacks_buffers():
    models = [fnx.nn.BatchNorm1d(3) for _ in range(2)]
    models[1].running_mean.fill_(2.0)
    params, buffers = stack_module_state(models)
    close(buffers["running_mean"], np.array([[0, 0, 0], [2, 2, 2]], np.float32))
    assert params["weight"].shape == (2, 3)


# ----------------------------------------------------------------------------- functional_call

def test_functional_call_swaps_and_restores():
    lin = fnx.nn.Linear(2, 1)
    w0 = lin.weight
    out = functional_call(lin, {"weight": fnx.tensor([[1., 2.]]), "bias": fnx.tensor([1.])},
                          fnx.tensor([3., 4.]))
    close(out, np.array([12.0]))
    assert lin.weight is w0
    # only some names given: the others keep the module's own
    out = functional_call(lin, {"bias": fnx.tensor([0.])}, (fnx.tensor([1., 0.]),))
    close(out, npy(lin.weight)[:, 0])

    def boom(*a):
        raise KeyError("x")
    lin.register_forward_hook(lambda *a: boom())
    with pytest.raises(KeyError):
        functional_call(lin, {"weight": fnx.zeros(1, 2)}, (fnx.ones(2),))
    assert lin.weight is w0


def test_functional_call_tied_weights_and_strict():
    class Tied(fnx.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = fnx.nn.Linear(2, 2, bias=False)
            self.b = fnx.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied()
    w = fnx.tensor([[2., 0.], [0., 3.]])
    x = fnx.tensor([1., 1.])
    close(functional_call(m, {"a.weight": w}, (x,)), np.array([4., 9.]))
    # untied: b keeps the module's weight
    W = npy(m.a.weight)
    close(functional_call(m, {"a.weight": w}, (x,), tie_weights=False), W @ np.array([2., 3.]),
          1e-6)
    with pytest.raises(ValueError, match="tied"):
        functional_call(m, {"a.weight": w, "b.weight": w * 2}, (x,))
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(m, {"a.weight": w}, (x,), tie_weights=False, strict=True)
    with pytest.raises(RuntimeError, match="Unexpected key"):
        functional_call(m, {"a.weight": w, "c": w}, (x,), strict=True)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        functional_call(m, ({"a.weight": w}, {"a.weight": w}), (x,))


# ----------------------------------------------------------------------------- errors

def test_data_dependent_python_raises_naming_the_transform():
    x = fnx.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"^vmap: .*Tensor.item"):
        vmap(lambda r: r * r.sum().item())(x)
    with pytest.raises(RuntimeError, match=r"^grad: .*data-dependent"):
        grad(lambda a: a.sum() if a.sum() > 0 else -a.sum())(fnx.ones(2))
    with pytest.raises(RuntimeError, match=r"^jacrev: "):
        jacrev(lambda a: a * float(a[0]))(fnx.ones(2))


def test_gradient_input_errors():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        grad(lambda a: a.sum())(fnx.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="scalar Tensor, got tensor with 1 dims"):
        grad(lambda a: a * 2)(fnx.ones(2))
    with pytest.raises(RuntimeError, match="argnums=2, but only 2 positional inputs"):
        grad(lambda a, b: (a * b).sum(), argnums=2)(fnx.ones(2), fnx.ones(2))
    with pytest.raises(RuntimeError, match=r"\(output, aux\)"):
        grad(lambda a: a.sum(), has_aux=True)(fnx.ones(2))
    with pytest.raises(RuntimeError, match="floating point"):
        vjp(lambda a: a, fnx.tensor([1, 2]))


def test_vmap_argument_errors():
    with pytest.raises(ValueError, match="in_dim=2 .* dimensionality 2"):
        vmap(lambda a: a, in_dims=2)(fnx.ones(2, 3))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(fnx.ones(2, 3), fnx.ones(3, 3))
    with pytest.raises(ValueError, match="non-Tensor"):
        vmap(lambda a, s: a * s)(fnx.ones(2), 3.0)
    with pytest.raises(ValueError, match="expected `in_dims` to be int"):
        vmap(lambda a: a, in_dims=None)(fnx.ones(2))
    with pytest.raises(ValueError, match="at least one"):
        vmap(lambda a: a, in_dims=(None,))(fnx.ones(2))
    with pytest.raises(ValueError, match="not compatible"):
        vmap(lambda a, b: a, in_dims=((0, 0), 0))(fnx.ones(2), fnx.ones(2))
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3.0)(fnx.ones(2))


def test_transform_caches_its_trace_and_retraces_on_new_state():
    calls = []

    def f(a):
        calls.append(1)
        return a * k
    k = 2.0
    g = vmap(f)
    close(g(fnx.ones(3, 2)), np.full((3, 2), 2.0))
    close(g(fnx.ones(3, 2) * 3), np.full((3, 2), 6.0))
    assert len(calls) == 1                  # traced once for one signature
    close(vmap(f)(fnx.ones(3, 2)), np.full((3, 2), 2.0))
    assert len(calls) == 1                  # a new vmap of the same function: cached too
    k = 5.0                                 # a closure cell changed: retraced
    close(g(fnx.ones(3, 2)), np.full((3, 2), 5.0))
    assert len(calls) == 2
    close(g(fnx.ones(4, 2)), np.full((4, 2), 5.0))
    assert len(calls) == 3                  # a new shape: retraced
    w = fnx.ones(2)

    def h(a):
        return a * w
    close(vmap(h)(fnx.ones(3, 2)), np.ones((3, 2)))
    w = fnx.full((2,), 4.0)                 # a closure cell holds another tensor: retraced
    close(vmap(h)(fnx.ones(3, 2)), np.full((3, 2), 4.0))


# ----------------------------------------------------------------------------- cuda

@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_transforms_on_cuda_tensors_stay_on_the_device():
    x0, w0 = rand(4, 3), rand(3)
    x = fnx.tensor(x0, device="cuda")
    w = fnx.tensor(w0, device="cuda", requires_grad=True)
    y = vmap(lambda r: (r * w).sum() ** 2)(x)
    assert y.device.type == "cuda"
    close(y.cpu(), (x0 @ w0) ** 2, 1e-5)
    y.sum().backward()
    assert w.grad.device.type == "cuda"
    close(w.grad.cpu(), (2 * (x0 @ w0))[:, None].__mul__(x0).sum(0), 1e-4)
    g = vmap(grad(lambda r: (r ** 3).sum()))(x)
    assert g.device.type == "cuda"
    close(g.cpu(), 3 * x0 ** 2, 1e-5)


# ----------------------------------------------------------------------------- in-place writes

def test_vmap_writes_a_mapped_input_in_place():
    x0 = rand(2, 3)
    x = t(x0)

    def f(r):
        r.add_(1)
        return r * 2
    out = vmap(f, in_dims=1)(x)
    close(x, x0 + 1)
    close(out, 2 * (x0 + 1).T)


def test_grad_updates_batch_norm_running_stats_as_eager():
    fnx.manual_seed(3)
    model = fnx.nn.Sequential(fnx.nn.Linear(3, 3), fnx.nn.BatchNorm1d(3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    xb = rand(8, 3)
    g = grad(lambda p, x: functional_call(model, p, (x,)).pow(2).sum())(params, t(xb))
    h = xb @ npy(model[0].weight).T + npy(model[0].bias)
    close(model[1].running_mean, 0.1 * h.mean(0), 1e-5)
    close(model[1].running_var, 0.9 + 0.1 * h.var(0, ddof=1), 1e-5)
    assert int(model[1].num_batches_tracked) == 1
    # batch norm's output is standardized per feature: the loss sum(y^2) is
    # 8 v / (v + eps) per feature (v the biased variance of h), so the Linear layer's
    # weights reach it through eps only: 8 eps / (v + eps)^2 * dv/dW, dv/dW the centred
    # (h, x) covariance times 2 (small, not zero: with the test's data drawn from a
    # shared generator it reached 7e-3)
    hd, xd = h.astype(np.float64), xb.astype(np.float64)
    hc, xc = hd - hd.mean(0), xd - xd.mean(0)
    v = (hc ** 2).mean(0)
    want = (8 * 1e-5 / (v + 1e-5) ** 2)[:, None] * (2 / 8) * (hc.T @ xc)
    np.testing.assert_allclose(npy(g["0.weight"]), want, rtol=2e-2, atol=1e-4)
    close(g["1.weight"], 2 * 8 * np.ones(3) * (h.var(0) / (h.var(0) + 1e-5)), 1e-3)


def test_vmap_refuses_a_per_example_write_into_an_unmapped_buffer():
    with pytest.raises(RuntimeError, match="not mapped"):
        vmap(fnx.nn.BatchNorm1d(3))(fnx.ones(4, 2, 3))


def test_forward_over_reverse_and_eager_second_order():
    x0 = rand(3).astype(np.float64)
    x = fnx.tensor(x0)
    # Hessian-vector product of sum(x^3): H = diag(6x)
    g, hvp = jvp(grad(lambda a: (a ** 3).sum()), (x,), (fnx.ones(3, dtype=fnx.float64),))
    close(g, 3 * x0 ** 2)
    close(hvp, 6 * x0)
    # vjp inside vmap
    xs = rand(4, 3)
    got = vmap(lambda r: vjp(lambda a: a.sin(), r)[1](fnx.ones(3))[0])(t(xs))
    close(got, np.cos(xs))
    # a transform's result differentiated by autograd: through its input and a captured one
    w0 = rand(3).astype(np.float64)
    w = fnx.tensor(w0, requires_grad=True)
    xr = fnx.tensor(x0, requires_grad=True)
    g = grad(lambda a: (a ** 3 * w).sum())(xr)          # 3 a^2 w
    g.sum().backward()
    close(w.grad, 3 * x0 ** 2)
    close(xr.grad, 6 * x0 * w0)


def test_dicts_keep_their_key_order():
    params = {"w": fnx.ones(2), "b": fnx.ones(1), "a": fnx.ones(3)}
    g = grad(lambda p: sum((v ** 2).sum() for v in p.values()))(params)
    assert list(g) == ["w", "b", "a"]
    out = vmap(lambda r: {"s": r.sum(), "l": r})(fnx.ones(2, 2))
    assert list(out) == ["s", "l"]


def test_grad_ignores_an_outer_no_grad():
    x = rand(3)
    with fnx.no_grad():
        close(grad(lambda a: (a ** 2).sum())(t(x)), 2 * x)


def test_complex_gradients_follow_pytorchs_convention():
    z0 = np.array([1 + 2j, 3 - 1j], np.complex64)
    z = fnx.tensor(z0)
    # d|z|^2 in PyTorch's convention (the conjugate Wirtinger derivative, times 2) is 2z
    close(grad(lambda a: (a * a.conj()).real.sum())(z), 2 * z0)
    close(grad(lambda a: (a * a).real.sum())(z), 2 * np.conj(z0))
    c = 2 + 3j
    v0 = np.array([1 + 1j, 2 - 1j], np.complex64)
    (g,) = vjp(lambda a: a * c, z)[1](fnx.tensor(v0))
    close(g, np.conj(c) * v0)                           # v^H J, conjugated: conj(c) v
    close(jvp(lambda a: a * c, (z,), (fnx.tensor(v0),))[1], c * v0)
    zr = fnx.tensor(z0[None], requires_grad=True)
    vmap(lambda a: a * c)(zr).backward(fnx.tensor(v0[None]))
    close(zr.grad, np.conj(c) * v0[None])               # as eager autograd of a * c
    with pytest.raises(RuntimeError, match="Expected all inputs to be real"):
        jacrev(lambda a: a * 2)(z)
    with pytest.raises(RuntimeError, match="Expected all outputs to be real"):
        jacfwd(lambda a: a * (1 + 1j))(fnx.ones(2))


def test_a_replaced_tensor_in_a_captured_dict_is_seen():
    state = {"w": fnx.tensor([1., 2.])}
    f = vmap(lambda r: r * state["w"])
    close(f(fnx.ones(3, 2)), np.tile([1., 2.], (3, 1)))
    state["w"] = fnx.tensor([5., 6.])
    close(f(fnx.ones(3, 2)), np.tile([5., 6.], (3, 1)))


def test_jacrev_chunk_size_gives_the_same_jacobian():
    A, x = rand(5, 3), rand(3)

    def f(a, m):
        return (m @ a).tanh(), a.sum() * 2
    full = jacrev(f, argnums=(0, 1))(t(x), t(A))
    chunked = jacrev(f, argnums=(0, 1), chunk_size=2)(t(x), t(A))
    for row_f, row_c in zip(full, chunked):
        for a, b in zip(row_f, row_c):
            assert a.shape == b.shape
            close(a, b)
    d = 1 - np.tanh(A @ x) ** 2
    close(chunked[0][0], d[:, None] * A, 1e-5)
    close(chunked[1][0], np.full(3, 2.0))


def test_functional_call_one_implementation_for_both_entry_points():
    """fnx.func.functional_call and nn.utils.stateless.functional_call share one body:
    a buffer the module rebinds is written back into the given dict, a key in two dicts
    is named as a list, and compiled programs' guards see the swap and the undo."""
    class Counter(fnx.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", fnx.zeros(()))

        def forward(self, x):
            self.n = self.n + 1
            return x * 2

    m = Counter()
    given = {"n": fnx.tensor(5.0)}
    out = functional_call(m, given, (fnx.tensor([1.0, 3.0]),))
    np.testing.assert_allclose(out.numpy(), [2.0, 6.0])
    assert float(given["n"]) == 6.0 and float(m.n) == 0.0
    with pytest.raises(ValueError, match=r"\['n'\] appeared in multiple dictionaries"):
        functional_call(m, ({"n": fnx.tensor(1.0)}, {"n": fnx.tensor(2.0)}), (fnx.ones(1),))
    before = fnx.graph.guards.state_version[0]
    functional_call(m, {"n": fnx.tensor(0.0)}, (fnx.ones(1),))
    assert fnx.graph.guards.state_version[0] >= before + 2
