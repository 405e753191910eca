"""fnx.fft as torch.fft: values against numpy.fft (and hand-computed ones), norm modes, n/s
cropping and padding, dim handling, dtype rules, PyTorch's errors, gradients against
finite differences (complex results through view_as_real), and compiled vs eager."""
import warnings

import numpy as np
import pytest

import fnx
from fnx.autograd import gradcheck

NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(0)


def _real(*shape):
    return RNG.standard_normal(shape)


def _cplx(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _close(t, expected, tol=1e-10):
    np.testing.assert_allclose(t.numpy(), expected, rtol=tol, atol=tol)


def test_hand_computed_values():
    _close(fnx.fft.fft(fnx.tensor([1.0, 2.0, 3.0, 4.0], dtype=fnx.float64)),
           [10, -2 + 2j, -2, -2 - 2j])
    # the inverse of a constant spectrum is an impulse, and back
    _close(fnx.fft.ifft(fnx.tensor([1.0, 1.0, 1.0, 1.0], dtype=fnx.float64)), [1, 0, 0, 0])
    _close(fnx.fft.irfft(fnx.tensor([4.0, 0.0, 0.0], dtype=fnx.float64)), [1, 1, 1, 1])


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 3, 6, 11])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft"])
def test_one_dim_forward_family(name, n, norm):
    x = _real(4, 6)
    got = getattr(fnx.fft, name)(fnx.tensor(x), n=n, dim=0 if name == "ifft" else -1,
                                 norm=norm)
    want = getattr(np.fft, name)(x, n=n, axis=0 if name == "ifft" else -1, norm=norm)
    _close(got, want)
    if name in ("fft", "ifft"):
        z = _cplx(5, 4)
        _close(getattr(fnx.fft, name)(fnx.tensor(z), n=n, norm=norm),
               getattr(np.fft, name)(z, n=n, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 7, 12])
@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_one_dim_complex_to_real(name, n, norm):
    half = np.fft.rfft(_real(3, 8))
    got = getattr(fnx.fft, name)(fnx.tensor(half), n=n, norm=norm)
    _close(got, getattr(np.fft, name)(half, n=n, norm=norm))
    assert got.dtype is fnx.float64


@pytest.mark.parametrize("norm", NORMS)
def test_n_dim_transforms(norm):
    x, z = _real(3, 4, 6), _cplx(3, 4, 6)
    _close(fnx.fft.fftn(fnx.tensor(z), norm=norm), np.fft.fftn(z, norm=norm))
    _close(fnx.fft.ifftn(fnx.tensor(z), s=(5, 3), norm=norm),
           np.fft.ifftn(z, s=(5, 3), axes=(1, 2), norm=norm))
    _close(fnx.fft.rfftn(fnx.tensor(x), dim=(0, 2), norm=norm),
           np.fft.rfftn(x, axes=(0, 2), norm=norm))
    _close(fnx.fft.fft2(fnx.tensor(x), norm=norm), np.fft.fft2(x, norm=norm))
    _close(fnx.fft.rfft2(fnx.tensor(x), s=(2, 9), norm=norm),
           np.fft.rfft2(x, s=(2, 9), norm=norm))
    half = np.fft.rfftn(x)
    _close(fnx.fft.irfftn(fnx.tensor(half), norm=norm), np.fft.irfftn(half, norm=norm))
    _close(fnx.fft.irfft2(fnx.tensor(half), s=(5, 7), norm=norm),
           np.fft.irfft2(half, s=(5, 7), norm=norm))


def test_hfftn_and_ihfftn_invert_each_other_and_match_hfft_in_one_dim():
    x = _real(4, 6)
    for norm in NORMS:
        h = fnx.fft.ihfftn(fnx.tensor(x), norm=norm)
        _close(fnx.fft.hfftn(h, s=x.shape, norm=norm), x)
        _close(fnx.fft.hfft2(fnx.fft.ihfft2(fnx.tensor(x), norm=norm), s=x.shape, norm=norm), x)
    # over one dim they are numpy's hfft / ihfft
    half = _cplx(3, 5)
    _close(fnx.fft.hfftn(fnx.tensor(half), dim=(1,)), np.fft.hfft(half))
    _close(fnx.fft.ihfftn(fnx.tensor(x), dim=(1,)), np.fft.ihfft(x))
    # hfftn(x) is the c2r transform of conj(x): irfftn(conj(x)) times the number of points
    full = np.fft.irfftn(np.conj(half)) * (3 * 8)
    _close(fnx.fft.hfftn(fnx.tensor(half)), full)


def test_s_minus_one_keeps_a_size_and_s_alone_picks_the_last_dims():
    z = _cplx(2, 3, 4)
    _close(fnx.fft.fftn(fnx.tensor(z), s=(-1, 6)), np.fft.fftn(z, s=(3, 6), axes=(1, 2)))
    _close(fnx.fft.fftn(fnx.tensor(z), s=(5,)), np.fft.fftn(z, s=(5,), axes=(2,)))


def test_dtypes_follow_pytorch():
    f32 = fnx.tensor(_real(4), dtype=fnx.float32)
    assert fnx.fft.fft(f32).dtype is fnx.complex64
    assert fnx.fft.rfft(f32).dtype is fnx.complex64
    assert fnx.fft.fft(f32.double()).dtype is fnx.complex128
    ints = fnx.arange(6)
    assert fnx.fft.fft(ints).dtype is fnx.complex64     # ints: the default float dtype
    assert fnx.fft.fft(ints > 2).dtype is fnx.complex64
    assert fnx.fft.irfft(ints).dtype is fnx.float32
    assert fnx.fft.hfft(fnx.fft.rfft(f32)).dtype is fnx.float32
    _close(fnx.fft.fft(ints), np.fft.fft(np.arange(6)), 1e-5)


def test_errors_are_pytorchs():
    x = fnx.ones(4, 6)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        fnx.fft.fft(x, norm="bad")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        fnx.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        fnx.fft.irfft(fnx.ones(1, dtype=fnx.complex64))       # 2 * (1 - 1) points
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        fnx.fft.fft(fnx.ones(0))
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got "
                                           "ComplexFloat"):
        fnx.fft.rfft(fnx.ones(3, dtype=fnx.complex64))
    with pytest.raises(RuntimeError, match="rfftn expects a real-valued input tensor"):
        fnx.fft.rfft2(fnx.ones(3, 3, dtype=fnx.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        fnx.fft.fft(x.half())
    with pytest.raises(IndexError, match="Dimension out of range"):
        fnx.fft.fft(x, dim=2)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        fnx.fft.fft(fnx.tensor(1.0))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        fnx.fft.fftn(x, dim=(0, -2))
    with pytest.raises(RuntimeError, match="must have the same length"):
        fnx.fft.fftn(x, s=(2,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="Got shape with 3 values but input tensor only "
                                           "has 2 dimensions"):
        fnx.fft.fftn(x, s=(2, 3, 4))
    with pytest.raises(IndexError):
        fnx.fft.fft2(fnx.ones(3))


def test_frequencies_and_shifts():
    for n, d in ((5, 1.0), (8, 0.1), (1, 3.0)):
        _close(fnx.fft.fftfreq(n, d, dtype=fnx.float64), np.fft.fftfreq(n, d))
        _close(fnx.fft.rfftfreq(n, d, dtype=fnx.float64), np.fft.rfftfreq(n, d))
    assert fnx.fft.fftfreq(4).dtype is fnx.float32
    assert fnx.fft.fftfreq(3, requires_grad=True).requires_grad
    x = fnx.arange(24).reshape(4, 6)
    a = x.numpy()
    np.testing.assert_array_equal(fnx.fft.fftshift(x).numpy(), np.fft.fftshift(a))
    np.testing.assert_array_equal(fnx.fft.ifftshift(x, dim=1).numpy(),
                                  np.fft.ifftshift(a, axes=1))
    np.testing.assert_array_equal(fnx.fft.fftshift(x, dim=(0,)).numpy(),
                                  np.fft.fftshift(a, axes=0))
    np.testing.assert_array_equal(fnx.fft.ifftshift(fnx.fft.fftshift(x)).numpy(), a)


def _dbl(*shape):
    return fnx.tensor(_real(*shape)).requires_grad_()


def _complex(re, im):
    return re.to(fnx.complex128) + im.to(fnx.complex128) * 1j


@pytest.mark.parametrize("case", [
    # (function of real float64 tensors, shapes)
    (lambda x: fnx.view_as_real(fnx.fft.fft(x, n=7)), [(3, 5)]),
    (lambda x: fnx.view_as_real(fnx.fft.ifft(x, dim=0, norm="ortho")), [(4, 3)]),
    (lambda x: fnx.view_as_real(fnx.fft.rfft(x, n=6, norm="forward")), [(2, 8)]),
    (lambda x: fnx.view_as_real(fnx.fft.ihfft(x)), [(5,)]),
    (lambda x: fnx.view_as_real(fnx.fft.rfftn(x, s=(3, 6))), [(2, 4, 5)]),
    (lambda a, b: fnx.view_as_real(fnx.fft.fft2(_complex(a, b), norm="ortho")), [(3, 4)] * 2),
    (lambda a, b: fnx.view_as_real(fnx.fft.ifftn(_complex(a, b), s=(2, 5))), [(3, 4)] * 2),
    (lambda a, b: fnx.fft.irfft(_complex(a, b), n=7), [(3, 4)] * 2),
    (lambda a, b: fnx.fft.irfft(_complex(a, b)), [(2, 5)] * 2),
    (lambda a, b: fnx.fft.hfft(_complex(a, b), n=5, norm="ortho"), [(2, 4)] * 2),
    (lambda a, b: fnx.fft.irfftn(_complex(a, b), s=(3, 6)), [(2, 4)] * 2),
    (lambda a, b: fnx.fft.hfft2(_complex(a, b)), [(3, 3)] * 2),
    (lambda x: fnx.fft.fftshift(x, dim=(1,)), [(2, 5)]),
], ids=lambda c: None)
def test_gradients_match_finite_differences(case):
    fn, shapes = case
    assert gradcheck(fn, [_dbl(*s) for s in shapes])


def test_compiled_matches_eager():
    x = fnx.tensor(_real(3, 8))

    def f(x):
        return fnx.view_as_real(fnx.fft.rfft(x, norm="ortho")).sum(-1) + fnx.fft.irfft(
            fnx.fft.fft(x), n=5)[..., :1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no eager fallback: the whole graph lowers
        got = fnx.compile(f, fullgraph=True)(x)
    _close(got, f(x).numpy())
