"""The ``*_copy`` forms of the view ops, the named splits (``split_with_sizes``,
``unsafe_*``) and ``as_strided_scatter``, against NumPy: values, no shared data with the
input, ``out=`` (resized; PyTorch's exact-dtype rule), autograd, ``fnx.compile`` and the
cuda backend (FNX_CUDA_ON_CPU=1)."""
import numpy as np
import pytest

import fnx

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M = np.arange(6, dtype=np.float32).reshape(2, 3)

# name -> (input, args, kwargs, NumPy reference)
SINGLE = {
    "alias_copy": (M, (), {}, lambda a: a),
    "detach_copy": (M, (), {}, lambda a: a),
    "t_copy": (M, (), {}, lambda a: a.T),
    "as_strided_copy": (M, ((2, 2), (1, 2), 1), {},
                        lambda a: np.lib.stride_tricks.as_strided(
                            a.reshape(-1)[1:], (2, 2), (4, 8))),
    "diagonal_copy": (A, (1, 1, 2), {}, lambda a: np.diagonal(a, 1, 1, 2)),
    "expand_copy": (M[:1], ((4, 3),), {}, lambda a: np.broadcast_to(a, (4, 3))),
    "permute_copy": (A, ((2, 0, 1),), {}, lambda a: a.transpose(2, 0, 1)),
    "select_copy": (A, (1, 2), {}, lambda a: a[:, 2]),
    "slice_copy": (A, (2, 1, 4, 2), {}, lambda a: a[:, :, 1:4:2]),
    "squeeze_copy": (M[:, None], (), {"dim": 1}, lambda a: a[:, 0]),
    "transpose_copy": (A, (0, 2), {}, lambda a: a.swapaxes(0, 2)),
    "unfold_copy": (np.arange(7, dtype=np.float32), (0, 3, 2), {},
                    lambda a: np.stack([a[0:3], a[2:5], a[4:7]])),
    "unsqueeze_copy": (M, (-1,), {}, lambda a: a[..., None]),
    "view_copy": (A, ((4, 6),), {}, lambda a: a.reshape(4, 6)),
    "view_as_real_copy": (np.array([1 + 2j, 3 - 4j], np.complex64), (), {},
                          lambda a: np.stack([a.real, a.imag], -1)),
    "view_as_complex_copy": (M[:, :2].copy(), (), {}, lambda a: a[:, 0] + 1j * a[:, 1]),
}
SPLIT = {
    "split_copy": (A, (2, 2), {}, lambda a: [a[:, :, :2], a[:, :, 2:]]),
    "split_with_sizes_copy": (A, ([1, 2], 1), {}, lambda a: [a[:, :1], a[:, 1:]]),
    "unbind_copy": (M, (1,), {}, lambda a: [a[:, 0], a[:, 1], a[:, 2]]),
}


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_copy_form_values_and_no_sharing(name):
    a, args, kwargs, ref = SINGLE[name]
    x = fnx.from_numpy(a.copy())
    y = getattr(fnx, name)(x, *args, **kwargs)
    np.testing.assert_array_equal(y.numpy(), ref(a))
    assert y.is_contiguous()
    before = x.numpy().copy()
    y.zero_() if y.numel() else None
    np.testing.assert_array_equal(x.numpy(), before)       # nothing shared


@pytest.mark.parametrize("name", sorted(SPLIT))
def test_split_copy_forms(name):
    a, args, kwargs, ref = SPLIT[name]
    x = fnx.from_numpy(a.copy())
    pieces = getattr(fnx, name)(x, *args, **kwargs)
    want = ref(a)
    assert len(pieces) == len(want)
    for p, w in zip(pieces, want):
        np.testing.assert_array_equal(p.numpy(), w)
        p.fill_(-1)
    np.testing.assert_array_equal(x.numpy(), a)
    outs = [fnx.empty(0) for _ in want]
    assert getattr(fnx, name)(x, *args, out=outs, **kwargs) is None
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o.numpy(), w)
    with pytest.raises(RuntimeError, match="expected out to have"):
        getattr(fnx, name)(x, *args, out=outs[:1] + outs, **kwargs)


def test_out_resizes_and_wants_the_exact_dtype():
    x = fnx.from_numpy(M.copy())
    out = fnx.empty(0)
    assert fnx.t_copy(x, out=out) is out
    np.testing.assert_array_equal(out.numpy(), M.T)
    bad = fnx.zeros(3, 2, dtype=fnx.float64)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        fnx.permute_copy(x, (1, 0), out=bad)
    assert bad.tolist() == [[0.0, 0.0]] * 3


def test_named_splits():
    x = fnx.arange(7)
    for got in (fnx.split_with_sizes(x, [3, 4]), x.split_with_sizes([3, 4]),
                fnx.unsafe_split_with_sizes(x, [3, 4]), x.unsafe_split_with_sizes([3, 4])):
        assert isinstance(got, tuple)
        assert [t.tolist() for t in got] == [[0, 1, 2], [3, 4, 5, 6]]
    assert [t.tolist() for t in fnx.unsafe_split(x, 3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [t.tolist() for t in x.unsafe_chunk(2)] == [[0, 1, 2, 3], [4, 5, 6]]
    with pytest.raises(RuntimeError):
        fnx.split_with_sizes(x, [3, 3])                   # sizes must add up to 7


def _as_strided_scatter_ref(base_storage, shape, strides, offset, src, size, stride, soff):
    """NumPy: write src into a copy of the storage, read input's elements back."""
    st = base_storage.copy()
    for idx in np.ndindex(*size):
        st[soff + sum(i * s for i, s in zip(idx, stride))] = src[idx]
    out = np.empty(shape, st.dtype)
    for idx in np.ndindex(*shape):
        out[idx] = st[offset + sum(i * s for i, s in zip(idx, strides))]
    return out


def test_as_strided_scatter_contiguous_and_strided_input():
    src = np.array([[7.0, 8.0], [9.0, 10.0]], np.float32)
    x = fnx.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    got = fnx.as_strided_scatter(x, fnx.from_numpy(src), (2, 2), (4, 1), 1)
    want = _as_strided_scatter_ref(np.arange(12, dtype=np.float32), (3, 4), (4, 1), 0, src,
                                   (2, 2), (4, 1), 1)
    np.testing.assert_array_equal(got.numpy(), want)
    assert x.numpy()[0, 1] == 1.0                          # input unchanged
    # a non-contiguous input: positions are its storage's (PyTorch's rule)
    base = fnx.arange(16.0).reshape(4, 4)
    y = base[:, ::2]
    got = y.as_strided_scatter(fnx.ones(2), (2,), (1,), 0)
    want = _as_strided_scatter_ref(np.arange(16.0), (4, 2), (4, 2), 0, np.ones(2), (2,), (1,),
                                   0)
    np.testing.assert_array_equal(got.numpy(), want)


def test_as_strided_scatter_errors():
    x = fnx.zeros(3, 3)
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        fnx.as_strided_scatter(x, fnx.ones(3), (2,), (4,), 1)
    with pytest.raises(RuntimeError, match="out of bounds"):
        fnx.as_strided_scatter(x, fnx.ones(2), (2,), (4,), 8)


def test_autograd():
    w = fnx.tensor(M, requires_grad=True)
    g = np.arange(6, dtype=np.float32).reshape(3, 2)
    (fnx.t_copy(w) * fnx.from_numpy(g)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), g.T)
    w = fnx.zeros(3, 3, requires_grad=True)
    s = fnx.ones(2, requires_grad=True)
    weight = np.arange(9, dtype=np.float32).reshape(3, 3)
    (fnx.as_strided_scatter(w, s, (2,), (4,), 1) * fnx.from_numpy(weight)).sum().backward()
    mask = np.ones(9, np.float32)
    mask[[1, 5]] = 0
    np.testing.assert_array_equal(w.grad.numpy(), (weight.reshape(-1) * mask).reshape(3, 3))
    np.testing.assert_array_equal(s.grad.numpy(), [1.0, 5.0])


def test_compiled_matches_eager():
    def f(x, s):
        a = fnx.transpose_copy(x, 0, 1)
        b = fnx.as_strided_scatter(x, s, (2,), (4,), 1)
        c = fnx.select_copy(x, 1, 2) + fnx.slice_copy(x, 0, 1, 3).sum()
        return a, b, c, fnx.unbind_copy(x)[1]

    x = fnx.from_numpy(np.arange(9, dtype=np.float32).reshape(3, 3))
    s = fnx.tensor([-1.0, -2.0])
    for e, c in zip(f(x, s), fnx.compile(f)(x, s)):
        np.testing.assert_array_equal(c.numpy(), e.numpy())


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_backend_sample():
    x = fnx.from_numpy(A.copy()).cuda()
    np.testing.assert_array_equal(fnx.permute_copy(x, (2, 0, 1)).cpu().numpy(),
                                  A.transpose(2, 0, 1))
    out = fnx.empty(0, device="cuda")
    fnx.diagonal_copy(x, 0, 1, 2, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), np.diagonal(A, 0, 1, 2))
    got = fnx.as_strided_scatter(fnx.zeros(3, 3, device="cuda"), fnx.ones(2, device="cuda"),
                                 (2,), (4,), 1)
    want = np.zeros(9, np.float32)
    want[[1, 5]] = 1
    np.testing.assert_array_equal(got.cpu().numpy(), want.reshape(3, 3))


def test_slice_inverse_views_input_with_src_geometry():
    a = np.arange(12, dtype=np.float32)
    b = fnx.from_numpy(a.copy()).reshape(3, 4)
    src = fnx.ones(3, 4)[:, 1:3]                        # strides (4, 1), offset 1
    got = fnx.slice_inverse(b[:, 1:3], src, 1, 1, 3)
    np.testing.assert_array_equal(got.numpy(), np.lib.stride_tricks.as_strided(
        a[1:], (3, 2), (16, 4)))
    got.fill_(-1)                                       # a view of b's data
    assert b[0, 1].item() == -1 and b[0, 0].item() == 0
