"""F.grouped_mm against NumPy loops over the groups (all four operand cases, empty groups,
rows past offs[-1], gradients, compile) and F.linear_cross_entropy against a NumPy cross
entropy of NumPy logits."""
import numpy as np
import pytest

import fnx
import fnx.nn.functional as F

RNG = np.random.default_rng(0)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _bounds(offs):
    starts = [0] + list(offs[:-1])
    return list(zip(starts, offs))


def ref_grouped_mm(a, b, offs):
    if offs is None:
        return np.stack([a[i] @ b[i] for i in range(a.shape[0])])
    if a.ndim == 2 and b.ndim == 3:
        out = np.zeros((a.shape[0], b.shape[2]), np.float32)
        for i, (s, e) in enumerate(_bounds(offs)):
            out[s:e] = a[s:e] @ b[i]
        return out
    if a.ndim == 3:
        out = np.zeros((a.shape[1], b.shape[1]), np.float32)
        for i, (s, e) in enumerate(_bounds(offs)):
            out[:, s:e] = a[i] @ b[:, s:e]
        return out
    return np.stack([a[:, s:e] @ b[s:e] for s, e in _bounds(offs)])


CASES = [
    ("3d-3d", (3, 4, 5), (3, 5, 6), None),
    ("2d-3d", (10, 5), (3, 5, 6), [3, 3, 8]),        # an empty group; rows 8, 9 past the end
    ("3d-2d", (3, 4, 5), (5, 12), [4, 9, 12]),
    ("2d-2d", (4, 10), (10, 6), [4, 4, 10]),
]


@pytest.mark.parametrize("name,sa,sb,offs", CASES, ids=[c[0] for c in CASES])
def test_grouped_mm_values_and_grad(name, sa, sb, offs):
    a, b = _r(*sa), _r(*sb)
    o = None if offs is None else fnx.tensor(offs, dtype=fnx.int32)
    at, bt = fnx.tensor(a, requires_grad=True), fnx.tensor(b, requires_grad=True)
    out = F.grouped_mm(at, bt, offs=o)
    want = ref_grouped_mm(a, b, offs)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    # the gradient of sum(out * g) is linear in g: check it against the NumPy map's
    # finite difference along one random direction of each operand
    g = _r(*want.shape)
    (out * fnx.tensor(g)).sum().backward()
    for t, x, other in ((at, a, b), (bt, b, a)):
        d = _r(*x.shape)
        if t is at:
            fd = np.sum(ref_grouped_mm(a + d, b, offs) * g) - np.sum(want * g)
        else:
            fd = np.sum(ref_grouped_mm(a, b + d, offs) * g) - np.sum(want * g)
        np.testing.assert_allclose(np.sum(t.grad.numpy() * d), fd, rtol=1e-3, atol=1e-3)


def test_grouped_mm_compiled():
    a, b = _r(10, 5), _r(3, 5, 6)
    f = fnx.compile(lambda x, y, o: F.grouped_mm(x, y, offs=o))
    out = f(fnx.tensor(a), fnx.tensor(b), fnx.tensor([2, 7, 10], dtype=fnx.int32))
    np.testing.assert_allclose(out.numpy(), ref_grouped_mm(a, b, [2, 7, 10]), rtol=1e-5,
                               atol=1e-5)


def test_grouped_mm_bfloat16_out_float32():
    a, b = _r(2, 3, 4), _r(2, 4, 5)
    ab, bb = fnx.tensor(a).bfloat16(), fnx.tensor(b).bfloat16()
    out = F.grouped_mm(ab, bb, out_dtype=fnx.float32)
    assert out.dtype is fnx.float32
    want = ref_grouped_mm(ab.float().numpy(), bb.float().numpy(), None)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    assert F.grouped_mm(ab, bb).dtype is fnx.bfloat16


@pytest.mark.parametrize("args,kw,msg", [
    (((3, 4, 5), (3, 5, 6)), {"offs": [1, 2, 3]}, "Have to provide offsets"),
    (((10, 5), (3, 5, 6)), {}, "Have to provide offsets"),
    (((10, 5), (3, 5, 6)), {"offs": [3, 8]}, "matrix batch sizes have to match"),
    (((3, 4, 5), (3, 4, 6)), {}, "contraction dimension of mat_a and mat_b must match"),
    (((3, 4, 5), (2, 5, 6)), {}, "batched dimension has to match"),
    (((2, 3, 4, 5), (3, 5, 6)), {}, "mat_a has to be 2 or 3d"),
    (((3, 4, 5), (3, 5, 6)), {"bias": True}, "Bias not supported yet"),
])
def test_grouped_mm_errors(args, kw, msg):
    a, b = fnx.tensor(_r(*args[0])), fnx.tensor(_r(*args[1]))
    if "offs" in kw:
        kw = dict(kw, offs=fnx.tensor(kw["offs"], dtype=fnx.int32))
    if "bias" in kw:
        kw = dict(kw, bias=fnx.zeros(3, 6))
    with pytest.raises(RuntimeError, match=msg):
        F.grouped_mm(a, b, **kw)


def test_grouped_mm_offs_and_dtype_errors():
    a, b = fnx.tensor(_r(10, 5)), fnx.tensor(_r(3, 5, 6))
    with pytest.raises(RuntimeError, match="Offsets have to be int32"):
        F.grouped_mm(a, b, offs=fnx.tensor([3, 3, 8]))
    with pytest.raises(RuntimeError, match="offs has to be 1D"):
        F.grouped_mm(a, b, offs=fnx.tensor([[3, 3, 8]], dtype=fnx.int32))
    with pytest.raises(RuntimeError, match="Expected mat_a to be Float32, BFloat16 or Float16 "
                                           "matrix, got Double"):
        F.grouped_mm(a.double(), b.double(), offs=fnx.tensor([3, 3, 8], dtype=fnx.int32))


# ----------------------------------------------------------------------- linear_cross_entropy

def _np_ce(logits, target, weight=None, reduction="mean", ignore_index=-100, smoothing=0.0):
    """Class-index cross entropy over dim 1 (NumPy, float64)."""
    z = np.moveaxis(logits.astype(np.float64), 1, -1)
    logp = z - z.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    c = z.shape[-1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    nll = -np.take_along_axis(logp, t[..., None], -1)[..., 0] * w[t]
    smooth = -(logp * w).sum(-1)
    loss = np.where(keep, (1 - smoothing) * nll + smoothing / c * smooth, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / np.where(keep, w[t], 0).sum()


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                {"ignore_index": 2}, {"label_smoothing": 0.2},
                                {"weight": True}])
def test_linear_cross_entropy_matches_numpy(kw):
    x, w, bias = _r(6, 5), _r(4, 5), _r(4)
    target = np.array([0, 1, 2, 3, 2, 1])
    cw = np.abs(_r(4)) + 0.5
    args = dict(kw)
    if args.pop("weight", None):
        args["weight"] = fnx.tensor(cw)
    out = F.linear_cross_entropy(fnx.tensor(x), fnx.tensor(w), fnx.tensor(target),
                                 linear_bias=fnx.tensor(bias), **args)
    want = _np_ce(x @ w.T + bias, target, cw if "weight" in args else None,
                  kw.get("reduction", "mean"), kw.get("ignore_index", -100),
                  kw.get("label_smoothing", 0.0))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_linear_cross_entropy_k_dimensional_and_grad():
    x, w = _r(3, 5), _r(4, 2, 5)           # logits (3, 4, 2)
    target = np.array([[0, 3], [1, 1], [2, 0]])
    xt = fnx.tensor(x, requires_grad=True)
    out = F.linear_cross_entropy(xt, fnx.tensor(w), fnx.tensor(target))
    logits = np.einsum("ni,cki->nck", x, w)
    np.testing.assert_allclose(out.item(), _np_ce(logits, target), rtol=1e-5)
    out.backward()
    d = _r(3, 5) * 1e-3
    fd = _np_ce(np.einsum("ni,cki->nck", x + d, w), target) - _np_ce(logits, target)
    np.testing.assert_allclose(np.sum(xt.grad.numpy() * d), fd, rtol=2e-2, atol=1e-6)


def test_linear_cross_entropy_errors():
    x, w = fnx.ones(2, 3), fnx.ones(4, 3)
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(fnx.ones(1, 2, 3), w, fnx.tensor([0]))
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last"):
        F.linear_cross_entropy(x, fnx.ones(4, 2), fnx.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(4,\), got \(3,\)"):
        F.linear_cross_entropy(x, w, fnx.tensor([0, 1]), linear_bias=fnx.ones(3))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target"):
        F.linear_cross_entropy(x, w, fnx.ones(2, 4) / 4, ignore_index=0)
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(fnx.ones(3), fnx.ones(4, 2, 3), fnx.tensor([0, 1]))
