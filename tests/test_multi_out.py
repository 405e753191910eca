"""out= of the functions returning several tensors (fnx/api/out_results.py) and of the
index ops: results land in the given tensors (resized, returned as the named tuple),
matching NumPy; PyTorch's dtype errors leave every out tensor unchanged; out= refuses
autograd; the count of out tensors is checked; compiled programs write them too."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(2)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
L = fnx.linalg
F64, I64, I32 = fnx.float64, fnx.int64, fnx.int32


def _e(dtype=F64):
    return fnx.empty(0, dtype=dtype)


# name, call(out), out dtypes, NumPy reference of the outputs (None: not compared)
CASES = [
    ("sort", lambda x, o: fnx.sort(x, out=o), (F64, I64),
     lambda a: (np.sort(a, -1), np.argsort(a, -1, kind="stable"))),
    ("topk", lambda x, o: fnx.topk(x, 2, out=o), (F64, I64),
     lambda a: (-np.sort(-a, -1)[:, :2], np.argsort(-a, -1, kind="stable")[:, :2])),
    ("max", lambda x, o: fnx.max(x, 1, out=o), (F64, I64),
     lambda a: (a.max(1), a.argmax(1))),
    ("min", lambda x, o: fnx.min(x, 0, True, out=o), (F64, I64),
     lambda a: (a.min(0, keepdims=True), a.argmin(0)[None])),
    ("kthvalue", lambda x, o: fnx.kthvalue(x, 2, 1, out=o), (F64, I64),
     lambda a: (np.sort(a, 1)[:, 1], np.argsort(a, 1)[:, 1])),
    ("median", lambda x, o: fnx.median(x, 1, out=o), (F64, I64),
     lambda a: (np.sort(a, 1)[:, 1], np.argsort(a, 1)[:, 1])),
    ("nanmedian", lambda x, o: fnx.nanmedian(x, 0, out=o), (F64, I64),
     lambda a: (np.sort(a, 0)[1], np.argsort(a, 0)[1])),
    ("cummax", lambda x, o: fnx.cummax(x, 1, out=o), (F64, I64),
     lambda a: (np.maximum.accumulate(a, 1), None)),
    ("cummin", lambda x, o: fnx.cummin(x, 0, out=o), (F64, I64),
     lambda a: (np.minimum.accumulate(a, 0), None)),
    ("aminmax", lambda x, o: fnx.aminmax(x, dim=1, out=o), (F64, F64),
     lambda a: (a.min(1), a.max(1))),
    ("linalg.eigh", lambda x, o: L.eigh(x @ x.mT, out=o), (F64, F64),
     lambda a: (np.linalg.eigvalsh(a @ a.T), None)),
    ("linalg.slogdet", lambda x, o: L.slogdet(x, out=o), (F64, F64),
     lambda a: np.linalg.slogdet(a)),
    ("linalg.qr", lambda x, o: L.qr(x, out=o), (F64, F64), None),
    ("linalg.svd", lambda x, o: L.svd(x, out=o), (F64, F64, F64),
     lambda a: (None, np.linalg.svd(a, compute_uv=False), None)),
    ("linalg.lu_factor", lambda x, o: L.lu_factor(x, out=o), (F64, I32), None),
    ("linalg.lu_factor_ex", lambda x, o: L.lu_factor_ex(x, out=o), (F64, I32, I32), None),
    ("linalg.lu", lambda x, o: L.lu(x, out=o), (F64, F64, F64), None),
    ("linalg.inv_ex", lambda x, o: L.inv_ex(x, out=o), (F64, I32),
     lambda a: (np.linalg.inv(a), 0)),
    ("linalg.cholesky_ex", lambda x, o: L.cholesky_ex(x @ x.mT + 4 * fnx.eye(4, dtype=F64),
                                                      out=o), (F64, I32),
     lambda a: (np.linalg.cholesky(a @ a.T + 4 * np.eye(4)), 0)),
    ("linalg.solve_ex", lambda x, o: L.solve_ex(x, x.mT, out=o), (F64, I32),
     lambda a: (np.linalg.solve(a, a.T), 0)),
    ("linalg.eig", lambda x, o: L.eig(x @ x.mT, out=o), (fnx.complex128, fnx.complex128),
     None),
    ("linalg.ldl_factor", lambda x, o: L.ldl_factor(x @ x.mT, out=o), (F64, I32), None),
    ("slogdet", lambda x, o: fnx.slogdet(x, out=o), (F64, F64),
     lambda a: np.linalg.slogdet(a)),
    ("qr", lambda x, o: fnx.qr(x, out=o), (F64, F64), None),
    ("svd", lambda x, o: fnx.svd(x, out=o), (F64, F64, F64),
     lambda a: (None, np.linalg.svd(a, compute_uv=False), None)),
    ("geqrf", lambda x, o: fnx.geqrf(x, out=o), (F64, F64), None),
]


@pytest.mark.parametrize("name,call,dtypes,ref", CASES, ids=[c[0] for c in CASES])
def test_out_tensors_receive_the_results(name, call, dtypes, ref):
    x = fnx.tensor(A)
    outs = tuple(_e(d) for d in dtypes)
    r = call(x, outs)
    assert all(a is b for a, b in zip(r, outs))
    want = call(x, None)
    assert type(r) is type(want)
    for o, w in zip(outs, want):
        assert o.dtype is w.dtype and tuple(o.shape) == tuple(w.shape)
        np.testing.assert_array_equal(o.numpy(), w.numpy())
    if ref is not None:
        for o, w in zip(outs, ref(A)):
            if w is not None:
                np.testing.assert_allclose(o.numpy(), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,call,dtypes,ref", CASES[:10], ids=[c[0] for c in CASES[:10]])
def test_wrong_dtype_raises_and_writes_nothing(name, call, dtypes, ref):
    x = fnx.tensor(A)
    bad = [fnx.full((2,), 7, dtype=d) for d in dtypes]
    bad[-1] = fnx.full((2,), 7, dtype=I32 if dtypes[-1] is I64 else fnx.float32)
    with pytest.raises(RuntimeError):
        call(x, tuple(bad))
    for b in bad:
        assert tuple(b.shape) == (2,) and np.all(b.numpy() == 7)


def test_pytorchs_messages():
    x = fnx.tensor(A)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but "
                                           "got int instead"):
        fnx.sort(x, out=(_e(), _e(I32)))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype int, but got "
                                           "long int instead"):
        L.lu_factor(x, out=(_e(), _e(I64)))
    with pytest.raises(RuntimeError, match="output values must be of same type as input"):
        fnx.kthvalue(x, 1, 1, out=(_e(fnx.float32), _e(I64)))
    with pytest.raises(RuntimeError, match="expected scalar type 'Long' but got 'Int' for "
                                           "indices output"):
        fnx.mode(x, 1, out=(_e(), _e(I32)))
    with pytest.raises(RuntimeError, match="expected scalar_type Double but found Float"):
        fnx.cummax(x, 1, out=(_e(fnx.float32), _e(I64)))
    with pytest.raises(RuntimeError, match="torch.linalg.eig: Expected eigenvalues to be "
                                           "safely castable from ComplexDouble dtype"):
        L.eig(x, out=(_e(), _e(fnx.complex128)))
    with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
        fnx.sort(x, out=(_e(),))
    with pytest.raises(RuntimeError, match="sort\\(\\): functions with out=... arguments "
                                           "don't support automatic differentiation"):
        fnx.sort(x.clone().requires_grad_(), out=(_e(), _e(I64)))


def test_resize_warns_when_out_had_elements():
    x = fnx.tensor(A)
    v, i = fnx.zeros(3, dtype=F64), fnx.zeros(3, dtype=I64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fnx.sort(x, out=(v, i))
    assert any("was resized" in str(m.message) for m in w)
    np.testing.assert_array_equal(v.numpy(), np.sort(A, -1))


def test_compiled_program_writes_the_outs():
    v, i = _e(), _e(I64)
    fnx.compile(lambda a, v, i: fnx.topk(a, 3, out=(v, i)))(fnx.tensor(A), v, i)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-A, -1)[:, :3])


def test_index_ops_out():
    x, idx, src = fnx.zeros(5, dtype=F64), fnx.tensor([0, 3, 0]), fnx.tensor([1., 2., 3.],
                                                                            dtype=F64)
    o = _e()
    assert fnx.index_add(x, 0, idx, src, alpha=2, out=o) is o
    np.testing.assert_array_equal(o.numpy(), [8, 0, 0, 4, 0])
    o = _e()
    fnx.index_copy(x, 0, fnx.tensor([4, 1]), src[:2], out=o)
    np.testing.assert_array_equal(o.numpy(), [0, 2, 0, 0, 1])
    o = _e()
    fnx.index_reduce(x + 1, 0, idx, src, "prod", out=o)
    np.testing.assert_array_equal(o.numpy(), [3, 1, 1, 2, 1])
    o = _e()
    fnx.take(fnx.tensor(A), fnx.tensor([0, 5, 15]), out=o)
    np.testing.assert_array_equal(o.numpy(), A.ravel()[[0, 5, 15]])
    o = _e()
    fnx.histc(fnx.tensor(A), bins=4, min=-2, max=2, out=o)
    np.testing.assert_array_equal(o.numpy(), np.histogram(A, 4, (-2, 2))[0])
    bad = fnx.full((2,), 7.0)
    with pytest.raises(RuntimeError, match=r"take\(\): self and out expected to have the same "
                                           r"dtype"):
        fnx.take(fnx.tensor(A), fnx.tensor([0]), out=bad)
    assert np.all(bad.numpy() == 7)


def test_frexp_out_must_hold_the_results_dtypes():
    # PyTorch's frexp never casts into out=: a float64 mantissa or an int64 exponent for a
    # float32 input is refused, and neither out tensor is touched
    x = fnx.tensor([1.5, -3.0, 0.0, 8.0])
    for m, e, msg in [(fnx.zeros(4, dtype=fnx.float64), fnx.zeros(4, dtype=fnx.int32),
                       "expects mantissa to have dtype float but got double"),
                      (fnx.zeros(4), fnx.zeros(4, dtype=fnx.int64),
                       "expects exponent to have int dtype but got long int")]:
        with pytest.raises(RuntimeError, match=msg):
            fnx.frexp(x, out=(m, e))
        assert not m.numpy().any() and not e.numpy().any()
    m, e = fnx.zeros(4), fnx.zeros(4, dtype=fnx.int32)
    r = fnx.frexp(x, out=(m, e))
    ref_m, ref_e = np.frexp(x.numpy())
    assert r.mantissa is m and r.exponent is e
    np.testing.assert_array_equal(m.numpy(), ref_m)
    np.testing.assert_array_equal(e.numpy(), ref_e)


def test_eigvals_out_takes_a_wider_complex_dtype_and_refuses_real():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    ref = np.sort_complex(np.linalg.eigvals(a.astype(np.float64)))
    out = fnx.zeros(2, dtype=fnx.complex128)
    r = fnx.linalg.eigvals(fnx.tensor(a), out=out)
    assert r is out and out.dtype is fnx.complex128
    np.testing.assert_allclose(np.sort_complex(out.numpy()), ref, rtol=1e-6)
    real = fnx.zeros(2)
    with pytest.raises(RuntimeError, match="safely castable from ComplexFloat dtype, but got "
                                           "eigenvalues with dtype Float"):
        fnx.linalg.eigvals(fnx.tensor(a), out=real)
    assert not real.numpy().any()
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        fnx.linalg.eigvals(fnx.tensor(a), out=[out])
