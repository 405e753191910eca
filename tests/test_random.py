"""Random ops: reproducibility under manual_seed, Generator state, statistics, errors."""
import numpy as np
import pytest

import fnx
from fnx.ops import aten
from fnx.testing import to_numpy

N = 200_000



@pytest.fixture(autouse=True)
def _reseed():
    fnx.manual_seed(1234)
    yield


SAMPLERS = {
    "rand": lambda: fnx.rand(5, 3),
    "randn": lambda: fnx.randn(7),
    "randint": lambda: fnx.randint(0, 100, (20,)),
    "randperm": lambda: fnx.randperm(30),
    "normal_": lambda: fnx.empty(6).normal_(),
    "uniform_": lambda: fnx.empty(6).uniform_(-1, 1),
    "bernoulli": lambda: fnx.bernoulli(fnx.full((50,), 0.5)),
    "bernoulli_": lambda: fnx.zeros(50).bernoulli_(0.3),
    "exponential_": lambda: fnx.empty(5).exponential_(),
    "multinomial": lambda: fnx.multinomial(fnx.tensor([0.2, 0.3, 0.5]), 10, True),
    "normal": lambda: fnx.normal(fnx.zeros(4), 2.0),
    "random_": lambda: fnx.zeros(8, dtype=fnx.int64).random_(0, 1000),
    "rand_like": lambda: fnx.rand_like(fnx.zeros(4)),
    "randint_like": lambda: fnx.randint_like(fnx.zeros(4), 10),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_manual_seed_reproduces(name):
    fnx.manual_seed(0)
    a = to_numpy(SAMPLERS[name]()).copy()
    b = to_numpy(SAMPLERS[name]()).copy()
    fnx.manual_seed(0)
    c = to_numpy(SAMPLERS[name]())
    np.testing.assert_array_equal(a, c)
    if name not in ("bernoulli", "bernoulli_", "multinomial"):   # 0/1 draws may repeat
        assert not np.array_equal(a, b)


def test_manual_seed_returns_the_default_generator():
    g = fnx.manual_seed(5)
    assert g is fnx.default_generator
    assert fnx.initial_seed() == 5
    assert isinstance(g, fnx.Generator)


def test_seed_values():
    fnx.manual_seed(-1)
    assert fnx.initial_seed() == 2 ** 64 - 1
    fnx.manual_seed(2 ** 64 - 1)
    assert fnx.initial_seed() == 2 ** 64 - 1
    with pytest.raises(RuntimeError, match="Overflow"):
        fnx.manual_seed(2 ** 64)
    with pytest.raises(TypeError, match="int"):
        fnx.manual_seed(1.5)
    s = fnx.seed()
    assert isinstance(s, int) and fnx.initial_seed() == s


def test_generator_is_independent_of_the_default():
    g1 = fnx.Generator().manual_seed(7)
    a = to_numpy(fnx.rand(5, generator=g1))
    fnx.rand(100)                               # the default generator moves, g2 does not
    g2 = fnx.Generator().manual_seed(7)
    np.testing.assert_array_equal(to_numpy(fnx.rand(5, generator=g2)), a)
    assert g1.device == fnx.device("cpu") and g1.initial_seed() == 7


def test_generator_argument_everywhere():
    def draws(g):
        return [to_numpy(fnx.randn(3, generator=g)),
                to_numpy(fnx.randint(5, (4,), generator=g)),
                to_numpy(fnx.randperm(6, generator=g)),
                to_numpy(fnx.empty(3).uniform_(generator=g)),
                to_numpy(fnx.empty(3).normal_(generator=g)),
                to_numpy(fnx.bernoulli(fnx.full((9,), 0.5), generator=g)),
                to_numpy(fnx.normal(0.0, 1.0, (3,), generator=g)),
                to_numpy(fnx.rand_like(fnx.zeros(2), generator=g))]
    first = draws(fnx.Generator().manual_seed(3))
    second = draws(fnx.Generator().manual_seed(3))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_generator_state_roundtrip():
    g = fnx.Generator().manual_seed(11)
    fnx.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype is fnx.uint8 and state.ndim == 1
    a = to_numpy(fnx.randn(10, generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(to_numpy(fnx.randn(10, generator=g)), a)
    g.set_state(bytes(state.numpy()))
    np.testing.assert_array_equal(to_numpy(fnx.randn(10, generator=g)), a)
    assert g.initial_seed() == 11
    with pytest.raises(RuntimeError, match="bytes"):
        g.set_state(b"short")
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(fnx.zeros(56))


def test_rng_state_and_fork():
    s = fnx.random.get_rng_state()
    a = to_numpy(fnx.rand(4))
    fnx.random.set_rng_state(s)
    np.testing.assert_array_equal(to_numpy(fnx.rand(4)), a)
    with fnx.random.fork_rng():
        fnx.rand(10)
    b = to_numpy(fnx.rand(4))
    fnx.random.set_rng_state(s)
    fnx.rand(4)
    np.testing.assert_array_equal(to_numpy(fnx.rand(4)), b)


def test_fork_rng_as_decorator_nested_and_disabled():
    fnx.manual_seed(4)
    expected = to_numpy(fnx.rand(3))

    @fnx.random.fork_rng()
    def draw():
        return to_numpy(fnx.rand(3))
    fnx.manual_seed(4)
    np.testing.assert_array_equal(draw(), expected)     # drawn from the state it entered with
    np.testing.assert_array_equal(draw(), expected)     # ... which it restored
    with fnx.random.fork_rng():
        with fnx.random.fork_rng():
            fnx.rand(2)
        np.testing.assert_array_equal(to_numpy(fnx.rand(3)), expected)
    np.testing.assert_array_equal(to_numpy(fnx.rand(3)), expected)
    with fnx.random.fork_rng(enabled=False):
        fnx.rand(3)
    assert not np.array_equal(to_numpy(fnx.rand(3)), expected)


def test_non_cpu_generator_is_refused():
    with pytest.raises(RuntimeError, match="cuda"):
        fnx.Generator("cuda")


# ---------------------------------------------------------------------------- dtypes

def test_sampler_dtypes():
    assert fnx.rand(2).dtype is fnx.float32
    assert fnx.randn(2, dtype=fnx.float64).dtype is fnx.float64
    assert fnx.rand(2, dtype=fnx.bfloat16).dtype is fnx.bfloat16
    assert fnx.randn(2, dtype=fnx.complex64).dtype is fnx.complex64
    assert fnx.randint(3, (2,)).dtype is fnx.int64
    assert fnx.randint(3, (2,), dtype=fnx.int16).dtype is fnx.int16
    assert fnx.randint(0, 2, (4,), dtype=fnx.bool).dtype is fnx.bool
    assert fnx.randint(3, (2,), dtype=fnx.float32).dtype is fnx.float32
    assert fnx.randperm(4).dtype is fnx.int64
    assert fnx.randperm(4, dtype=fnx.float64).dtype is fnx.float64
    assert fnx.rand_like(fnx.zeros(2, dtype=fnx.float16)).dtype is fnx.float16
    assert fnx.randn_like(fnx.zeros(2), dtype=fnx.float64).dtype is fnx.float64
    assert fnx.randint_like(fnx.zeros(2, dtype=fnx.int8), 5).dtype is fnx.int8
    assert fnx.bernoulli(fnx.zeros(2, dtype=fnx.float64)).dtype is fnx.float64
    assert fnx.multinomial(fnx.ones(3), 2).dtype is fnx.int64
    assert fnx.normal(fnx.zeros(2, dtype=fnx.float64), 1.0).dtype is fnx.float64
    assert fnx.rand(()).shape == () and fnx.randn(0, 3).shape == (0, 3)


def test_int_tensors_bernoulli_and_random():
    x = fnx.zeros(100, dtype=fnx.int32).bernoulli_(0.5)
    assert x.dtype is fnx.int32 and set(np.unique(to_numpy(x))) <= {0, 1}
    b = fnx.zeros(50, dtype=fnx.bool).random_()
    assert b.dtype is fnx.bool and set(np.unique(to_numpy(b))) == {False, True}
    u8 = fnx.zeros(2000, dtype=fnx.uint8).random_()
    assert to_numpy(u8).max() > 200 and to_numpy(u8).min() < 50
    f = fnx.zeros(1000).random_(-5, 5)
    assert to_numpy(f).min() == -5 and to_numpy(f).max() == 4
    assert np.all(to_numpy(f) == np.round(to_numpy(f)))


# ---------------------------------------------------------------------------- statistics

def test_rand_uniform_statistics():
    x = to_numpy(fnx.rand(N))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.std() - np.sqrt(1 / 12)) < 0.01
    h = to_numpy(fnx.rand(N, dtype=fnx.float16)).astype(np.float64)
    assert h.max() < 1 and abs(h.mean() - 0.5) < 0.01


def test_randn_statistics():
    x = to_numpy(fnx.randn(N, dtype=fnx.float64))
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    z = to_numpy(fnx.randn(N, dtype=fnx.complex64))
    assert abs(z.real.var() - 0.5) < 0.02 and abs(z.imag.var() - 0.5) < 0.02


def test_uniform_and_normal_inplace_statistics():
    u = to_numpy(fnx.empty(N).uniform_(2, 5))
    assert u.min() >= 2 and u.max() < 5 and abs(u.mean() - 3.5) < 0.03
    n = to_numpy(fnx.empty(N, dtype=fnx.float64).normal_(3, 2))
    assert abs(n.mean() - 3) < 0.03 and abs(n.std() - 2) < 0.03


def test_randint_statistics():
    x = to_numpy(fnx.randint(-3, 4, (N,)))
    assert x.min() == -3 and x.max() == 3
    counts = np.bincount(x + 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)


def test_randperm_is_a_permutation():
    p = to_numpy(fnx.randperm(1000))
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    assert fnx.randperm(0).shape == (0,)


def test_bernoulli_statistics():
    assert abs(to_numpy(fnx.bernoulli(fnx.full((N,), 0.3))).mean() - 0.3) < 0.01
    assert abs(to_numpy(fnx.bernoulli(fnx.zeros(N), 0.8)).mean() - 0.8) < 0.01
    p = fnx.tensor([0.0, 1.0, 0.5])
    x = to_numpy(fnx.bernoulli(fnx.zeros(N // 10, 3), p))
    assert np.all(x[:, 0] == 0) and np.all(x[:, 1] == 1) and abs(x[:, 2].mean() - 0.5) < 0.02
    y = to_numpy(fnx.zeros(N // 10, 3).bernoulli_(p))
    assert np.all(y[:, 0] == 0) and np.all(y[:, 1] == 1)


def test_exponential_statistics():
    x = to_numpy(fnx.empty(N, dtype=fnx.float64).exponential_(4.0))
    assert x.min() >= 0 and abs(x.mean() - 0.25) < 0.01


def test_normal_functional_forms():
    mean = fnx.from_numpy(np.tile(np.float32([0, 10, -10]), (N // 10, 1)))
    x = to_numpy(fnx.normal(mean, 0.5))
    np.testing.assert_allclose(x.mean(0), [0, 10, -10], atol=0.02)
    np.testing.assert_allclose(x.std(0), [0.5] * 3, atol=0.02)
    std = fnx.from_numpy(np.tile(np.float32([0.0, 1.0, 3.0]), (N // 10, 1)))
    y = to_numpy(fnx.normal(2.0, std))
    assert np.all(y[:, 0] == 2.0) and abs(y[:, 2].std() - 3) < 0.1
    z = to_numpy(fnx.normal(fnx.zeros(N // 10, 1), std))
    assert z.shape == (N // 10, 3) and np.all(z[:, 0] == 0)
    w = to_numpy(fnx.normal(1.0, 2.0, (N,)))
    assert abs(w.mean() - 1) < 0.03 and abs(w.std() - 2) < 0.03


def test_multinomial_statistics():
    probs = fnx.tensor([[1.0, 3.0, 0.0, 4.0]])
    x = to_numpy(fnx.multinomial(probs, N // 10, replacement=True))
    assert x.shape == (1, N // 10)
    freq = np.bincount(x[0], minlength=4) / (N // 10)
    np.testing.assert_allclose(freq, [0.125, 0.375, 0.0, 0.5], atol=0.01)
    y = to_numpy(fnx.multinomial(fnx.tensor([0.1, 0.2, 0.3, 0.4]), 4))
    np.testing.assert_array_equal(np.sort(y), [0, 1, 2, 3])     # without replacement


# ---------------------------------------------------------------------------- errors

def test_sampler_errors():
    with pytest.raises(RuntimeError, match="\"check_uniform_bounds\" not implemented for "
                                           "'Long'"):
        fnx.rand(2, dtype=fnx.int64)
    with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Int'"):
        fnx.randn(2, dtype=fnx.int32)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but "
                                           "got from=3 >= to=3"):
        fnx.randint(3, 3, (2,))
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for Byte"):
        fnx.randint(0, 300, (2,), dtype=fnx.uint8)
    with pytest.raises(RuntimeError, match="n must be non-negative, got -1"):
        fnx.randperm(-1)
    with pytest.raises(RuntimeError, match="negative dimension -2"):
        fnx.rand(-2)
    with pytest.raises(TypeError, match="dtype"):
        fnx.randn(2, dtype="float")
    with pytest.raises(TypeError, match="randint"):
        fnx.randint(5)


def test_inplace_errors_write_nothing():
    x = fnx.tensor([1.0, 2.0, 3.0])
    cases = [(lambda: x.uniform_(2, 1), "uniform_ expects to return a \\[from, to\\) range, "
              "but found from=2 > to=1"),
             (lambda: x.normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
             (lambda: x.bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\], but got "
              r"p=1.5"),
             (lambda: x.bernoulli_(fnx.tensor([0.5, 2.0, 0.5])), "p_in >= 0 && p_in <= 1"),
             (lambda: x.exponential_(0), "exponential_ expects lambda > 0.0, but found "
              "lambda=0"),
             (lambda: x.random_(5, 2), "from=5 >= to=2")]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()
        np.testing.assert_array_equal(to_numpy(x), [1.0, 2.0, 3.0])
        assert x._version == 0
    i = fnx.tensor([1, 2])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        i.uniform_()
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        i.normal_()
    np.testing.assert_array_equal(to_numpy(i), [1, 2])


def test_bernoulli_and_multinomial_errors():
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        fnx.bernoulli(fnx.tensor([0.5, -0.1]))
    with pytest.raises(RuntimeError, match="bernoulli_ expects p"):
        fnx.bernoulli(fnx.zeros(2), 2.0)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\) "
                                           "samples without replacement"):
        fnx.multinomial(fnx.ones(3), 4)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        fnx.multinomial(fnx.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        fnx.multinomial(fnx.zeros(3), 1, True)
    with pytest.raises(RuntimeError, match="element < 0"):
        fnx.multinomial(fnx.tensor([1.0, -1.0]), 1, True)
    with pytest.raises(RuntimeError, match="floating-point dtypes"):
        fnx.multinomial(fnx.tensor([1, 2]), 1)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        fnx.normal(fnx.zeros(2), -1.0)
    with pytest.raises(RuntimeError, match="all elements of std >= 0.0"):
        fnx.normal(0.0, fnx.tensor([1.0, -1.0]))


# ---------------------------------------------------------------------------- dispatch

def test_inplace_samplers_bump_version_and_return_self():
    x = fnx.zeros(4)
    for fn in (lambda: x.uniform_(), lambda: x.normal_(), lambda: x.bernoulli_(),
               lambda: x.exponential_(), lambda: x.random_(10)):
        v = x._version
        assert fn() is x
        assert x._version == v + 1


def test_inplace_sampler_writes_through_a_view():
    base = np.zeros((3, 4), np.float32)
    view = fnx.from_numpy(base[:, 1])
    view.uniform_(5, 6)
    assert np.all((base[:, 1] >= 5) & (base[:, 1] < 6))
    assert np.all(base[:, [0, 2, 3]] == 0)


def test_meta_random():
    t = fnx.rand(2, 3, device="meta")
    assert t.is_meta and t.shape == (2, 3) and t.dtype is fnx.float32
    assert fnx.randint(5, (4,), device="meta").dtype is fnx.int64
    assert fnx.randperm(7, device="meta").shape == (7,)
    m = fnx.empty(3, device="meta")
    assert m.uniform_() is m and m.normal_() is m
    assert fnx.bernoulli(m).is_meta and fnx.rand_like(m).is_meta
    with pytest.raises(RuntimeError, match="uniform_ expects"):
        m.uniform_(1, 0)


def test_random_ops_are_tagged():
    for op in (aten.rand.default, aten.randn.default, aten.randint.low, aten.randperm.default,
               aten.uniform_.default, aten.normal_.default, aten.bernoulli.p,
               aten.bernoulli.default, aten.multinomial.default, aten.exponential_.default,
               aten.rand_like.default, aten.normal.Tensor_Tensor):
        assert "nondeterministic" in op.tags
    for op in (aten.rand.default, aten.randn.default, aten.randperm.default):
        assert "core" in op.tags
    assert str(aten.rand.default.schema) == (
        "rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor")


# ---------------------------------------------------------------------------- decompositions

def test_randint_decomposition():
    x = to_numpy(aten.randint.low.decomposition(-3, 4, [N]))
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 3
    assert np.all(np.abs(np.bincount(x + 3) / N - 1 / 7) < 0.01)
    y = aten.randint.default.decomposition(5, [10], dtype=fnx.int16)
    assert y.dtype is fnx.int16 and y.shape == (10,)
    g = fnx.Generator()
    a = to_numpy(aten.randint.low_generator.decomposition(0, 9, [6], generator=g.manual_seed(2)))
    b = to_numpy(aten.randint.low_generator.decomposition(0, 9, [6], generator=g.manual_seed(2)))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="from=2 >= to=1"):
        aten.randint.low.decomposition(2, 1, [3])


def test_bernoulli_and_normal_decompositions():
    assert abs(to_numpy(aten.bernoulli.p.decomposition(fnx.zeros(N), 0.3)).mean() - 0.3) < 0.01
    np.testing.assert_array_equal(to_numpy(aten.bernoulli.default.decomposition(
        fnx.tensor([0.0, 1.0]))), [0.0, 1.0])
    b = aten.bernoulli.Tensor.decomposition(fnx.zeros(4, 3, dtype=fnx.int64),
                                           fnx.tensor([0.0, 1.0, 0.0]))
    assert b.dtype is fnx.int64
    np.testing.assert_array_equal(to_numpy(b), np.tile([0, 1, 0], (4, 1)))
    n = to_numpy(aten.normal.Tensor_Tensor.decomposition(fnx.full((N,), 2.0), fnx.full((N,), 3.0)))
    assert abs(n.mean() - 2) < 0.05 and abs(n.std() - 3) < 0.05
    f = aten.normal.float_float.decomposition(1.0, 2.0, [N], dtype=fnx.float64)
    assert f.dtype is fnx.float64
    assert abs(to_numpy(f).mean() - 1) < 0.03 and abs(to_numpy(f).std() - 2) < 0.03
    np.testing.assert_array_equal(to_numpy(aten.normal.float_Tensor.decomposition(
        1.0, fnx.zeros(3))), [1.0, 1.0, 1.0])
