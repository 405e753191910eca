"""``fnx._foreach_*`` against NumPy applied tensor by tensor."""
from __future__ import annotations

import numpy as np
import pytest

import fnx
from fnx.testing import to_numpy

RNG = np.random.default_rng(0)


def _lists(n=3):
    shapes = [(2, 3), (4,), ()][:n]
    return [RNG.uniform(0.5, 2.0, s).astype(np.float32) for s in shapes]


def _t(arrays):
    return [fnx.tensor(a) for a in arrays]


def _close(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(to_numpy(g), e, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("sqrt", np.sqrt), ("neg", np.negative),
                                       ("reciprocal", np.reciprocal), ("log1p", np.log1p),
                                       ("abs", np.abs), ("sign", np.sign)])
def test_unary_forms(name, ref):
    a = _lists()
    _close(getattr(fnx, f"_foreach_{name}")(_t(a)), [ref(x) for x in a])
    ts = _t(a)
    assert getattr(fnx, f"_foreach_{name}_")(ts) is None
    _close(ts, [ref(x) for x in a])


@pytest.mark.parametrize("name, ref", [("add", np.add), ("sub", np.subtract),
                                       ("mul", np.multiply), ("div", np.divide),
                                       ("maximum", np.maximum), ("clamp_min", np.maximum),
                                       ("pow", np.power)])
def test_binary_overloads(name, ref):
    a, b = _lists(), _lists()
    fn, fn_ = getattr(fnx, f"_foreach_{name}"), getattr(fnx, f"_foreach_{name}_")
    scalars = [0.5, 2.0, 3.0]
    _close(fn(_t(a), _t(b)), [ref(x, y) for x, y in zip(a, b)])                # .List
    _close(fn(_t(a), 1.5), [ref(x, np.float32(1.5)) for x in a])                # .Scalar
    _close(fn(_t(a), scalars), [ref(x, np.float32(s)) for x, s in zip(a, scalars)])
    ts = _t(a)
    fn_(ts, _t(b))
    _close(ts, [ref(x, y) for x, y in zip(a, b)])


def test_alpha_and_the_tensor_overload():
    a, b = _lists(), _lists()
    _close(fnx._foreach_add(_t(a), _t(b), alpha=-2.0), [x - 2 * y for x, y in zip(a, b)])
    _close(fnx._foreach_mul(_t(a), fnx.tensor(3.0)), [3 * x for x in a])
    _close(fnx._foreach_pow(2.0, _t(a)), [np.power(np.float32(2.0), x) for x in a])


def test_ternary_forms():
    a, b, c = _lists(), _lists(), _lists()
    _close(fnx._foreach_addcmul(_t(a), _t(b), _t(c), value=0.5),
           [x + 0.5 * y * z for x, y, z in zip(a, b, c)])
    _close(fnx._foreach_addcdiv(_t(a), _t(b), _t(c), [1.0, 2.0, 3.0]),
           [x + v * y / z for x, y, z, v in zip(a, b, c, [1.0, 2.0, 3.0])])
    _close(fnx._foreach_addcdiv(_t(a), _t(b), _t(c), fnx.tensor([1.0, 2.0, 3.0])),
           [x + v * y / z for x, y, z, v in zip(a, b, c, [1.0, 2.0, 3.0])])
    ema = _t(a)
    fnx._foreach_lerp_(ema, _t(b), 0.1)                     # an EMA update
    _close(ema, [x + 0.1 * (y - x) for x, y in zip(a, b)])
    _close(fnx._foreach_lerp(_t(a), _t(b), _t(c)), [x + z * (y - x) for x, y, z in zip(a, b, c)])


def test_norm_max_zero_copy():
    a, b = _lists(), _lists()
    _close(fnx._foreach_norm(_t(a)), [np.linalg.norm(x.ravel()) for x in a])
    _close(fnx._foreach_norm(_t(a), 1), [np.abs(x).sum() for x in a])
    _close(fnx._foreach_max(_t(a)), [x.max() for x in a])
    ts = _t(a)
    fnx._foreach_copy_(ts, _t(b))
    _close(ts, b)
    fnx._foreach_zero_(ts)
    _close(ts, [np.zeros_like(x) for x in a])


def test_gradients_are_the_per_tensor_ops():
    a, b = _lists(), _lists()
    xs = [fnx.tensor(x, requires_grad=True) for x in a]
    out = fnx._foreach_mul(fnx._foreach_exp(xs), _t(b))
    sum(o.sum() for o in out).backward()
    _close([x.grad for x in xs], [np.exp(x) * y for x, y in zip(a, b)])


def test_bad_input_raises_and_writes_nothing():
    a = _lists()
    ts = _t(a) + [fnx.tensor([1, 2])]       # an int tensor cannot hold x + 0.5
    with pytest.raises(RuntimeError, match="_foreach_add_: result type Float can't be cast"):
        fnx._foreach_add_(ts, 0.5)
    _close(ts[:3], a)
    with pytest.raises(RuntimeError, match="must have the same number of tensors, got 3 and 2"):
        fnx._foreach_add(_t(a), _t(a)[:2])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list, got 3 and 1"):
        fnx._foreach_mul_(_t(a), [2.0])
    with pytest.raises(RuntimeError, match="at least one tensor"):
        fnx._foreach_exp([])
    with pytest.raises(RuntimeError, match="scalar tensor expected to be 0 dim"):
        fnx._foreach_mul(_t(a), fnx.ones(2))
    shapes = _t(a)
    with pytest.raises(RuntimeError):       # (2, 3) + (3,) broadcasts, (4,) + (3,) does not
        fnx._foreach_add_(shapes, [fnx.ones(3), fnx.ones(3), fnx.ones(())])
    _close(shapes, a)


def test_a_compiled_ema_update_matches_eager():
    a, b = _lists(), _lists()

    def update(ema, live):
        with fnx.no_grad():
            fnx._foreach_mul_(ema, 0.9)
            fnx._foreach_add_(ema, live, alpha=0.1)
    eager, compiled = _t(a), _t(a)
    step = fnx.compile(update)
    for _ in range(3):
        update(eager, _t(b))
        step(compiled, _t(b))
    _close(compiled, [to_numpy(t) for t in eager])
    _close(eager, [x * 0.9 ** 3 + y * (1 - 0.9 ** 3) for x, y in zip(a, b)])
