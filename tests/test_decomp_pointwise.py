"""Pointwise ops decomposed to prims agree with their eager kernels.

Every functional op of fnx/ir/aten/elementwise.py runs through ``run_decomposed(..., to=
"prims")`` on samples covering float32/float64/float16, int64, bool, 0-dim, empty,
non-contiguous and broadcast operands, Python scalars (wrapped numbers) and mixed dtypes.
The decomposition must run only prims and give exactly the eager dtype and shape, the
same values (bitwise for integer and bool results, to float tolerance otherwise, NaN where
eager has NaN), and raise the same exception type where eager raises.
"""
import math
from functools import partial

import numpy as np
import pytest

import fnx
from fnx.graph.decompose import run_decomposed
from fnx.ir.aten import elementwise as E
from fnx.testing.decomp import assert_decomposes, assert_graph_decomposes

aten = fnx.ops.aten
nan, inf = math.nan, math.inf

# eager vs decomposed to prims (only prims ran, DEFAULT_TOLS for floats); where eager
# raises, the decomposition must raise the same: the exception is returned
check = partial(assert_decomposes, allow_error=True)


# ---------------------------------------------------------------------------- samples

FLOATS = [-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 0.75, 1.5, 2.5, 3.7, nan, inf, -inf]
INTS = [-7, -3, -1, 0, 1, 2, 5, 9]


def unary_samples():
    base = np.arange(12.0).reshape(3, 4) / 4 - 1.3
    return {
        "float32": fnx.tensor(FLOATS),
        "float64": fnx.tensor(FLOATS, dtype=fnx.float64),
        "float16": fnx.tensor(FLOATS, dtype=fnx.float16),
        "int64": fnx.tensor(INTS),
        "int32": fnx.tensor(INTS, dtype=fnx.int32),
        "bool": fnx.tensor([True, False, True]),
        "0-dim": fnx.tensor(-0.7),
        "empty": fnx.ones(0, 3),
        "non-contiguous": fnx.tensor(base.tolist()).t(),
    }


UNARY_SAMPLES = unary_samples()

# (op, sample) pairs whose eager kernel refuses the dtype
UNARY_RAISES = {(n, "bool") for n in ("abs", "neg", "ceil", "floor", "round", "trunc",
                                       "frac", "relu")}
UNARY_RAISES |= {("frac", "int64"), ("frac", "int32")}
UNARY_RAISES |= {("bitwise_not", s) for s in ("float32", "float64", "float16", "0-dim",
                                               "empty", "non-contiguous")}


@pytest.mark.parametrize("sample", sorted(UNARY_SAMPLES))
@pytest.mark.parametrize("name", [row[0] for row in E.UNARY])
def test_unary(name, sample):
    op = getattr(aten, name).default
    x = UNARY_SAMPLES[sample]
    result = check(op, x)
    assert isinstance(result, Exception) == ((name, sample) in UNARY_RAISES), result


def test_unary_exact_semantics():
    x = fnx.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, nan, inf, -inf])
    out, _ = run_decomposed(aten.round.default, x)
    np.testing.assert_array_equal(out.numpy(), [-2., -2., -0., 0., 2., 2., -0., nan, inf, -inf])
    out, _ = run_decomposed(aten.signbit.default, x)
    assert out.tolist() == [True] * 3 + [False] * 3 + [True, False, False, True]
    out, _ = run_decomposed(aten.isinf.default, fnx.tensor([1.0, inf, -inf, nan]))
    assert out.tolist() == [False, True, True, False]
    out, _ = run_decomposed(aten.square.default, fnx.tensor([True, False]))
    assert out.dtype is fnx.int64 and out.tolist() == [1, 0]
    out, _ = run_decomposed(aten.sigmoid.default, fnx.tensor([-1000.0, 0.0, 1000.0]))
    assert out.tolist() == [0.0, 0.5, 1.0]


def test_unary_complex():
    z = fnx.tensor([1 + 2j, -3 - 0.5j, complex(nan, 1), complex(inf, 0)])
    for name in ("abs", "exp", "sqrt", "isnan", "isinf", "isfinite", "neg", "logical_not"):
        result = check(getattr(aten, name).default, z)
        assert not isinstance(result, Exception), (name, result)
    out, _ = run_decomposed(aten.abs.default, z)
    assert out.dtype is fnx.float32


# ---------------------------------------------------------------------------- binary

def binary_samples():
    a = fnx.tensor([[-7.5, 7.5, 0.0], [5.25, -3.0, nan], [inf, -inf, -0.0]])
    b = fnx.tensor([2.0, -0.75, 0.0])
    ai = fnx.tensor([[-7, 7, 0], [5, -3, 9]])
    bi = fnx.tensor([2, -3, 4])
    return {
        "float32": (a, b),
        "float64": (a.double(), b.double()),
        "float16": (a.half(), b.half()),
        "int64": (ai, bi),
        "int8 and 0-dim int64": (ai.to(fnx.int8), fnx.tensor(3)),
        "int64 and float32": (ai, b.abs() + 1),
        "bool": (fnx.tensor([[True, False], [True, True]]), fnx.tensor([True, False])),
        "0-dim": (fnx.tensor(-2.5), fnx.tensor(1.5)),
        "empty": (fnx.ones(0, 3), b),
        "int and Python int": (ai, 3),
        "int and Python float": (ai, -1.5),
        "float and Python int": (a, 2),
        "float16 and Python float": (a.half(), 0.3),
        "bool and Python bool": (fnx.tensor([True, False]), True),
        "uint8 and Python int": (fnx.tensor([0, 7, 200], dtype=fnx.uint8), 3),
    }


BINARY_SAMPLES = binary_samples()
SCALAR_SAMPLES = {k: v for k, v in BINARY_SAMPLES.items() if "Python" in k}
BINARY_OPS = [(name, ov) for name, ov, *_ in E.BINARY]


def _binary_raises(name, overload, sample):
    """Where the eager kernel refuses: bitwise ops on floats, arithmetic on bools."""
    a, b = BINARY_SAMPLES[sample]
    floating = [x.dtype.is_floating_point if hasattr(x, "_ks") else isinstance(x, float)
                for x in (a, b)]
    bools = [x.dtype is fnx.bool if hasattr(x, "_ks") else isinstance(x, bool)
             for x in (a, b)]
    if "shift" in name:     # shifts have no bool kernel (a bool tensor << an int promotes)
        return any(floating) or all(bools)
    if name.startswith("bitwise"):
        return any(floating)
    if name in ("sub", "rsub"):
        return any(bools)
    if name == "pow":       # bool ** Python bool is a copy or ones, no bool pow kernel
        return all(bools) and hasattr(b, "_ks")
    if name in ("floor_divide", "remainder", "fmod") or (name, overload) in (
            ("div", "Tensor_mode"), ("div", "Scalar_mode")):
        return all(bools)
    return False


BINARY_CASES = [(name, ov, sample) for name, ov in BINARY_OPS
                for sample in sorted(SCALAR_SAMPLES if ov.startswith("Scalar") else
                                     BINARY_SAMPLES)]


@pytest.mark.parametrize("name,overload,sample", BINARY_CASES,
                         ids=[f"{n}.{o}-{s}" for n, o, s in BINARY_CASES])
def test_binary(name, overload, sample):
    a, b = BINARY_SAMPLES[sample]
    op = getattr(getattr(aten, name), overload)
    kwargs = {}
    if overload.endswith("_mode"):
        kwargs["rounding_mode"] = "floor"
    result = check(op, a, b, **kwargs)
    assert isinstance(result, Exception) == _binary_raises(name, overload, sample), result


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("sample", ["float32", "float64", "float16", "int64",
                                    "int8 and 0-dim int64", "int64 and float32",
                                    "int and Python int", "0-dim"])
def test_div_rounding_modes(mode, sample):
    a, b = BINARY_SAMPLES[sample]
    check(aten.div.Tensor_mode, a, b, rounding_mode=mode)
    check(aten.div.Scalar_mode, a, 3, rounding_mode=mode)


def test_floor_division_and_remainder_semantics():
    a = fnx.tensor([7.0, -7.0, 7.0, -7.0, 1.0, 0.0, -0.0, inf, 5.0, -5.0, 3.0])
    b = fnx.tensor([2.0, 2.0, -2.0, -2.0, 0.1, -3.0, 3.0, 1.0, inf, inf, 0.0])
    q, _ = run_decomposed(aten.div.Tensor_mode, a, b, rounding_mode="floor")
    # 1 // 0.1 is 9 (0.1 is slightly above 1/10); a zero quotient keeps the sign of a / b
    np.testing.assert_array_equal(q.numpy(), [3., -4., -4., 3., 9., -0., -0., nan, 0., -1., inf])
    assert np.signbit(q.numpy()[5]) and np.signbit(q.numpy()[6])
    r, _ = run_decomposed(aten.remainder.Tensor, a, b)
    np.testing.assert_array_equal(r.numpy()[:4], [1., 1., -1., -1.])
    assert r.numpy()[9] == inf and math.isnan(r.numpy()[10])
    ai, bi = fnx.tensor([7, -7, 7, -7]), fnx.tensor([2, 2, -2, -2])
    assert run_decomposed(aten.div.Tensor_mode, ai, bi, rounding_mode="floor")[0].tolist() == \
        [3, -4, -4, 3]
    assert run_decomposed(aten.div.Tensor_mode, ai, bi, rounding_mode="trunc")[0].tolist() == \
        [3, -3, -3, 3]
    assert run_decomposed(aten.remainder.Tensor, ai, bi)[0].tolist() == [1, 1, -1, -1]
    assert run_decomposed(aten.fmod.Tensor, ai, bi)[0].tolist() == [1, -1, 1, -1]


@pytest.mark.parametrize("op", [aten.floor_divide.default, aten.remainder.Tensor,
                                aten.fmod.Tensor])
def test_integer_division_by_zero_raises(op):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_decomposed(op, fnx.tensor([1, 2]), fnx.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_decomposed(aten.div.Tensor_mode, fnx.tensor([1]), fnx.tensor([0]),
                       rounding_mode="trunc")


def test_bad_rounding_mode():
    with pytest.raises(RuntimeError, match="rounding_mode"):
        run_decomposed(aten.div.Tensor_mode, fnx.ones(2), fnx.ones(2), rounding_mode="round")


@pytest.mark.parametrize("alpha", [2, -1, 0.5, True])
@pytest.mark.parametrize("name", ["add", "sub", "rsub"])
def test_alpha(name, alpha):
    a = fnx.tensor([[1.5, -2.0, 3.0]])
    b = fnx.tensor([[4.0], [0.25]])
    i = fnx.tensor([3, -4, 5])
    for ov, other in (("Tensor", b), ("Scalar", 3)):
        op = getattr(getattr(aten, name), ov)
        for x in (a, i):
            result = check(op, x, other, alpha=alpha)
            float_alpha_on_ints = isinstance(alpha, float) and x is i and \
                not isinstance(other, fnx.Tensor)
            bool_alpha = isinstance(alpha, bool)
            assert isinstance(result, Exception) == (float_alpha_on_ints or bool_alpha), result
    check(aten.add.Tensor, fnx.tensor([True, False]), fnx.tensor([True, True]), alpha=True)


def test_integer_overflow_wraps_like_eager():
    x = fnx.tensor([1, 100, -100], dtype=fnx.int8)
    out = check(aten.add.Tensor, x, 1000)
    assert out.dtype is fnx.int8
    out = check(aten.mul.Tensor, fnx.tensor([2, 3], dtype=fnx.uint8), -1)
    assert out.tolist() == [254, 253]


def test_pow_overloads():
    i = fnx.tensor([-3, -1, 0, 1, 2, 4])
    e = fnx.tensor([-2, -1, 3, -5, 2, -1])
    out = check(aten.pow.Tensor_Tensor, i, e)
    assert out.tolist() == [0, -1, 0, 1, 4, 0]      # integer powers with negative exponents
    check(aten.pow.Tensor_Tensor, fnx.tensor([1.5, -2.0, 0.0]), fnx.tensor([2.0, 3.0, -1.0]))
    check(aten.pow.Tensor_Tensor, i, e.abs().float())
    for exponent in (2, 3, 0, 0.5, -1.5, True, False):
        check(aten.pow.Tensor_Scalar, fnx.tensor([1.5, 4.0, -2.0, 0.0]), exponent)
        check(aten.pow.Tensor_Scalar, fnx.tensor([True, False]), exponent)
    for base in (2, -2, 0.5, True):
        check(aten.pow.Scalar, base, fnx.tensor([0, 1, 3]))
        check(aten.pow.Scalar, base, fnx.tensor([0.5, -1.0, 2.0], dtype=fnx.float64))
    with pytest.raises(RuntimeError, match="negative integer powers"):
        run_decomposed(aten.pow.Tensor_Scalar, i, -2)
    out = check(aten.pow.Tensor_Scalar, fnx.tensor([True, False]), False)
    assert out.dtype is fnx.bool and out.tolist() == [True, True]
    out = check(aten.pow.Tensor_Scalar, fnx.tensor([True, False]), 2)
    assert out.dtype is fnx.int64


def test_round_decimals():
    x = fnx.tensor([1.2345, -2.5551, 1234.5, 0.125, nan, inf])
    for d in (0, 1, 2, -1, -2):
        check(aten.round.decimals, x, decimals=d)
        check(aten.round.decimals, x.double(), decimals=d)
        check(aten.round.decimals, x.half(), decimals=d)
    out = check(aten.round.decimals, fnx.tensor([15, -25]), decimals=-1)
    assert out.dtype is fnx.int64


def test_where():
    cond = fnx.tensor([[True, False, True]])
    check(aten.where.self, cond, fnx.tensor([[1.0], [2.0]]), fnx.tensor([7, 8, 9]))
    check(aten.where.self, cond, fnx.tensor([1, 2, 3], dtype=fnx.int8), 300)
    check(aten.where.self, fnx.tensor(True), fnx.tensor(1.5, dtype=fnx.float64), 2)
    check(aten.where.self, cond, 1.5, fnx.tensor([1, 2, 3]))
    out = check(aten.where.self, fnx.ones(0, 3, dtype=fnx.bool), fnx.ones(3), 0)
    assert tuple(out.shape) == (0, 3)
    with pytest.raises(RuntimeError, match="boolean"):
        run_decomposed(aten.where.self, fnx.tensor([1, 0]), fnx.ones(2), fnx.zeros(2))


def test_clamp():
    x = fnx.tensor([-2.0, -0.5, 0.5, 3.0, nan])
    i = fnx.tensor([-5, 0, 7])
    for lo, hi in ((-1, 1), (0.5, None), (None, 0), (2, -2), (nan, None)):
        check(aten.clamp.default, x, lo, hi)
        check(aten.clamp.default, i, lo, hi)
    out = check(aten.clamp.default, i, 0.5, None)
    assert out.dtype is fnx.float32
    check(aten.clamp.Tensor, x, fnx.tensor([0.0]), fnx.tensor([[1.0], [2.0]]))
    check(aten.clamp.Tensor, i, fnx.tensor([-1, 0, 1]), None)
    check(aten.clamp.Tensor, x.half(), None, fnx.tensor(0.25))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        run_decomposed(aten.clamp.default, x, None, None)


def test_logical_and_comparisons_mix_dtypes():
    a = fnx.tensor([0.0, nan, -1.0, 2.0])
    b = fnx.tensor([1, 0, 3, -4])
    for name in ("logical_and", "logical_or", "logical_xor"):
        out = check(getattr(aten, name).default, a, b)
        assert out.dtype is fnx.bool
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        out = check(getattr(aten, name).Tensor, a, b)
        assert out.dtype is fnx.bool
        check(getattr(aten, name).Scalar, b, 0.5)
        check(getattr(aten, name).Tensor, fnx.tensor([1, 2], dtype=fnx.int8), fnx.tensor(2.5))


def test_type_promotion_of_wrapped_numbers():
    # a 0-dim tensor does not promote across the same category; a Python float does
    i8 = fnx.tensor([1, 2], dtype=fnx.int8)
    assert check(aten.add.Tensor, i8, fnx.tensor(1000)).dtype is fnx.int8
    assert check(aten.add.Tensor, i8, 2.5).dtype is fnx.float32
    assert check(aten.mul.Tensor, fnx.tensor([1.0], dtype=fnx.float16),
                 fnx.tensor(3.0, dtype=fnx.float64)).dtype is fnx.float16
    assert check(aten.div.Tensor, fnx.tensor([1, 2]), fnx.tensor([2, 4])).dtype is fnx.float32
    assert check(aten.atan2.default, fnx.tensor([1, -1]), 2).dtype is fnx.float32


# ---------------------------------------------------------------------------- graphs

@pytest.mark.parametrize("fn", [
    lambda x, i: fnx.div(i, x, rounding_mode="floor") + i.pow(2),
    lambda x, i: fnx.where(x > 0, fnx.clamp(x, 0, 1), i % 3),
    lambda x, i: (x.sigmoid() * 2).round() - i.abs().bitwise_not(),
    lambda x, i: fnx.ops.aten.floor_divide.default(x, 0.5).isfinite() | (i == 1),
], ids=["div-pow", "where-clamp-mod", "sigmoid-round-not", "floordiv-isfinite"])
def test_decompose_graph_has_only_prims(fn):
    x = fnx.tensor([[0.5, -1.5, 2.0]])
    i = fnx.tensor([[3], [-4]])
    assert_graph_decomposes(fn, x, i)
