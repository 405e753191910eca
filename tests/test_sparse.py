"""Sparse layouts (COO, CSR/CSC/BSR/BSC): constructors and their checks, conversions and
round trips, components, coalesce, products, sums, gradients, printing and the errors.
References are dense NumPy arrays built by hand (``np.add.at``)."""
import pickle

import numpy as np
import pytest

import fnx
from fnx.dispatch import DispatchKey as K
from fnx.ops import aten

RNG = np.random.default_rng(0)


def _dense_ref(idx, vals, shape):
    out = np.zeros(shape, np.asarray(vals).dtype)
    np.add.at(out, tuple(np.asarray(idx)), np.asarray(vals))
    return out


def _random_dense(shape, density=0.4):
    a = RNG.standard_normal(shape).astype(np.float32)
    a[RNG.random(shape) > density] = 0
    return a


IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]          # (0, 2) appears twice: uncoalesced
VALS = [3.0, 4.0, 5.0, 1.0]


def _coo():
    return fnx.sparse_coo_tensor(IDX, VALS, (2, 3))


# ------------------------------------------------------------------ layouts

def test_layout_objects_and_predicates():
    assert repr(fnx.strided) == "fnx.strided" and repr(fnx.sparse_bsc) == "fnx.sparse_bsc"
    assert fnx.zeros(2).layout is fnx.strided
    s = _coo()
    assert s.layout is fnx.sparse_coo and s.is_sparse and not s.is_sparse_csr
    c = s.to_sparse_csr()
    assert c.layout is fnx.sparse_csr and c.is_sparse_csr and not c.is_sparse
    assert not fnx.zeros(2).is_sparse and not fnx.zeros(2).is_sparse_csr
    assert pickle.loads(pickle.dumps(fnx.sparse_csc)) is fnx.sparse_csc


def test_sparse_dispatch_keys():
    assert K.SparseCPU in _coo()._keyset
    assert K.SparseCsrCPU in _coo().to_sparse_csr()._keyset
    # above the dense backends, below the tracer
    assert K.CPU < K.SparseCPU < K.SparseCsrCPU < K.BackendSelect < K.Tracer


# ------------------------------------------------------------------ constructors

def test_coo_to_dense_sums_duplicates():
    s = _coo()
    np.testing.assert_array_equal(s.to_dense().numpy(), _dense_ref(IDX, VALS, (2, 3)))
    assert s.shape == (2, 3) and s.dtype is fnx.float32
    assert s._nnz() == 4 and s.sparse_dim() == 2 and s.dense_dim() == 0
    assert not s.is_coalesced()


def test_coo_size_inference_and_hybrid():
    s = fnx.sparse_coo_tensor([[0, 3]], [[1., 2.], [3., 4.]])
    assert s.shape == (4, 2) and s.sparse_dim() == 1 and s.dense_dim() == 1
    ref = np.zeros((4, 2), np.float32)
    ref[0], ref[3] = [1, 2], [3, 4]
    np.testing.assert_array_equal(s.to_dense().numpy(), ref)
    e = fnx.sparse_coo_tensor(fnx.zeros(2, 0, dtype=fnx.int64), fnx.zeros(0))
    assert e.shape == (0, 0) and e._nnz() == 0


def test_coo_dtype_and_requires_grad():
    s = fnx.sparse_coo_tensor([[0]], [1], (2,), dtype=fnx.float64, requires_grad=True)
    assert s.dtype is fnx.float64 and s.requires_grad and s.grad_fn is None


@pytest.mark.parametrize("args, kwargs, msg", [
    (([0, 1], [1., 2.]), {}, "indices must be sparse_dim x nnz, but got: [2]"),
    (([[0, 1]], [1., 2., 3.]), {}, "indices and values must have same nnz, but got nnz from "
                                   "indices: 2, nnz from values: 3"),
    (([[0, -1]], [1., 2.]), {}, "found negative index -1 for dim 0"),
    (([[0, 5]], [1., 2.], (3,)), {}, "size is inconsistent with indices: for dim 0, size is 3 "
                                     "but found index 5"),
    (([[0, 1]], [1., 2.], (2, 3)), {}, "'len(size) == sparse_dim + dense_dim' is not "
                                       "satisfied: len(size) = 2, sparse_dim = 1, dense_dim = 0"),
    (([[0, 1]], [[1., 2.], [3., 4.]], (2, 3)), {}, "values has incorrect size, expected "
                                                   "[2, 3], got [2, 2]"),
])
def test_coo_constructor_errors(args, kwargs, msg):
    with pytest.raises(RuntimeError) as e:
        fnx.sparse_coo_tensor(*args, **kwargs)
    assert msg in str(e.value)


def test_csr_constructor_and_inference():
    c = fnx.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [3., 4., 5.])
    assert c.shape == (2, 3)
    np.testing.assert_array_equal(c.to_dense().numpy(),
                                  [[0, 0, 3], [4, 0, 5]])
    assert c.crow_indices().tolist() == [0, 1, 3] and c.col_indices().tolist() == [2, 0, 2]
    assert c.values().tolist() == [3., 4., 5.] and c._nnz() == 3


@pytest.mark.parametrize("crow, col, size, msg", [
    ([0, 2, 1], [2, 0], (2, 3), "`crow_indices[..., -1] == nnz` is not satisfied."),
    ([1, 1, 2], [2, 0], (2, 3), "`crow_indices[..., 0] == 0` is not satisfied."),
    ([0, 1, 2], [3, 0], (2, 3), "`0 <= col_indices < ncols` is not satisfied."),
    ([0, 1, 2], [1, 0], (3, 2), "crow_indices.shape[-1] must be equal to the number of rows + "
                                "1 (=4), but got 3"),
    ([0, 2, 2], [1, 0], (2, 2), "are sorted and distinct"),
])
def test_csr_constructor_errors(crow, col, size, msg):
    with pytest.raises(RuntimeError) as e:
        fnx.sparse_csr_tensor(crow, col, [1., 2.], size)
    assert msg in str(e.value)


def test_csc_bsr_bsc_constructors():
    a = np.array([[0, 1], [2, 0]], np.float32)
    csc = fnx.sparse_csc_tensor([0, 1, 2], [1, 0], [2., 1.])
    np.testing.assert_array_equal(csc.to_dense().numpy(), a)
    blocks = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    bsr = fnx.sparse_bsr_tensor([0, 1, 2], [1, 0], blocks)
    ref = np.zeros((4, 4), np.float32)
    ref[0:2, 2:4], ref[2:4, 0:2] = blocks[0], blocks[1]
    np.testing.assert_array_equal(bsr.to_dense().numpy(), ref)
    bsc = fnx.sparse_bsc_tensor([0, 1, 2], [1, 0], blocks)
    ref = np.zeros((4, 4), np.float32)
    ref[2:4, 0:2], ref[0:2, 2:4] = blocks[0], blocks[1]
    np.testing.assert_array_equal(bsc.to_dense().numpy(), ref)
    with pytest.raises(RuntimeError, match="expected sparse compressed tensor layout"):
        fnx.sparse_compressed_tensor([0], [], [], layout=fnx.sparse_coo)


# ------------------------------------------------------------------ conversions

@pytest.mark.parametrize("conv", [
    lambda x: x.to_sparse(), lambda x: x.to_sparse_coo(), lambda x: x.to_sparse_csr(),
    lambda x: x.to_sparse_csc(), lambda x: x.to_sparse_bsr((2, 3)),
    lambda x: x.to_sparse_bsc((1, 2)), lambda x: x.to_sparse(layout=fnx.sparse_csr),
    lambda x: x.to_sparse(layout=fnx.sparse_bsc, blocksize=(2, 2)),
])
def test_dense_round_trip(conv):
    a = _random_dense((4, 6))
    s = conv(fnx.tensor(a))
    assert s.layout is not fnx.strided
    np.testing.assert_array_equal(s.to_dense().numpy(), a)


LAYOUTS = [("coo", lambda x: x.to_sparse()), ("csr", lambda x: x.to_sparse_csr()),
           ("csc", lambda x: x.to_sparse_csc()), ("bsr", lambda x: x.to_sparse_bsr((2, 2))),
           ("bsc", lambda x: x.to_sparse_bsc((2, 1)))]


@pytest.mark.parametrize("a_name, to_a", LAYOUTS, ids=[n for n, _ in LAYOUTS])
@pytest.mark.parametrize("b_name, to_b", LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_between_layouts(a_name, to_a, b_name, to_b):
    a = _random_dense((4, 6))
    s = to_b(to_a(fnx.tensor(a)))
    np.testing.assert_array_equal(s.to_dense().numpy(), a)


def test_csr_components_match_scipy_style_reference():
    a = _random_dense((5, 7))
    c = fnx.tensor(a).to_sparse_csr()
    rows, cols = np.nonzero(a)
    np.testing.assert_array_equal(c.crow_indices().numpy(),
                                  np.concatenate([[0], np.cumsum(np.bincount(rows,
                                                                             minlength=5))]))
    np.testing.assert_array_equal(c.col_indices().numpy(), cols)
    np.testing.assert_array_equal(c.values().numpy(), a[rows, cols])
    k = fnx.tensor(a).to_sparse_csc()
    cr, cc = np.nonzero(a.T)
    np.testing.assert_array_equal(k.ccol_indices().numpy(),
                                  np.concatenate([[0], np.cumsum(np.bincount(cr,
                                                                             minlength=7))]))
    np.testing.assert_array_equal(k.row_indices().numpy(), cc)


def test_to_sparse_sparse_dim_hybrid():
    a = _random_dense((3, 4))
    a[1] = 0
    s = fnx.tensor(a).to_sparse(1)
    assert s.sparse_dim() == 1 and s.dense_dim() == 1
    keep = np.nonzero(np.any(a != 0, axis=1))[0]
    np.testing.assert_array_equal(s.indices().numpy(), keep[None])
    np.testing.assert_array_equal(s.values().numpy(), a[keep])
    np.testing.assert_array_equal(s.to_dense().numpy(), a)


def test_conversion_errors():
    with pytest.raises(RuntimeError, match="divisible by given blocksize"):
        fnx.ones(3, 4).to_sparse_bsr((2, 2))
    with pytest.raises(RuntimeError, match="2 sparse dims"):
        fnx.ones(2, 3, 4).to_sparse_csr()
    with pytest.raises(RuntimeError, match="sparse_dim argument must be in"):
        fnx.ones(2, 3).to_sparse(3)


# ------------------------------------------------------------------ components, coalesce

def test_indices_values_need_coalesced():
    s = _coo()
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor, "
                                           "please call .coalesce\\(\\) first"):
        s.indices()
    with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
        s.values()
    np.testing.assert_array_equal(s._indices().numpy(), IDX)
    np.testing.assert_array_equal(s._values().numpy(), VALS)


def test_coalesce_sorts_and_sums():
    s = _coo().coalesce()
    assert s.is_coalesced()
    ref = _dense_ref(IDX, VALS, (2, 3))
    rows, cols = np.nonzero(ref)
    np.testing.assert_array_equal(s.indices().numpy(), np.stack([rows, cols]))
    np.testing.assert_array_equal(s.values().numpy(), ref[rows, cols])
    assert s.coalesce() is s


def test_component_layout_errors():
    s, c = _coo(), _coo().to_sparse_csr()
    with pytest.raises(RuntimeError, match="crow_indices expected sparse row compressed tensor "
                                           "layout but got Sparse"):
        s.crow_indices()
    with pytest.raises(RuntimeError, match="indices expected sparse coordinate tensor layout "
                                           "but got SparseCsr"):
        c.indices()
    with pytest.raises(RuntimeError, match="is_coalesced expected sparse coordinate tensor "
                                           "layout but got SparseCsr"):
        c.is_coalesced()
    with pytest.raises(RuntimeError, match="ccol_indices expected"):
        c.ccol_indices()


def test_copy_forms_share_nothing():
    s = _coo().coalesce()
    i = fnx.indices_copy(s)
    i[0, 0] = 7
    assert s.indices()[0, 0].item() == 0
    v = fnx.values_copy(s)
    np.testing.assert_array_equal(v.numpy(), s.values().numpy())
    c = s.to_sparse_csr()
    assert fnx.crow_indices_copy(c).tolist() == c.crow_indices().tolist()
    assert fnx.col_indices_copy(c).tolist() == c.col_indices().tolist()
    k = s.to_sparse_csc()
    assert fnx.ccol_indices_copy(k).tolist() == k.ccol_indices().tolist()
    assert fnx.row_indices_copy(k).tolist() == k.row_indices().tolist()


def test_values_are_shared_with_the_tensor():
    s = _coo().coalesce()
    s.values()[0] = 100.0
    assert s.to_dense()[0, 2].item() == 100.0


def test_sparse_and_dense_dim_of_strided():
    assert fnx.ones(2, 3).sparse_dim() == 0 and fnx.ones(2, 3).dense_dim() == 2


# ------------------------------------------------------------------ products

@pytest.mark.parametrize("name, to", LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_mm_matmul_addmm(name, to):
    a, b = _random_dense((4, 6)), RNG.standard_normal((6, 3)).astype(np.float32)
    s, d = to(fnx.tensor(a)), fnx.tensor(b)
    for out in (fnx.mm(s, d), fnx.matmul(s, d), s @ d, fnx.sparse.mm(s, d), fnx.dsmm(s, d),
                fnx.spmm(s, d)):
        assert out.layout is fnx.strided
        np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    c = RNG.standard_normal((4, 3)).astype(np.float32)
    out = fnx.addmm(fnx.tensor(c), s, d, beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * c + 2.0 * (a @ b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fnx.sparse.addmm(fnx.tensor(c), s, d).numpy(), c + a @ b,
                               rtol=1e-5, atol=1e-5)


def test_mm_uncoalesced_and_vector():
    s = _coo()
    b = RNG.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_allclose((s @ fnx.tensor(b)).numpy(), _dense_ref(IDX, VALS, (2, 3)) @ b,
                               rtol=1e-6)
    v = RNG.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose((s @ fnx.tensor(v)).numpy(), _dense_ref(IDX, VALS, (2, 3)) @ v,
                               rtol=1e-6)
    # dense @ sparse
    m = RNG.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose((fnx.tensor(m) @ s).numpy(), m @ _dense_ref(IDX, VALS, (2, 3)),
                               rtol=1e-6)


def test_mm_errors():
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        fnx.mm(_coo(), fnx.ones(2, 2))


def test_sparse_results_of_products():
    a, b = _random_dense((4, 5)), RNG.standard_normal((5, 3)).astype(np.float32)
    s, d = fnx.tensor(a).to_sparse(), fnx.tensor(b)
    for r in (fnx.smm(s, d), s.smm(d)):
        assert r.layout is fnx.sparse_coo
        np.testing.assert_allclose(r.to_dense().numpy(), a @ b, rtol=1e-5, atol=1e-5)
    for r in (fnx.hspmm(s, d), fnx.hsmm(s, d)):
        assert r.layout is fnx.sparse_coo and r.sparse_dim() == 1 and r.dense_dim() == 1
        np.testing.assert_allclose(r.to_dense().numpy(), a @ b, rtol=1e-5, atol=1e-5)
    c = _random_dense((4, 3))
    for r in (fnx.saddmm(fnx.tensor(c).to_sparse(), s, d, beta=2., alpha=3.),
              fnx.sspaddmm(fnx.tensor(c).to_sparse(), s, d, beta=2., alpha=3.)):
        assert r.layout is fnx.sparse_coo
        np.testing.assert_allclose(r.to_dense().numpy(), 2 * c + 3 * (a @ b), rtol=1e-5,
                                   atol=1e-5)
    e = fnx.sparse.mm(s, fnx.tensor(b).to_sparse())
    assert e.layout is fnx.sparse_coo
    np.testing.assert_allclose(e.to_dense().numpy(), a @ b, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ pointwise, shape, sums

def test_add_mul_neg_sub_div():
    a, b = _random_dense((3, 4)), _random_dense((3, 4))
    sa, sb = fnx.tensor(a).to_sparse(), fnx.tensor(b).to_sparse()
    r = sa + sb
    assert r.layout is fnx.sparse_coo
    np.testing.assert_allclose(r.to_dense().numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(fnx.add(sa, sb, alpha=2).to_dense().numpy(), a + 2 * b,
                               rtol=1e-6)
    np.testing.assert_allclose((sa - sb).to_dense().numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose((sa * 3).to_dense().numpy(), a * 3, rtol=1e-6)
    np.testing.assert_allclose((2.5 * sa).to_dense().numpy(), a * 2.5, rtol=1e-6)
    np.testing.assert_allclose((sa / 2).to_dense().numpy(), a / 2, rtol=1e-6)
    np.testing.assert_allclose((-sa).to_dense().numpy(), -a, rtol=1e-6)
    np.testing.assert_allclose((sa + fnx.tensor(b)).numpy(), a + b, rtol=1e-6)
    ca, cb = fnx.tensor(a).to_sparse_csr(), fnx.tensor(b).to_sparse_csr()
    r = ca + cb
    assert r.layout is fnx.sparse_csr
    np.testing.assert_allclose(r.to_dense().numpy(), a + b, rtol=1e-6)
    assert (ca * 2).layout is fnx.sparse_csr
    with pytest.raises(RuntimeError, match="one layout"):
        sa + cb
    with pytest.raises(RuntimeError, match="to have same size"):
        sa + fnx.ones(2, 2).to_sparse()


def test_transpose():
    a = _random_dense((3, 5))
    s = fnx.tensor(a).to_sparse()
    for t in (s.t(), s.transpose(0, 1), fnx.t(s)):
        assert t.layout is fnx.sparse_coo and t.shape == (5, 3)
        np.testing.assert_array_equal(t.to_dense().numpy(), a.T)
    c = fnx.tensor(a).to_sparse_csr().t()
    assert c.layout is fnx.sparse_csc
    np.testing.assert_array_equal(c.to_dense().numpy(), a.T)
    b = fnx.tensor(_random_dense((4, 6))).to_sparse_bsr((2, 3))
    np.testing.assert_array_equal(b.t().to_dense().numpy(), b.to_dense().numpy().T)


def test_sparse_sum():
    s = _coo()
    ref = _dense_ref(IDX, VALS, (2, 3))
    assert fnx.sparse.sum(s).item() == pytest.approx(ref.sum())
    r = fnx.sparse.sum(s, 0)
    assert r.layout is fnx.sparse_coo
    np.testing.assert_allclose(r.to_dense().numpy(), ref.sum(0))
    r = fnx.sparse.sum(s, (0, 1))
    assert r.layout is fnx.strided and r.item() == pytest.approx(ref.sum())
    h = fnx.tensor(_random_dense((3, 4))).to_sparse(1)
    np.testing.assert_allclose(fnx.sparse.sum(h, 1).to_dense().numpy(),
                               h.to_dense().numpy().sum(1), rtol=1e-6)


def test_sparse_mask():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    m = _random_dense((3, 4))
    for mask in (fnx.tensor(m).to_sparse(), fnx.tensor(m).to_sparse_csr()):
        r = fnx.tensor(a).sparse_mask(mask)
        assert r.layout is mask.layout
        np.testing.assert_array_equal(r.to_dense().numpy(), np.where(m != 0, a, 0))
    with pytest.raises(RuntimeError, match="incompatible sizes"):
        fnx.ones(2, 2).sparse_mask(fnx.tensor(m).to_sparse())


def test_softmax_over_stored_entries():
    s = _coo().coalesce()
    d = s.to_dense().numpy()
    stored = d != 0
    x = np.where(stored, d, -np.inf)
    e = np.exp(x - x.max(1, keepdims=True))
    ref = np.where(stored, e / e.sum(1, keepdims=True), 0)
    r = fnx.sparse.softmax(s, 1)
    assert r.layout is fnx.sparse_coo
    np.testing.assert_allclose(r.to_dense().numpy(), ref, rtol=1e-6)
    lr = fnx.sparse.log_softmax(s, 1)
    np.testing.assert_allclose(lr.values().numpy(), np.log(ref[stored]), rtol=1e-6)


# ------------------------------------------------------------------ resizes

def test_sparse_resizes():
    s = fnx.sparse_coo_tensor([[1]], [2.])
    v = s._version
    assert s.sparse_resize_((4,), 1, 0) is s and s.shape == (4,)
    assert s._version > v
    np.testing.assert_array_equal(s.to_dense().numpy(), [0, 2, 0, 0])
    with pytest.raises(RuntimeError, match="shrinking"):
        s.sparse_resize_((1,), 1, 0)
    s.sparse_resize_and_clear_((2, 2), 2, 0)
    assert s.shape == (2, 2) and s._nnz() == 0 and s.sparse_dim() == 2
    fnx.resize_as_sparse_(s, fnx.zeros(3, 5).to_sparse(1))
    assert s.shape == (3, 5) and s.sparse_dim() == 1 and s.dense_dim() == 1
    with pytest.raises(RuntimeError, match="must be sparse_dim"):
        s.sparse_resize_((2, 2), 1, 0)


# ------------------------------------------------------------------ autograd

def _fd(f, x, eps=1e-3):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_grad_to_values_through_to_dense():
    w = RNG.standard_normal((2, 3))
    v = fnx.tensor(VALS, dtype=fnx.float64, requires_grad=True)
    s = fnx.sparse_coo_tensor(IDX, v, (2, 3))
    (s.to_dense() * fnx.tensor(w)).pow(2).sum().backward()

    def f(vals):
        return ((_dense_ref(IDX, vals, (2, 3)) * w) ** 2).sum()
    np.testing.assert_allclose(v.grad.numpy(), _fd(f, np.array(VALS)), rtol=1e-5)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_grad_of_mm_to_values_and_dense(layout):
    b = RNG.standard_normal((3, 2))
    v = fnx.tensor([3., 4., 5.], dtype=fnx.float64, requires_grad=True)
    d = fnx.tensor(b, requires_grad=True)
    if layout == "coo":
        idx = [[0, 1, 1], [2, 0, 2]]
        s = fnx.sparse_coo_tensor(idx, v, (2, 3))
    else:
        idx = [[0, 1, 1], [2, 0, 2]]
        s = fnx.sparse_csr_tensor([0, 1, 3], [2, 0, 2], v, (2, 3))
    fnx.mm(s, d).pow(2).sum().backward()
    vals = np.array([3., 4., 5.])
    np.testing.assert_allclose(
        v.grad.numpy(), _fd(lambda x: ((_dense_ref(idx, x, (2, 3)) @ b) ** 2).sum(), vals),
        rtol=1e-5)
    np.testing.assert_allclose(
        d.grad.numpy(), _fd(lambda y: ((_dense_ref(idx, vals, (2, 3)) @ y) ** 2).sum(), b),
        rtol=1e-5)


def test_grad_of_sparse_leaf():
    a = np.array([[1., 0], [2, 3]])
    x = fnx.tensor(a).to_sparse().requires_grad_()
    (x * 2).to_dense().sum().backward()
    assert x.grad.layout is fnx.sparse_coo
    np.testing.assert_array_equal(x.grad.to_dense().numpy(), np.where(a != 0, 2.0, 0.0))
    y = fnx.tensor(a).to_sparse().requires_grad_()
    b = RNG.standard_normal((2, 2))
    (y @ fnx.tensor(b)).sum().backward()
    # mm gives a dense gradient, as PyTorch's
    np.testing.assert_allclose(y.grad.numpy(), np.ones((2, 2)) @ b.T)


def test_grad_through_conversions_and_sum():
    a = _random_dense((4, 4)).astype(np.float64)
    x = fnx.tensor(a, requires_grad=True)
    blocks = np.any((a != 0).reshape(2, 2, 2, 2), axis=(1, 3))
    block_mask = np.kron(blocks, np.ones((2, 2))) != 0
    for conv, stored in ((lambda t: t.to_sparse(), a != 0), (lambda t: t.to_sparse_csr(), a != 0),
                         (lambda t: t.to_sparse_bsc((2, 2)), block_mask),
                         (lambda t: t.to_sparse().to_sparse_csc(), a != 0)):
        x.grad = None
        (conv(x).to_dense() * 3).sum().backward()
        # to_dense's gradient is masked to the stored entries (whole blocks), as PyTorch's
        np.testing.assert_allclose(x.grad.numpy(), np.where(stored, 3.0, 0.0))
    x.grad = None
    fnx.sparse.sum(x.to_sparse()).backward()
    np.testing.assert_allclose(x.grad.numpy(), (a != 0).astype(np.float64))
    x.grad = None
    fnx.sparse.sum(x.to_sparse(), 0).to_dense().pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(a != 0, 2 * a.sum(0), 0.0))


def test_grad_of_values_method():
    v = fnx.tensor([1., 2.], requires_grad=True)
    s = fnx.sparse_coo_tensor([[0, 2]], v, (3,)).coalesce()
    (s.values() * fnx.tensor([3., 4.])).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [3., 4.])


# ------------------------------------------------------------------ errors, printing, compile

def test_unsupported_op_raises_pytorchs_error():
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments "
                                                  "from the 'SparseCPU' backend"):
        fnx.exp(_coo())
    with pytest.raises(NotImplementedError, match="'SparseCsrCPU' backend"):
        fnx.cumsum(_coo().to_sparse_csr(), 0)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_nnz' with arguments "
                                                  "from the 'CPU' backend"):
        fnx.ones(2)._nnz()
    with pytest.raises(TypeError, match="can't convert sparse_coo layout tensor to numpy"):
        _coo().numpy()


def test_bad_input_leaves_tensor_unchanged():
    s = _coo()
    before = s._indices().numpy().copy()
    with pytest.raises(RuntimeError):
        s.sparse_resize_((1, 1), 2, 0)
    np.testing.assert_array_equal(s._indices().numpy(), before)
    assert s.shape == (2, 3)


def test_repr_like_pytorch():
    s = fnx.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4., 5.], (2, 3))
    assert repr(s) == ("tensor(indices=tensor([[0, 1, 1],\n"
                       "                       [2, 0, 2]]),\n"
                       "       values=tensor([3., 4., 5.]),\n"
                       "       size=(2, 3), nnz=3, layout=fnx.sparse_coo)")
    assert repr(s.to_sparse_csr()) == ("tensor(crow_indices=tensor([0, 1, 3]),\n"
                                       "       col_indices=tensor([2, 0, 2]),\n"
                                       "       values=tensor([3., 4., 5.]), size=(2, 3), "
                                       "nnz=3, layout=fnx.sparse_csr)")
    e = fnx.zeros(2, 3).to_sparse(1)
    assert "indices=tensor([], size=(1, 0))" in repr(e) and "nnz=0" in repr(e)
    assert "dtype=fnx.float64" in repr(fnx.eye(2, dtype=fnx.float64).to_sparse())


def test_compile_runs_sparse_calls_eagerly_as_torch_compile_does():
    # a compiled program holds dense arrays: a call with a sparse argument runs eagerly
    # (later dense calls still compile); a function that reads or makes a sparse tensor
    # runs eagerly from then on; fullgraph=True raises instead (as torch.compile)
    s = fnx.eye(2).to_sparse()
    f = fnx.compile(lambda x: x.to_dense() * 2)
    with pytest.warns(UserWarning, match="sparse tensors .* are not supported.*eagerly "
                                         "for such calls"):
        assert f(s).tolist() == [[2.0, 0.0], [0.0, 2.0]]
    assert f(fnx.eye(2)).tolist() == [[2.0, 0.0], [0.0, 2.0]] and len(f.entries()) == 1
    g = fnx.compile(lambda x: (s @ x) * 2)
    with pytest.warns(UserWarning, match="eagerly from now on"):
        assert g(fnx.ones(2, 2)).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    h = fnx.compile(lambda x: x.to_sparse().to_dense() * 2)
    with pytest.warns(UserWarning, match="eagerly from now on"):
        assert h(fnx.eye(2)).tolist() == [[2.0, 0.0], [0.0, 2.0]]
    for fn, arg in [(lambda x: x.to_dense() * 2, s), (lambda x: (s @ x) * 2, fnx.ones(2, 2))]:
        with pytest.raises(RuntimeError, match="sparse tensors .* are not supported"):
            fnx.compile(fn, fullgraph=True)(arg)
    with pytest.raises(RuntimeError, match="tracing aten::_to_sparse at .*test_sparse.py.*"
                                           "sparse tensors are not supported"):
        fnx.compile(lambda x: x.to_sparse().to_dense() * 2, fullgraph=True)(fnx.eye(2))


def test_ops_by_aten_name():
    s = aten._to_sparse.default(fnx.eye(3))
    assert s.layout is fnx.sparse_coo
    assert aten._nnz.default(s) == 3 and aten.sparse_dim.default(s) == 2
    np.testing.assert_array_equal(aten._to_dense.default(s).numpy(), np.eye(3))


def test_factories_with_a_sparse_layout():
    z = fnx.zeros(2, 3, layout=fnx.sparse_coo)
    assert z.layout is fnx.sparse_coo and z._nnz() == 0 and z.sparse_dim() == 2
    np.testing.assert_array_equal(z.to_dense().numpy(), np.zeros((2, 3)))
    assert fnx.empty(4, layout=fnx.sparse_coo).shape == (4,)
    assert fnx.zeros(2, layout=fnx.strided).layout is fnx.strided
    with pytest.raises(RuntimeError, match="sparse_coo layout only"):
        fnx.zeros(2, 2, layout=fnx.sparse_csr)


def test_tensor_sum_of_sparse():
    s = _coo()
    assert s.sum().item() == pytest.approx(sum(VALS))
    assert fnx.sum(s).layout is fnx.strided


def test_pickle_round_trip_and_save_refusal(tmp_path):
    s = _coo()
    r = pickle.loads(pickle.dumps(s))
    assert r.layout is fnx.sparse_coo and not r.is_coalesced()
    np.testing.assert_array_equal(r._indices().numpy(), IDX)
    np.testing.assert_array_equal(r.to_dense().numpy(), _dense_ref(IDX, VALS, (2, 3)))
    b = fnx.eye(4).to_sparse_bsr((2, 2)).requires_grad_()
    rb = pickle.loads(pickle.dumps(b))
    assert rb.layout is fnx.sparse_bsr and rb.requires_grad
    np.testing.assert_array_equal(rb.to_dense().detach().numpy(), np.eye(4))
    with pytest.raises(RuntimeError, match="cannot save the sparse tensor"):
        fnx.save({"w": s}, tmp_path / "w.pt")


def test_component_errors_on_strided():
    for f, msg in ((lambda t: t.indices(), "indices expected sparse coordinate tensor layout"),
                   (lambda t: t.values(), "values expected sparse tensor layout"),
                   (lambda t: t.crow_indices(), "crow_indices expected sparse row compressed"),
                   (lambda t: t.coalesce(), "coalesce expected sparse coordinate tensor"),
                   (lambda t: t.is_coalesced(), "is_coalesced expected sparse coordinate")):
        with pytest.raises(RuntimeError, match=msg + ".* but got Strided"):
            f(fnx.ones(2))


def test_spdiags_matches_scipy():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    data = RNG.standard_normal((3, 5)).astype(np.float32)
    offsets = [0, -1, 2]
    for shape in ((5, 5), (4, 6), (6, 3)):
        ref = scipy_sparse.spdiags(data, offsets, *shape).toarray()
        r = fnx.sparse.spdiags(fnx.tensor(data), fnx.tensor(offsets), shape)
        assert r.layout is fnx.sparse_coo
        np.testing.assert_array_equal(r.to_dense().numpy(), ref)
    r = fnx.sparse.spdiags(fnx.tensor(data), fnx.tensor(offsets), (5, 5), layout=fnx.sparse_csr)
    assert r.layout is fnx.sparse_csr
    np.testing.assert_array_equal(r.to_dense().numpy(),
                                  scipy_sparse.spdiags(data, offsets, 5, 5).toarray())
    with pytest.raises(RuntimeError, match="duplicate"):
        fnx.sparse.spdiags(fnx.tensor(data), fnx.tensor([0, 0, 1]), (5, 5))
    with pytest.raises(RuntimeError, match="does not match the number of offsets"):
        fnx.sparse.spdiags(fnx.tensor(data), fnx.tensor([0, 1]), (5, 5))


def test_sampled_addmm():
    a = _random_dense((4, 5))
    m1, m2 = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 5))
    inp = fnx.tensor(a).to_sparse_csr()
    r = fnx.sparse.sampled_addmm(inp, fnx.tensor(m1, dtype=fnx.float32),
                                 fnx.tensor(m2, dtype=fnx.float32), beta=0.5, alpha=2.0)
    assert r.layout is fnx.sparse_csr
    assert r.crow_indices().tolist() == inp.crow_indices().tolist()
    np.testing.assert_allclose(r.to_dense().numpy(),
                               np.where(a != 0, 0.5 * a + 2.0 * (m1 @ m2), 0), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(RuntimeError, match="sparse csr layout"):
        fnx.sparse.sampled_addmm(fnx.tensor(a).to_sparse(), fnx.ones(4, 3), fnx.ones(3, 5))


def test_check_sparse_tensor_invariants_switch():
    C = fnx.sparse.check_sparse_tensor_invariants
    assert not C.is_enabled()
    with C():
        assert C.is_enabled()
    assert not C.is_enabled()
    # fnx checks the indices whatever the switch says
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        fnx.sparse_coo_tensor([[0, 5]], [1., 2.], (3,), check_invariants=False)


def test_hybrid_compressed_and_hybrid_mm():
    x = _random_dense((4, 6, 2))
    for conv in (lambda t: t.to_sparse_csr(dense_dim=1), lambda t: t.to_sparse_csc(dense_dim=1),
                 lambda t: t.to_sparse_bsr((2, 3), dense_dim=1)):
        c = conv(fnx.tensor(x))
        assert c.dense_dim() == 1 and c.sparse_dim() == 2
        np.testing.assert_array_equal(c.to_dense().numpy(), x)
        np.testing.assert_array_equal(c.to_sparse_coo().to_dense().numpy(), x)
    a = _random_dense((5, 3))
    h = fnx.tensor(a).to_sparse(1)
    b = RNG.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_allclose((h @ fnx.tensor(b)).numpy(), a @ b, rtol=1e-5, atol=1e-6)


def test_add_of_coalesced_operands_is_coalesced():
    a, b = _random_dense((3, 4)), _random_dense((3, 4))
    r = fnx.tensor(a).to_sparse() + fnx.tensor(b).to_sparse()
    assert r.is_coalesced()
    ref = a + b
    stored = (a != 0) | (b != 0)
    assert r._nnz() == stored.sum()
    np.testing.assert_allclose(r.to_dense().numpy(), ref, rtol=1e-6)
    u = _coo() + _coo()
    assert not u.is_coalesced() and u._nnz() == 8
    np.testing.assert_allclose(u.to_dense().numpy(), 2 * _dense_ref(IDX, VALS, (2, 3)))


def test_components_are_fresh_handles_outside_autograd():
    v = fnx.tensor([1., 2.], requires_grad=True)
    s = fnx.sparse_coo_tensor([[0, 1]], v, (3,), is_coalesced=True)
    w = s.values()
    # the user's leaf is not the component, nor marked by values()'s autograd node
    assert w is not v and v.grad_fn is None and v.is_leaf
    assert s.values() is not w and s.indices() is not s.indices()
    (w * fnx.tensor([3., 4.])).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3., 4.])


def test_add_promotes_with_a_dense_operand_and_refuses_mixed_sparse_dtypes():
    s = fnx.eye(2).to_sparse()
    r = s + fnx.ones(2, 2, dtype=fnx.float64)
    assert r.dtype is fnx.float64 and r.layout is fnx.strided
    np.testing.assert_array_equal(r.numpy(), np.eye(2) + 1)
    with pytest.raises(NotImplementedError, match="two dtypes"):
        s + fnx.eye(2, dtype=fnx.float64).to_sparse()


def test_sparse_leaf_accumulates_mixed_gradients():
    a = np.array([[1., 0], [2, 3]])
    w = fnx.tensor(a).to_sparse().requires_grad_()
    (w * 2).to_dense().sum().backward()
    (w @ fnx.ones(2, 2, dtype=fnx.float64)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.where(a != 0, 2.0, 0.0) + 2.0)
