"""OpInfo entries of the random prims (fnx/ir/prims/random.py): values are not compared
(nondeterministic entries), shapes, dtypes and errors are."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ir import prims as P
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import tensor

RNG_DTYPES = (D.float32, D.bfloat16)


def _key(device, seed=0):
    return tensor([0, seed], D.int64, device)


# (few samples: each new shape compiles a JAX program on first use)
def _random_bits_samples(info, device, dtype):
    yield SampleInput(_key(device), [3, 4])
    yield SampleInput(_key(device, 7), [])


def _sampler_samples(info, device, dtype):
    yield SampleInput(_key(device), [3, 4], 0.0, 1.0, dtype=dtype)
    yield SampleInput(_key(device, 3), [], -2.0, 5.0, dtype=dtype)


def _shape_only(dtype_of):
    """A reference for random prims: the shape and dtype (values are not compared)."""
    def ref(key, shape, *args, **kwargs):
        return np.zeros(tuple(shape), dtype_of(kwargs).numpy)
    return ref


def _split_key_samples(info, device, dtype):
    yield SampleInput(_key(device), 3)
    yield SampleInput(_key(device, 9), 0)


def _key_errors(name, *args, **kwargs):
    def errors(info, device):
        yield ErrorInput(SampleInput(tensor([1, 2, 3], D.int64, device), *args, **kwargs),
                         RuntimeError, f"prims.{name}: expected an int64 key of shape \\[2\\]")
    return errors


register(
    OpInfo(P.random_bits, _shape_only(lambda kw: D.int64), (D.int64,), _random_bits_samples,
           nondeterministic=True, error_inputs=_key_errors("random_bits", [2])),
    OpInfo(P.uniform, _shape_only(lambda kw: kw["dtype"]), RNG_DTYPES, _sampler_samples,
           nondeterministic=True,
           error_inputs=_key_errors("uniform", [2], 0.0, 1.0, dtype=D.float32)),
    OpInfo(P.normal, _shape_only(lambda kw: kw["dtype"]), RNG_DTYPES, _sampler_samples,
           nondeterministic=True,
           error_inputs=_key_errors("normal", [2], 0.0, 1.0, dtype=D.float32)),
    OpInfo(P.split_key, lambda key, num: np.zeros((num, 2), np.int64), (D.int64,),
           _split_key_samples, nondeterministic=True, error_inputs=_key_errors("split_key", 2)),
)


def _poisson_prim_samples(info, device, dtype):
    yield SampleInput(_key(device), tensor(np.array([[0.5, 3.0], [1.0, 10.0]]), dtype, device))


def _binomial_prim_samples(info, device, dtype):
    yield SampleInput(_key(device, 5), tensor(np.array([3.0, 10.0, 0.0]), dtype, device),
                      tensor(np.array([0.5, 0.2, 0.7]), dtype, device))


register(
    OpInfo(P.poisson, lambda key, rate: np.zeros(rate.shape, rate.dtype), (D.float32, D.float64),
           _poisson_prim_samples, nondeterministic=True),
    OpInfo(P.binomial, lambda key, n, p: np.zeros(p.shape, p.dtype), (D.float32, D.float64),
           _binomial_prim_samples, nondeterministic=True),
)
