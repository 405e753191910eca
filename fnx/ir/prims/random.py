"""Random prims: counter-based (threefry2x32) bits and samples from an explicit int64[2]
key, and key splitting; none is differentiable."""
from __future__ import annotations

from ...core import dtype as D
from ..registry import TensorMeta, nondifferentiable
from ._common import RNG, prim
from .checks import FLOAT, check_tensor, dtype_arg, fail, int_arg, scalar_for, shape_arg

__all__ = ["random_bits", "uniform", "normal", "split_key", "check_key", "poisson", "binomial"]


def check_key(name, key):
    check_tensor(name, "key", key)
    if key.dtype is not D.int64 or tuple(key.shape) != (2,):
        raise fail(name, f"expected an int64 key of shape [2], got {key.dtype.name} of shape "
                         f"{list(key.shape)}")


def _random_bits_meta(key, shape):
    check_key("random_bits", key)
    return TensorMeta(shape_arg("random_bits", shape), D.int64)


def _sampler_meta(name):
    def meta(key, shape, a, b, *, dtype):
        check_key(name, key)
        shape = shape_arg(name, shape)
        dtype = dtype_arg(name, dtype, FLOAT)
        scalar_for(name, a, dtype)
        scalar_for(name, b, dtype)
        return TensorMeta(shape, dtype)
    return meta


def _split_key_meta(key, num):
    check_key("split_key", key)
    num = int_arg("split_key", "num", num)
    if num < 0:
        raise fail("split_key", f"num {num} must be >= 0")
    return TensorMeta((num, 2), D.int64)


random_bits = prim("random_bits(Tensor key, SymInt[] shape) -> Tensor", _random_bits_meta, RNG)
uniform = prim("uniform(Tensor key, SymInt[] shape, Scalar low, Scalar high, *, "
                "ScalarType dtype) -> Tensor", _sampler_meta("uniform"), RNG)
normal = prim("normal(Tensor key, SymInt[] shape, Scalar mean, Scalar std, *, "
               "ScalarType dtype) -> Tensor", _sampler_meta("normal"), RNG)
split_key = prim("split_key(Tensor key, int num) -> Tensor", _split_key_meta, RNG)


def _poisson_meta(key, rate):
    check_key("poisson", key)
    check_tensor("poisson", "rate", rate)
    dtype_arg("poisson", rate.dtype, FLOAT)
    return TensorMeta(tuple(rate.shape), rate.dtype)


def _binomial_meta(key, count, prob):
    check_key("binomial", key)
    check_tensor("binomial", "count", count)
    check_tensor("binomial", "prob", prob)
    dtype_arg("binomial", prob.dtype, FLOAT)
    if tuple(count.shape) != tuple(prob.shape) or count.dtype is not prob.dtype:
        raise fail("binomial", f"count and prob must have one shape and dtype, got "
                               f"{list(count.shape)} {count.dtype.name} and "
                               f"{list(prob.shape)} {prob.dtype.name}")
    return TensorMeta(tuple(prob.shape), prob.dtype)


# Poisson(rate) and Binomial(count, prob) counts, elementwise, as floats of the input's dtype
poisson = prim("poisson(Tensor key, Tensor rate) -> Tensor", _poisson_meta, RNG)
binomial = prim("binomial(Tensor key, Tensor count, Tensor prob) -> Tensor", _binomial_meta, RNG)
nondifferentiable(random_bits, uniform, normal, split_key, poisson, binomial)
