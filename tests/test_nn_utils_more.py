"""``nn.utils`` breadth: parametrize and the ready-made parametrizations (weight_norm,
spectral_norm, orthogonal), the hook-based weight_norm/spectral_norm, conv/linear + batch
norm fusion, stateless.functional_call, flat parameter vectors and value clipping; each
against NumPy (norms, SVD, QR) or finite differences, with PyTorch's state_dict keys."""
import copy
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
from fnx.autograd import gradcheck
from fnx.nn.utils import parametrize
from fnx.nn.utils import parametrizations as P
from fnx.nn.utils.stateless import _functional_call as functional_call


def arr(t):
    return t.detach().numpy()


def t64(a, grad=False):
    return fnx.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x * self.k

    def right_inverse(self, x):
        return x / self.k


# ----------------------------------------------------------------------------- parametrize

def test_register_parametrization_value_keys_and_gradient(rng):
    m = nn.Linear(3, 3).double()
    w0 = arr(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    # the original is right_inverse(weight) = its upper triangle; weight is symmetric
    np.testing.assert_allclose(arr(m.parametrizations.weight.original), np.triu(w0))
    w = np.triu(w0) + np.triu(w0, 1).T
    np.testing.assert_allclose(arr(m.weight), w)
    x = rng.standard_normal((2, 3))
    np.testing.assert_allclose(arr(m(t64(x))), x @ w.T + arr(m.bias), rtol=1e-12)
    # d sum(W * G) / d original = triu(G) + triu(G.T, 1)
    g = rng.standard_normal((3, 3))
    (m.weight * t64(g)).sum().backward()
    np.testing.assert_allclose(arr(m.parametrizations.weight.original.grad),
                               np.triu(g) + np.triu(g.T, 1), rtol=1e-12)


def test_setter_chaining_cached_and_removal(rng):
    m = nn.Linear(2, 2).double()
    w0 = arr(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    parametrize.register_parametrization(m, "weight", Scale(3.0))   # chained after the first
    assert len(m.parametrizations.weight) == 2
    # the first registration keeps the value (original = w0 / 2); the second applies on top
    np.testing.assert_allclose(arr(m.parametrizations.weight.original), w0 / 2)
    np.testing.assert_allclose(arr(m.weight), 3 * w0)
    original = m.parametrizations.weight.original
    m.weight = t64([[1.0, 2.0], [3.0, 4.0]])                         # right_inverse of both
    assert m.parametrizations.weight.original is original            # updated in place
    np.testing.assert_allclose(arr(original), [[1 / 6, 2 / 6], [3 / 6, 4 / 6]])
    assert m.weight is not m.weight
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_allclose(arr(m.weight), [[1 / 6, 2 / 6], [3 / 6, 4 / 6]])
    assert isinstance(m.weight, nn.Parameter) and list(m.state_dict()) == ["bias", "weight"]

    m = nn.Linear(2, 2).double()
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    m.weight = t64([[1.0, 2.0], [3.0, 4.0]])
    original = m.parametrizations.weight.original
    parametrize.remove_parametrizations(m, "weight")                  # keeps the value
    assert m.weight is original
    np.testing.assert_allclose(arr(m.weight), [[1.0, 2.0], [3.0, 4.0]])


def test_parametrized_buffer_load_state_dict_deepcopy_and_optimizer(rng):
    m = nn.BatchNorm1d(3)
    parametrize.register_parametrization(m, "running_var", Scale(2.0))
    assert "parametrizations.running_var.original" in dict(m.named_buffers())
    m2 = copy.deepcopy(m)
    assert type(m2).__name__ == "ParametrizedBatchNorm1d"
    np.testing.assert_allclose(arr(m2.running_var), arr(m.running_var))

    a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    for mod in (a, b):
        parametrize.register_parametrization(mod, "weight", Scale(0.5))
    b.load_state_dict(a.state_dict())
    np.testing.assert_allclose(arr(b.weight), arr(a.weight))
    # a step moves the original; the weight follows through the parametrization
    opt = fnx.optim.SGD(a.parameters(), lr=0.1)
    before = arr(a.parametrizations.weight.original).copy()
    a.weight.sum().backward()
    opt.step()
    np.testing.assert_allclose(arr(a.parametrizations.weight.original), before - 0.1 * 0.5,
                               rtol=1e-6)
    np.testing.assert_allclose(arr(a.weight), (before - 0.05) * 0.5, rtol=1e-6)


def test_parametrize_errors():
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'foo'"):
        parametrize.register_parametrization(nn.Linear(2, 2), "foo", nn.Identity())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(nn.Linear(2, 2), "weight")

    class Row(nn.Module):
        def forward(self, x):
            return x[0]
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Row())
    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Row(), unsafe=True)
    assert tuple(m.weight.shape) == (2,)
    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Identity())
    with pytest.raises(RuntimeError, match="Identity does not implement right_inverse"):
        m.weight = fnx.ones(2, 2)
    m = P.weight_norm(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)


# ----------------------------------------------------------------------------- weight_norm

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(rng, dim):
    m = nn.Conv1d(2, 3, 2).double()
    w0 = arr(m.weight).copy()
    P.weight_norm(m, dim=dim)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    axes = None if dim is None else tuple(a for a in range(3) if a != dim)
    norm = np.sqrt((w0 ** 2).sum(axis=axes, keepdims=dim is not None))
    np.testing.assert_allclose(arr(g), norm)
    np.testing.assert_allclose(arr(v), w0)
    np.testing.assert_allclose(arr(m.weight), w0, rtol=1e-12)
    # a new magnitude and direction: w = g * v / ||v||
    gn = rng.uniform(0.5, 2, g.shape)
    vn = rng.standard_normal(v.shape)
    with fnx.no_grad():
        g.copy_(t64(gn))
        v.copy_(t64(vn))
    vnorm = np.sqrt((vn ** 2).sum(axis=axes, keepdims=dim is not None))
    np.testing.assert_allclose(arr(m.weight), gn * vn / vnorm, rtol=1e-12)
    x = t64(rng.standard_normal((1, 2, 4)))

    def out(gg, vv):
        return functional_call(m, {"parametrizations.weight.original0": gg,
                                   "parametrizations.weight.original1": vv}, (x,))
    assert gradcheck(out, (t64(gn, True), t64(vn, True)))
    np.testing.assert_allclose(arr(g), gn)                 # functional_call restored them


def test_hook_weight_norm(rng):
    m = nn.Linear(3, 2).double()
    w0 = arr(m.weight).copy()
    nn.utils.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(arr(m.weight_g), np.linalg.norm(w0, axis=1, keepdims=True))
    with fnx.no_grad():
        m.weight_g.mul_(2.0)
    x = rng.standard_normal((4, 3))
    np.testing.assert_allclose(arr(m(t64(x))), x @ (2 * w0).T + arr(m.bias), rtol=1e-12)
    m(t64(x)).sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(arr(m.weight), 2 * w0, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(m)
    m = nn.utils.weight_norm(nn.Linear(3, 2), dim=None)
    assert tuple(m.weight_g.shape) == ()


# ----------------------------------------------------------------------------- spectral_norm

def test_spectral_norm_parametrization(rng):
    fnx.manual_seed(0)
    m = nn.Conv2d(2, 4, 3).double()
    w0 = arr(m.weight).copy()
    P.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    sigma = np.linalg.svd(w0.reshape(4, -1), compute_uv=False)[0]
    # Each training-mode access is one power-iteration step; u's error shrinks by about
    # (s2/s1)**2 per step, and s2/s1 is 0.83 for this seed's weights: 40 steps reach 1e-6.
    for _ in range(40):
        w = m.weight
    np.testing.assert_allclose(arr(w), w0 / sigma, rtol=1e-6)
    sn = m.parametrizations.weight[0]
    # u, v: the top singular vectors
    uu, _, vt = np.linalg.svd(w0.reshape(4, -1))
    np.testing.assert_allclose(np.abs(arr(sn._u)), np.abs(uu[:, 0]), atol=1e-6)
    m.eval()
    u_before = arr(sn._u).copy()
    m.weight
    np.testing.assert_array_equal(arr(sn._u), u_before)     # no iteration in eval mode

    # gradient (eval: u, v fixed) against finite differences
    def normalized(orig):
        return functional_call(m, {"parametrizations.weight.original": orig},
                               (t64(rng.standard_normal((1, 2, 4, 4))),))
    assert gradcheck(lambda o: m.parametrizations.weight[0](o),
                     (t64(w0, True),))
    assert normalized(t64(w0)).shape == (1, 4, 2, 2)
    # transposed convolutions normalize along dim 1 (their output channels)
    ct = P.spectral_norm(nn.ConvTranspose2d(2, 3, 3))
    assert tuple(ct.parametrizations.weight[0]._u.shape) == (3,)
    vec = P.spectral_norm(nn.Linear(3, 1), name="bias")
    np.testing.assert_allclose(arr(vec.bias), np.sign(arr(vec.parametrizations.bias.original)),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        P.spectral_norm(nn.Linear(2, 2), dim=3)


def test_hook_spectral_norm(rng):
    fnx.manual_seed(1)
    m = nn.Linear(5, 3).double()
    w0 = arr(m.weight).copy()
    nn.utils.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    x = t64(rng.standard_normal((2, 5)))
    for _ in range(30):
        m(x)
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(arr(m.weight), w0 / sigma, rtol=1e-6)
    np.testing.assert_allclose(arr(m(x)), arr(x) @ (w0 / sigma).T + arr(m.bias), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(arr(m.weight), w0 / sigma, rtol=1e-6)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(m)


# ----------------------------------------------------------------------------- orthogonal

def np_q(a):
    """Q of A = QR with diag(R) >= 0."""
    q, r = np.linalg.qr(a)
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal(rng, orthogonal_map, shape):
    m = nn.Linear(shape[1], shape[0]).double()
    w0 = arr(m.weight).copy()
    P.orthogonal(m, orthogonal_map=orthogonal_map)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0.base"]
    w = arr(m.weight)
    k = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(k), atol=1e-12)
    # at registration: the orthogonal factor of the weight it had
    tall = w0 if shape[0] >= shape[1] else w0.T
    expected = np_q(tall)
    np.testing.assert_allclose(w if shape[0] >= shape[1] else w.T, expected, atol=1e-10)
    # training keeps it orthogonal
    w_registered = w
    opt = fnx.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (m.weight * t64(rng.standard_normal(shape))).sum().backward()
        opt.step()
    w = arr(m.weight)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(k), atol=1e-10)
    assert np.abs(w - w_registered).max() > 1e-3                       # it moved
    # assigning an orthogonal matrix makes it the value
    q = np_q(rng.standard_normal((max(shape), max(shape))))[:shape[0], :shape[1]] \
        if shape[0] >= shape[1] else np_q(rng.standard_normal((shape[1], shape[1])))[:, :3].T
    m.weight = t64(q)
    np.testing.assert_allclose(arr(m.weight), q, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_without_trivialization(shape):
    m = nn.Linear(shape[1], shape[0]).double()
    w0 = arr(m.weight).copy()
    P.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    # the original holds the reflectors of the weight's QR: the value is its Q factor
    expected = np_q(w0) if shape[0] >= shape[1] else np_q(w0.T).T
    np.testing.assert_allclose(arr(m.weight), expected, atol=1e-12)
    for orthogonal_map in ("matrix_exp", "cayley"):
        m = P.orthogonal(nn.Linear(shape[1], shape[0]).double(),
                         orthogonal_map=orthogonal_map, use_trivialization=False)
        w = arr(m.weight)
        gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
        np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-12)
        with pytest.raises(NotImplementedError, match="use_trivialization=False"):
            m.weight = t64(w)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor "
                                         "of 1 dimensions."):
        P.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp"'):
        P.orthogonal(nn.Linear(2, 2), orthogonal_map="foo")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        P.orthogonal(nn.Linear(2, 2), "w")


# ----------------------------------------------------------------------------- fusion

def _bn_with_stats(bn, rng):
    with fnx.no_grad():
        bn.running_mean.copy_(fnx.tensor(rng.standard_normal(bn.num_features)))
        bn.running_var.copy_(fnx.tensor(rng.uniform(0.5, 2, bn.num_features)))
        bn.weight.copy_(fnx.tensor(rng.uniform(0.5, 2, bn.num_features)))
        bn.bias.copy_(fnx.tensor(rng.standard_normal(bn.num_features)))
    return bn.double().eval()


def _np_bn(y, bn, axis=1):
    shape = [1] * y.ndim
    shape[axis] = -1
    mean, var = arr(bn.running_mean).reshape(shape), arr(bn.running_var).reshape(shape)
    w, b = arr(bn.weight).reshape(shape), arr(bn.bias).reshape(shape)
    return (y - mean) / np.sqrt(var + bn.eps) * w + b


def test_fuse_conv_bn_and_linear_bn(rng):
    conv = nn.Conv2d(2, 3, 3).double().eval()
    bn = _bn_with_stats(nn.BatchNorm2d(3), rng)
    x = t64(rng.standard_normal((2, 2, 5, 5)))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and isinstance(fused.weight, nn.Parameter)
    np.testing.assert_allclose(arr(fused(x)), _np_bn(arr(conv(x)), bn), rtol=1e-10,
                               atol=1e-12)
    assert nn.utils.fusion.fuse_conv_bn_eval is nn.utils.fuse_conv_bn_eval
    # a transposed convolution (output channels on the weight's dim 1), no bias
    convt = nn.ConvTranspose2d(2, 3, 3, bias=False).double().eval()
    fused = nn.utils.fuse_conv_bn_eval(convt, bn, transpose=True)
    np.testing.assert_allclose(arr(fused(x)), _np_bn(arr(convt(x)), bn), rtol=1e-10,
                               atol=1e-12)
    lin = nn.Linear(4, 3).double().eval()
    bn1 = _bn_with_stats(nn.BatchNorm1d(3), rng)
    z = t64(rng.standard_normal((5, 4)))
    np.testing.assert_allclose(arr(nn.utils.fuse_linear_bn_eval(lin, bn1)(z)),
                               _np_bn(arr(lin(z)), bn1), rtol=1e-10, atol=1e-12)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)
    with pytest.raises(AssertionError, match="linear.out_features must equal bn.num_features"):
        nn.utils.fuse_linear_bn_eval(lin, _bn_with_stats(nn.BatchNorm1d(2), rng))


# ----------------------------------------------------------------------------- functional_call

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight
        self.register_buffer("shift", fnx.zeros(2))

    def forward(self, x, scale=1.0):
        return self.b(self.a(x)) * scale + self.shift


def test_functional_call_replaces_for_one_call(rng):
    m = Tied().double()
    w_own = arr(m.a.weight).copy()
    x = rng.standard_normal((3, 2))
    w = rng.standard_normal((2, 2))
    s = rng.standard_normal(2)
    out = functional_call(m, {"a.weight": t64(w), "shift": t64(s)}, t64(x), {"scale": 2.0})
    # tie_weights: b.weight is a.weight, so it takes the value too
    np.testing.assert_allclose(arr(out), x @ w.T @ w.T * 2 + s, rtol=1e-12)
    np.testing.assert_allclose(arr(m.a.weight), w_own)        # the module is unchanged
    assert m.b.weight is m.a.weight and not arr(m.shift).any()
    out = functional_call(m, {"a.weight": t64(w)}, (t64(x),), tie_weights=False)
    np.testing.assert_allclose(arr(out), x @ w.T @ w_own.T, rtol=1e-12)
    # several dicts; gradients reach the given tensors
    wt = t64(w, True)
    out = functional_call(m, ({"a.weight": wt}, {"shift": t64(s)}), (t64(x),))
    out.sum().backward()
    assert gradcheck(lambda ww: functional_call(m, {"a.weight": ww}, (t64(x),)),
                     (t64(w, True),))
    assert wt.grad is not None and m.a.weight.grad is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.utils.stateless.functional_call(m, {"a.weight": t64(w)}, (t64(x),))
    assert any(issubclass(c.category, FutureWarning) for c in caught)


def test_functional_call_errors_restore_the_module(rng):
    m = Tied().double()
    w = t64(np.eye(2))
    with pytest.raises(ValueError, match="functional_call got multiple values for keys "
                                         r"\['a.weight', 'b.weight'\], which are tied"):
        functional_call(m, {"a.weight": w, "b.weight": t64(np.ones((2, 2)))}, (w,))
    with pytest.raises(ValueError, match=r"\['a.weight'\] appeared in multiple dictionaries"):
        functional_call(m, ({"a.weight": w}, {"a.weight": w}), (w,))
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Tied:\n\t"
                                           r"Unexpected key\(s\): 'c'.\n\tMissing key\(s\): "
                                           r"'a.weight', 'b.weight', 'shift'."):
        functional_call(m, {"c": w}, (w,), strict=True)
    own = m.a.weight
    with pytest.raises(RuntimeError):
        functional_call(m, {"a.weight": t64(np.ones((3, 3)))}, (w,))
    assert m.a.weight is own and m.b.weight is own
    # the same value for tied names is fine
    functional_call(m, {"a.weight": w, "b.weight": w}, (w,))


# ----------------------------------------------------------------------------- small helpers

def test_parameters_vector_and_clip_grad_value(rng):
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    np.testing.assert_array_equal(arr(vec), np.concatenate([arr(m.weight).ravel(),
                                                            arr(m.bias)]))
    new = rng.standard_normal(8).astype(np.float32)
    nn.utils.vector_to_parameters(fnx.tensor(new), m.parameters())
    np.testing.assert_array_equal(arr(m.weight), new[:6].reshape(2, 3))
    np.testing.assert_array_equal(arr(m.bias), new[6:])
    g = rng.standard_normal((2, 3)).astype(np.float32) * 3
    m.weight.grad = fnx.tensor(g)
    nn.utils.clip_grad_value_(m.parameters(), 1.5)
    np.testing.assert_array_equal(arr(m.weight.grad), np.clip(g, -1.5, 1.5))


def test_parametrized_modules_compile(rng):
    x = fnx.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for make in (lambda: P.weight_norm(nn.Linear(3, 2)),
                 lambda: P.orthogonal(nn.Linear(3, 3)),
                 lambda: P.spectral_norm(nn.Linear(3, 2))):
        fnx.manual_seed(0)
        eager = make()
        compiled_module = copy.deepcopy(eager)
        compiled = fnx.compile(compiled_module)
        for _ in range(2):    # spectral_norm: a power-iteration step per call, both sides
            np.testing.assert_allclose(arr(compiled(x)), arr(eager(x)), rtol=1e-5, atol=1e-6)
        for (name, a), (_, b) in zip(eager.named_buffers(), compiled_module.named_buffers()):
            np.testing.assert_allclose(arr(b), arr(a), rtol=1e-5, atol=1e-6, err_msg=name)


def test_functional_call_compiles(rng):
    m = nn.Linear(3, 2)
    own = m.weight
    f = fnx.compile(lambda w, x: functional_call(m, {"weight": w}, (x,)))
    x = fnx.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for _ in range(2):              # a new weight each call: no recompilation needed
        w = rng.standard_normal((2, 3)).astype(np.float32)
        np.testing.assert_allclose(arr(f(fnx.tensor(w), x)), arr(x) @ w.T + arr(m.bias),
                                   rtol=1e-5, atol=1e-6)
    assert m.weight is own
