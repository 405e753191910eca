"""Seeded CPU draws are PyTorch's: the mt19937 stream and PyTorch's CPU transforms.

The references are computed here from NumPy's legacy ``RandomState`` (the same mt19937,
seeded the same way: its ``randint`` over the full uint32 range returns the raw outputs)
with PyTorch's transforms re-derived independently: exact rational arithmetic for the
fused multiply-adds, ``math`` (libm) for the double Box-Muller.  The float32 Box-Muller
of >= 16 elements runs PyTorch's own float32 polynomials; here it is checked against
float64 maths to float32 accuracy, and bit for bit against a few values PyTorch 2.13
prints (constants below, marked as such).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import fnx
from fnx.backends.cpu import random_transforms
from fnx.backends.cpu.random_transforms import fma32, fma64

F32 = np.float32


def raw32(seed, n):
    rs = np.random.RandomState(seed % 2**32)
    return rs.randint(0, 2**32, size=n, dtype=np.uint32).astype(np.uint64)


def raw64(seed, n):
    r = raw32(seed, 2 * n)
    return (r[0::2] << np.uint64(32)) | r[1::2]        # first output is the high word


def u24(r):
    return (r & np.uint64(2**24 - 1)).astype(np.float64) * 2.0**-24


def u53(r64):
    return (r64 & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53


def round_f32(q):
    """The float32 nearest to the rational ``q`` (ties to even)."""
    f = F32(float(q))
    cands = [np.nextafter(f, F32(-np.inf)), f, np.nextafter(f, F32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - q),
                                     int(np.array(c).view(np.uint32)) & 1))


def fma_f32(a, b, c):
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def fma_f64(a, b, c):
    return float(Fraction(a) * Fraction(b) + Fraction(c))     # int ratio: rounded once


def scalar_normals(u, n, mean=0.0, std=1.0):
    """PyTorch's scalar Box-Muller over double uniforms ``u``: cos, then the cached sin."""
    out = []
    for i in range(0, n, 2):
        r = math.sqrt(-2.0 * math.log1p(-u[i + 1]))
        theta = 2.0 * math.pi * u[i]
        out += [r * math.cos(theta), r * math.sin(theta)]
    return [fma_f64(z, std, mean) for z in out[:n]]


def fill_blocks(u, n, transform):
    """The >= 16 layout: blocks of 16 over the first ``n`` uniforms, then the last 16
    redrawn (uniforms ``n .. n + 16``) when 16 does not divide ``n``."""
    out = np.empty(n)
    k = n - n % 16
    for b in range(0, k, 16):
        out[b:b + 16] = transform(u[b:b + 16])
    if k != n:
        out[:k] = out[:k]
        out[n - 16:] = transform(u[n:n + 16])
    return out


def box16_f64(mean, std):
    def t(u):
        res = np.empty(16)
        for j in range(8):
            r = math.sqrt(-2.0 * math.log(1.0 - u[j]))
            th = 2.0 * math.pi * u[j + 8]
            res[j] = fma_f64(r * math.cos(th), std, mean)
            res[j + 8] = fma_f64(r * math.sin(th), std, mean)
        return res
    return t


def box16_f32_approx(u):
    u = u.astype(F32)
    r = np.sqrt(-2.0 * np.log((F32(1) - u[:8]).astype(np.float64)))
    th = (F32(2 * math.pi) * u[8:]).astype(np.float64)
    return np.concatenate([r * np.cos(th), r * np.sin(th)])


def bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and got.tobytes() == want.astype(got.dtype).tobytes()


# ---------------------------------------------------------------------------- constants
# PyTorch 2.13 CPU output (looked up once; not computed by fnx).
TORCH_RAND3_SEED0 = [0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
TORCH_RANDN17_SEED0 = [-1.1258398294448853, -1.6959311962127686, 0.5666506290435791,
                       0.7935083508491516, 0.5988394618034363, -1.5550950765609741,
                       -0.3413603901863098, 1.85300612449646, 0.46809640526771545,
                       -0.5854975581169128, -0.1733967512845993, 0.18347793817520142,
                       1.3893661499023438, 1.586334228515625, 0.946298360824585,
                       -0.843676745891571, 0.9318265914916992]
TORCH_RANDN33_SEED0_TAIL = [-1.4688938856124878, -1.586688756942749, 1.203223705291748]
TORCH_RANDN16_SEED42_HEAD = [1.9269152879714966, 1.4872840642929077, 0.9007171988487244,
                             -2.1055209636688232]
TORCH_NORMAL_20_SEED0_HEAD = [-2.3145995140075684, -2.3809003829956055, -0.1264464557170868]
TORCH_LINEAR43_SEED0_W = [[-0.003743410110473633, 0.26822179555892944, -0.4115225672721863,
                           -0.3679695129394531],
                          [-0.19257718324661255, 0.13407868146896362, -0.009906589984893799,
                           0.39644473791122437],
                          [-0.04437202215194702, 0.1323062777519226, -0.15110653638839722,
                           -0.09828269481658936]]
TORCH_LINEAR43_SEED0_B = [-0.4776742458343506, -0.33114105463027954, -0.20611155033111572]
TORCH_EMBEDDING32_SEED0 = [[1.5409960746765137, -0.293428897857666],
                           [-2.1787893772125244, 0.5684312582015991],
                           [-1.0845223665237427, -1.3985954523086548]]
TORCH_RANDINT_RANDPERM_SEED0 = ([4, 9, 3, 0, 3, 9, 7, 3], [1, 4, 3, 5, 0, 2])


def test_torch_constants():
    fnx.manual_seed(0)
    assert bits_equal(fnx.rand(3).numpy(), np.array(TORCH_RAND3_SEED0, F32))
    fnx.manual_seed(0)
    assert bits_equal(fnx.randn(17).numpy(), np.array(TORCH_RANDN17_SEED0, F32))
    fnx.manual_seed(0)
    assert bits_equal(fnx.randn(33).numpy()[-3:], np.array(TORCH_RANDN33_SEED0_TAIL, F32))
    fnx.manual_seed(42)
    assert bits_equal(fnx.randn(16).numpy()[:4], np.array(TORCH_RANDN16_SEED42_HEAD, F32))
    fnx.manual_seed(0)
    got = fnx.empty(20).normal_(0.5, 2.5).numpy()[:3]
    assert bits_equal(got, np.array(TORCH_NORMAL_20_SEED0_HEAD, F32))
    fnx.manual_seed(0)
    lin = fnx.nn.Linear(4, 3)
    assert bits_equal(lin.weight.detach().numpy(), np.array(TORCH_LINEAR43_SEED0_W, F32))
    assert bits_equal(lin.bias.detach().numpy(), np.array(TORCH_LINEAR43_SEED0_B, F32))
    fnx.manual_seed(0)
    emb = fnx.nn.Embedding(3, 2).weight.detach().numpy()
    assert bits_equal(emb, np.array(TORCH_EMBEDDING32_SEED0, F32))
    fnx.manual_seed(0)
    ints, perm = TORCH_RANDINT_RANDPERM_SEED0
    assert fnx.randint(0, 10, (8,)).tolist() == ints
    assert fnx.randperm(6).tolist() == perm


# ---------------------------------------------------------------------------- uniform

@pytest.mark.parametrize("seed", [0, 1, 7, 2**31 + 3])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 1000])
def test_rand(seed, n):
    fnx.manual_seed(seed)
    assert bits_equal(fnx.rand(n).numpy(), u24(raw32(seed, n)).astype(F32))
    fnx.manual_seed(seed)
    assert bits_equal(fnx.rand(n, dtype=fnx.float64).numpy(), u53(raw64(seed, n)))


def test_rand_shape_and_half():
    fnx.manual_seed(5)
    assert bits_equal(fnx.rand(2, 3, 4).numpy(), u24(raw32(5, 24)).astype(F32).reshape(2, 3, 4))
    fnx.manual_seed(5)    # reduced types draw a float32 uniform and round it
    want = u24(raw32(5, 9)).astype(F32).astype(np.float16)
    assert bits_equal(fnx.rand(9, dtype=fnx.float16).numpy(), want)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("lo,hi", [(-0.37, 0.81), (2.0, 2.5), (-1e-3, 1e4)])
def test_uniform_bounds(seed, lo, hi):
    n = 40
    fnx.manual_seed(seed)
    got = fnx.empty(n).uniform_(lo, hi).numpy()
    w = F32(hi) - F32(lo)
    want = [fma_f32(u, w, F32(lo)) for u in u24(raw32(seed, n)).astype(F32)]
    assert bits_equal(got, np.array(want, F32))
    fnx.manual_seed(seed)
    got = fnx.empty(n, dtype=fnx.float64).uniform_(lo, hi).numpy()
    want = [fma_f64(u, hi - lo, lo) for u in u53(raw64(seed, n)).tolist()]
    assert bits_equal(got, np.array(want))


def test_uniform_non_contiguous_fills_memory_order():
    fnx.manual_seed(2)
    t = fnx.empty(5, 4).t().uniform_()
    assert bits_equal(t.numpy(), u24(raw32(2, 20)).astype(F32).reshape(5, 4).T)


# ---------------------------------------------------------------------------- normal

@pytest.mark.parametrize("seed", [0, 11])
@pytest.mark.parametrize("n", [1, 2, 7, 15])
def test_randn_small_is_scalar_box_muller(seed, n):
    u = u53(raw64(seed, n + 1)).tolist()
    want = scalar_normals(u, n)
    fnx.manual_seed(seed)
    assert bits_equal(fnx.randn(n, dtype=fnx.float64).numpy(), np.array(want))
    fnx.manual_seed(seed)
    assert bits_equal(fnx.randn(n).numpy(), np.array(want).astype(F32))
    fnx.manual_seed(seed)
    want = scalar_normals(u, n, 0.3, 1.7)
    got = fnx.empty(n, dtype=fnx.float64).normal_(0.3, 1.7).numpy()
    assert bits_equal(got, np.array(want))


def test_scalar_normal_caches_second_value():
    # randn(1) uses a pair and keeps its sine half for the next scalar draw.
    u = u53(raw64(4, 4)).tolist()
    want = scalar_normals(u, 4)
    fnx.manual_seed(4)
    a = fnx.randn(1, dtype=fnx.float64).numpy()
    b = fnx.randn(3, dtype=fnx.float64).numpy()
    assert bits_equal(np.concatenate([a, b]), np.array(want))


@pytest.mark.parametrize("seed", [0, 9])
@pytest.mark.parametrize("n", [16, 17, 33, 48])
def test_randn_float64_blocks(seed, n):
    u = u53(raw64(seed, n + 16))
    fnx.manual_seed(seed)
    got = fnx.randn(n, dtype=fnx.float64).numpy()
    assert bits_equal(got, fill_blocks(u, n, box16_f64(0.0, 1.0)))
    fnx.manual_seed(seed)
    got = fnx.empty(n, dtype=fnx.float64).normal_(-0.5, 2.25).numpy()
    assert bits_equal(got, fill_blocks(u, n, box16_f64(-0.5, 2.25)))


@pytest.mark.parametrize("seed", [0, 9, 123])
@pytest.mark.parametrize("n", [16, 17, 31, 33, 1000])
def test_randn_float32_blocks(seed, n):
    # PyTorch's own float32 log/sincos polynomials: float32 accuracy against float64 maths
    # (bit-exactness against PyTorch is pinned by the constants above).
    u = u24(raw32(seed, n + 16))
    fnx.manual_seed(seed)
    got = fnx.randn(n).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, fill_blocks(u, n, box16_f32_approx), rtol=2e-6, atol=2e-6)


def test_normal_float32_mean_std_is_fused():
    fnx.manual_seed(0)
    z = fnx.randn(32).numpy()
    fnx.manual_seed(0)
    got = fnx.empty(32).normal_(0.5, 2.5).numpy()
    assert bits_equal(got, np.array([fma_f32(v, F32(2.5), F32(0.5)) for v in z], F32))


def test_normal_functional_forms():
    fnx.manual_seed(1)
    a = fnx.normal(0.5, 2.0, (20,)).numpy()
    fnx.manual_seed(1)
    assert bits_equal(a, fnx.empty(20).normal_(0.5, 2.0).numpy())
    fnx.manual_seed(1)      # tensor std: normal_(0, 1), then * std, then + mean
    std = fnx.arange(20.0) / 7
    b = fnx.normal(fnx.ones(20), std).numpy()
    fnx.manual_seed(1)
    z = fnx.randn(20).numpy()
    assert bits_equal(b, z * std.numpy() + F32(1))


# ---------------------------------------------------------------------------- integers

def test_randint_and_random_():
    fnx.manual_seed(3)
    assert fnx.randint(0, 10, (20,)).tolist() == (raw32(3, 20) % np.uint64(10)).tolist()
    fnx.manual_seed(3)          # ranges >= 2**32 take 64-bit draws
    want = (raw64(3, 7) % np.uint64(2**33 + 5)).astype(np.int64) - 5
    assert fnx.randint(-5, 2**33, (7,)).tolist() == want.tolist()
    fnx.manual_seed(3)
    got = fnx.empty(6).random_().numpy()
    assert bits_equal(got, (raw32(3, 6) % np.uint64(2**24 + 1)).astype(F32))
    fnx.manual_seed(3)
    got = fnx.empty(6, dtype=fnx.float64).random_().numpy()
    assert bits_equal(got, (raw64(3, 6) % np.uint64(2**53 + 1)).astype(np.float64))
    fnx.manual_seed(3)
    got = fnx.empty(5, dtype=fnx.int64).random_(-2**63, None).numpy()
    assert got.tolist() == raw64(3, 5).view(np.int64).tolist()


@pytest.mark.parametrize("n", [0, 1, 2, 5, 100])
def test_randperm_fisher_yates(n):
    r = raw32(8, max(n - 1, 0))
    want = list(range(n))
    for i in range(n - 1):
        j = i + int(r[i]) % (n - i)
        want[i], want[j] = want[j], want[i]
    fnx.manual_seed(8)
    assert fnx.randperm(n).tolist() == want


# ---------------------------------------------------------------------------- state

def test_seeds_keep_low_32_bits_and_default_seed():
    fnx.manual_seed(2**40 + 5)
    assert fnx.initial_seed() == 2**40 + 5
    assert bits_equal(fnx.rand(4).numpy(), u24(raw32(5, 4)).astype(F32))
    fnx.manual_seed(-1)
    assert bits_equal(fnx.rand(2).numpy(), u24(raw32(2**32 - 1, 2)).astype(F32))
    g = fnx.Generator()
    assert g.initial_seed() == 67280421310721
    want = u24(raw32(67280421310721, 3)).astype(F32)
    assert bits_equal(fnx.rand(3, generator=g).numpy(), want)


def test_generator_object_is_independent():
    fnx.manual_seed(0)
    g = fnx.Generator().manual_seed(7)
    a = fnx.rand(4, generator=g).numpy()
    assert bits_equal(a, u24(raw32(7, 4)).astype(F32))
    assert bits_equal(fnx.rand(2).numpy(), u24(raw32(0, 2)).astype(F32))


def test_state_round_trip_keeps_cached_normal():
    fnx.manual_seed(3)
    fnx.randn(1)                          # leaves a cached normal in the generator
    state = fnx.get_rng_state()
    a = fnx.randn(3, dtype=fnx.float64).numpy()
    fnx.rand(5)
    fnx.set_rng_state(state)
    assert bits_equal(fnx.randn(3, dtype=fnx.float64).numpy(), a)
    u = u53(raw64(3, 4)).tolist()
    assert a[0] == scalar_normals(u, 2)[1]      # the cached sine half comes first
    fnx.manual_seed(3)                    # reseeding drops the cache
    assert bits_equal(fnx.randn(1, dtype=fnx.float64).numpy(), np.array(scalar_normals(u, 1)))


def test_fork_rng_and_bad_state():
    fnx.manual_seed(6)
    with fnx.random.fork_rng():
        fnx.randn(40)
    assert bits_equal(fnx.rand(2).numpy(), u24(raw32(6, 2)).astype(F32))
    with pytest.raises(RuntimeError, match="bytes"):
        fnx.Generator().set_state(fnx.zeros(10, dtype=fnx.uint8))


def test_uniform_never_returns_the_upper_bound():
    # PyTorch turns a sample that rounds to ``to`` into ``from``: with a one-ulp range
    # every sample of u >= 1/2 would round up.
    fnx.manual_seed(0)
    top = float(np.nextafter(F32(1), F32(2)))
    assert fnx.empty(64).uniform_(1.0, top).unique().tolist() == [1.0]
    fnx.manual_seed(0)
    u = u24(raw32(0, 4096)).astype(F32)
    want = u.astype(np.float16)
    assert (want == 1).any()
    want[want == 1] = 0
    assert bits_equal(fnx.rand(4096, dtype=fnx.float16).numpy(), want)


def test_complex_draws_interleave_real_and_imaginary():
    # PyTorch samples the real view: (re, im) pairs; randn gives each part std 1/sqrt(2).
    fnx.manual_seed(2)
    u = u24(raw32(2, 10)).astype(F32)
    assert bits_equal(fnx.rand(5, dtype=fnx.complex64).numpy(), u[0::2] + 1j * u[1::2])
    fnx.manual_seed(2)
    z = np.array(scalar_normals(u53(raw64(2, 10)).tolist(), 10, 0.0, 1 / math.sqrt(2)))
    want = (z[0::2] + 1j * z[1::2]).astype(np.complex128)
    assert bits_equal(fnx.randn(5, dtype=fnx.complex128).numpy(), want)


def test_trunc_normal_redraws_like_pytorch():
    # Mass in [a, b] > 0.3: normal_ fills, then whole-size normal_ redraws replace the
    # samples outside [a, b].  Below 16 elements every normal is the next value of one
    # scalar Box-Muller stream (its cached half carries across calls).
    n, mean, std, a, b = 15, 0.5, 2.0, -1.0, 1.5
    stream = scalar_normals(u53(raw64(12, 400)).tolist(), 400, mean, std)
    draws = [np.array(stream[i:i + n]).astype(F32) for i in range(0, 400 - n, n)]
    want = draws[0]
    for redraw in draws[1:]:
        bad = (want < F32(a)) | (want > F32(b))
        if not bad.any():
            break
        want = np.where(bad, redraw, want)
    assert not ((want < F32(a)) | (want > F32(b))).any()
    fnx.manual_seed(12)
    got = fnx.nn.init.trunc_normal_(fnx.empty(n), mean, std, a, b).numpy()
    assert bits_equal(got, want)


def test_float32_fma_emulation_avoids_double_rounding():
    # a*b + c lies just below a float32 midpoint, and rounding it to float64 first lands
    # exactly on that midpoint: one correct rounding gives 1 + 2**-23, two give 1 + 2**-22.
    a = F32(2.0**-12 * (1 + 2.0**-23))
    b = F32(2.0**-12 * (1 - 2.0**-23))
    c = F32(1 + 2.0**-23)
    assert F32(float(a) * float(b) + float(c)) == F32(1 + 2.0**-22)       # the trap
    assert fma32(a, b, c) == fma_f32(a, b, c) == F32(1 + 2.0**-23)
    x = np.random.default_rng(0).standard_normal((3, 200))
    got = fma64(x[0], x[1], x[2])
    assert got.tolist() == [fma_f64(*v) for v in x.T.tolist()]


# ---------------------------------------------------------------------------- big fills
# A fill larger than random_transforms.CHUNK is drawn and transformed a block at a time
# (bounded temporaries); shrunk here so fills cross several block edges, against the
# same whole-stream references as above.

@pytest.mark.parametrize("n", [47, 48, 1000])
def test_fills_drawn_in_blocks_are_the_whole_stream(monkeypatch, n):
    monkeypatch.setattr(random_transforms, "CHUNK", 32)
    fnx.manual_seed(3)
    assert bits_equal(fnx.rand(n).numpy(), u24(raw32(3, n)).astype(F32))
    fnx.manual_seed(3)
    assert bits_equal(fnx.rand(n, dtype=fnx.float64).numpy(), u53(raw64(3, n)))
    fnx.manual_seed(3)
    got = fnx.empty(n).uniform_(-0.37, 0.81).numpy()
    w, lo = F32(0.81) - F32(-0.37), F32(-0.37)
    assert bits_equal(got, np.array([fma_f32(u, w, lo) for u in
                                     u24(raw32(3, n)).astype(F32)], F32))
    u = u53(raw64(3, n + 16))
    fnx.manual_seed(3)
    got = fnx.empty(n, dtype=fnx.float64).normal_(-0.5, 2.25).numpy()
    assert bits_equal(got, fill_blocks(u, n, box16_f64(-0.5, 2.25)))
    fnx.manual_seed(3)
    np.testing.assert_allclose(fnx.randn(n).numpy(),
                               fill_blocks(u24(raw32(3, n + 16)), n, box16_f32_approx),
                               rtol=2e-6, atol=2e-6)
