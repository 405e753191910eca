"""fnx.stft / fnx.istft against a NumPy short-time transform written out here: frames cut by
hand, windowed, and transformed with np.fft; the inverse by overlap-add."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(0)


def _np_stft(x, n_fft, hop=None, win_length=None, window=None, center=True,
             pad_mode="reflect", normalized=False, onesided=None, align=False):
    x = np.asarray(x)
    hop = n_fft // 4 if hop is None else hop
    win = n_fft if win_length is None else win_length
    w = np.ones(win) if window is None else np.asarray(window)
    left = (n_fft - win) // 2
    full = np.zeros(n_fft, dtype=w.dtype)
    full[left:left + win] = w
    batch = x if x.ndim == 2 else x[None]
    if center:
        mode = {"reflect": "reflect", "constant": "constant", "replicate": "edge",
                "circular": "wrap"}[pad_mode]
        batch = np.pad(batch, ((0, 0), (n_fft // 2, n_fft // 2)), mode=mode)
    elif align:
        batch = np.pad(batch, ((0, 0), (left, n_fft - win - left)))
    count = 1 + (batch.shape[-1] - n_fft) // hop
    frames = np.stack([batch[:, i * hop:i * hop + n_fft] for i in range(count)], 1) * full
    if onesided is None:
        onesided = not (np.iscomplexobj(x) or np.iscomplexobj(w))
    spec = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    spec = np.swapaxes(spec, -1, -2)
    return spec if x.ndim == 2 else spec[0]


def _np_istft(spec, n_fft, hop=None, window=None, center=True, length=None):
    hop = n_fft // 4 if hop is None else hop
    w = np.ones(n_fft) if window is None else np.asarray(window)
    frames = np.fft.irfft(np.swapaxes(spec, -1, -2), n=n_fft, axis=-1) * w
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    y = np.zeros(frames.shape[:-2] + (total,))
    env = np.zeros(total)
    for i in range(count):
        y[..., i * hop:i * hop + n_fft] += frames[..., i, :]
        env[i * hop:i * hop + n_fft] += w ** 2
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    end = min(end, total)
    return y[..., start:end] / env[start:end]


CASES = [
    dict(n_fft=8),
    dict(n_fft=8, hop=3, window=np.hanning(8)),
    dict(n_fft=16, hop=5, win_length=10, window=RNG.random(10)),
    dict(n_fft=8, center=False, hop=2),
    dict(n_fft=8, pad_mode="constant"),
    dict(n_fft=8, pad_mode="replicate", hop=3),
    dict(n_fft=8, pad_mode="circular"),
    dict(n_fft=9, normalized=True, window=np.hanning(9)),
    dict(n_fft=8, onesided=False),
    dict(n_fft=8, hop=3, win_length=4, window=RNG.random(4), center=False, align=True),
]


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_matches_numpy(case, batched):
    c = dict(CASES[case])
    x = RNG.standard_normal((3, 37) if batched else 37)
    want = _np_stft(x, **c)
    window = c.pop("window", None)
    kw = dict(hop_length=c.pop("hop", None), win_length=c.pop("win_length", None),
              window=None if window is None else fnx.tensor(window),
              align_to_window=c.pop("align", False) or None)
    got = fnx.stft(fnx.tensor(x), c.pop("n_fft"), **kw, **c, return_complex=True)
    assert got.dtype == fnx.complex128
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)


def test_stft_complex_input_is_two_sided_and_float32_gives_complex64():
    z = RNG.standard_normal(30) + 1j * RNG.standard_normal(30)
    got = fnx.stft(fnx.tensor(z), 8, hop_length=4)
    np.testing.assert_allclose(got.numpy(), _np_stft(z, 8, hop=4), atol=1e-10)
    x = fnx.tensor(RNG.standard_normal(30).astype(np.float32))
    assert fnx.stft(x, 8, return_complex=True).dtype == fnx.complex64
    # a float64 window promotes, as PyTorch's
    assert x.stft(8, window=fnx.ones(8, dtype=fnx.float64),
                  return_complex=True).dtype == fnx.complex128


def test_stft_return_complex_false_is_view_as_real_with_a_warning():
    x = RNG.standard_normal(20)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        got = fnx.stft(fnx.tensor(x), 8, return_complex=False)
    want = _np_stft(x, 8)
    np.testing.assert_allclose(got.numpy(), np.stack([want.real, want.imag], -1), atol=1e-10)


@pytest.mark.parametrize("call, match", [
    (lambda x: fnx.stft(x, 8), "requires the return_complex parameter"),
    (lambda x: fnx.stft(x, 8, hop_length=0, return_complex=True), "hop_length > 0"),
    (lambda x: fnx.stft(x, 8, win_length=10, return_complex=True), "win_length <= n_fft"),
    (lambda x: fnx.stft(x, 8, window=fnx.ones(5, dtype=fnx.float64), return_complex=True),
     "window tensor of size equal to win_length=8"),
    (lambda x: fnx.stft(x, 30, center=False, return_complex=True), "n_fft=30"),
    (lambda x: fnx.stft(x[None, None], 8, return_complex=True), "1D or 2D"),
    (lambda x: fnx.stft(x.to(fnx.complex128), 8, onesided=True, return_complex=True),
     "Cannot have onesided output"),
    (lambda x: fnx.stft(x, 8, align_to_window=True, return_complex=True),
     "only be set when center = false"),
    (lambda x: fnx.stft(x.long(), 4, return_complex=True), "floating point or complex"),
])
def test_stft_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(fnx.tensor(RNG.standard_normal(20)))


@pytest.mark.parametrize("n_fft, hop, center", [(8, 2, True), (16, 4, True), (8, 4, False),
                                                 (10, 5, True)])
def test_istft_inverts_stft_and_matches_numpy(n_fft, hop, center):
    x = RNG.standard_normal((2, 41))
    w = np.hanning(n_fft + 1)[:n_fft] if center else np.ones(n_fft)   # periodic Hann: NOLA
    spec = fnx.stft(fnx.tensor(x), n_fft, hop_length=hop, window=fnx.tensor(w),
                    center=center, return_complex=True)
    got = fnx.istft(spec, n_fft, hop_length=hop, window=fnx.tensor(w), center=center)
    want = _np_istft(spec.numpy(), n_fft, hop, w, center)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-10)
    n = got.shape[-1]
    np.testing.assert_allclose(got.numpy(), x[:, :n], atol=1e-10)   # the round trip
    one = fnx.istft(spec[0], n_fft, hop_length=hop, window=fnx.tensor(w), center=center,
                    length=30)
    np.testing.assert_allclose(one.numpy(), x[0, :30], atol=1e-10)


def test_istft_pads_a_short_signal_and_two_sided_input():
    x = RNG.standard_normal(32)
    spec = fnx.stft(fnx.tensor(x), 8, return_complex=True)
    with pytest.warns(UserWarning, match="padded with zeros"):
        got = fnx.istft(spec, 8, length=40)
    # the samples past the signal are its reflection (centre padding), then zeros
    np.testing.assert_allclose(got.numpy()[:36], np.concatenate([x, x[-2:-6:-1]]),
                               atol=1e-10)
    np.testing.assert_array_equal(got.numpy()[36:], 0)
    two = fnx.stft(fnx.tensor(x), 8, onesided=False, return_complex=True)
    real = fnx.istft(two, 8)
    assert real.dtype == fnx.float64
    np.testing.assert_allclose(real.numpy(), x, atol=1e-10)
    cplx = fnx.istft(two, 8, return_complex=True)
    assert cplx.dtype == fnx.complex128
    np.testing.assert_allclose(cplx.numpy(), x, atol=1e-10)


def test_istft_errors():
    spec = fnx.stft(fnx.tensor(RNG.standard_normal(20)), 8, return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        fnx.istft(spec.real, 8)
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        fnx.istft(spec, 8, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        fnx.istft(spec, 8, window=fnx.zeros(8, dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="n_fft / 2 \\+ 1 = 9"):
        fnx.istft(spec, 16)


def test_stft_gradient_matches_finite_differences():
    x = fnx.tensor(RNG.standard_normal(24), requires_grad=True)
    w = fnx.tensor(np.hanning(8), requires_grad=True)

    def power(x, w):
        return fnx.stft(x, 8, hop_length=3, window=w, return_complex=True).abs().pow(2).sum()
    assert fnx.autograd.gradcheck(power, (x, w))

    hann = fnx.tensor(np.hanning(9)[:8])

    def roundtrip(x):
        spec = fnx.stft(x, 8, hop_length=2, window=hann, return_complex=True)
        return fnx.istft(spec * spec.abs(), 8, hop_length=2, window=hann)
    assert fnx.autograd.gradcheck(roundtrip, (fnx.tensor(RNG.standard_normal(24),
                                                         requires_grad=True),))


def test_compiled_stft_and_istft_match_eager():
    w = fnx.hann_window(16, dtype=fnx.float64)

    def f(x):
        spec = fnx.stft(x, 16, hop_length=4, window=w, return_complex=True)
        return spec.abs(), fnx.istft(spec, 16, hop_length=4, window=w, length=x.shape[-1])
    x = fnx.tensor(RNG.standard_normal((2, 50)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (istft's NOLA check is a graph break)
        got = fnx.compile(f)(x)
    for g, e in zip(got, f(x)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-12)


@pytest.mark.skipif(not fnx.cuda.is_available(),
                    reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")
def test_cuda_stft_round_trip():
    x = RNG.standard_normal(40)
    spec = fnx.stft(fnx.tensor(x).cuda(), 8, return_complex=True)
    assert spec.device.type == "cuda"
    np.testing.assert_allclose(spec.cpu().numpy(), _np_stft(x, 8), atol=1e-10)
    np.testing.assert_allclose(fnx.istft(spec, 8).cpu().numpy(), x, atol=1e-10)
