"""The Meta backend: shapes and dtypes only, from each op's meta function.

Every op with a meta function gets a Meta kernel; here a sample of calls is run on CPU
and on meta tensors of the same shapes and dtypes, and the results must agree.
"""
import numpy as np
import pytest

import fnx
from fnx.core.meta_array import MetaArray
from fnx.dispatch import DispatchKey, all_ops


def _meta_like(x):
    return fnx.empty(tuple(x.shape), dtype=x.dtype, device="meta") if isinstance(x, fnx.Tensor) \
        else x


CASES = [
    ("add", lambda a, b: a + b, [(2, 3), (3,)], fnx.float32),
    ("int + float scalar", lambda a: a + 1.5, [(4,)], fnx.int64),
    ("div of ints", lambda a, b: a / b, [(2, 1), (1, 5)], fnx.int32),
    ("compare", lambda a, b: a < b, [(3,), (3,)], fnx.float64),
    ("matmul", lambda a, b: a @ b, [(5, 2, 3), (3, 4)], fnx.float32),
    ("sum dim", lambda a: a.sum(dim=1), [(2, 3, 4)], fnx.int32),
    ("mean keepdim", lambda a: a.mean(dim=(0, 2), keepdim=True), [(2, 3, 4)], fnx.float16),
    ("max dim", lambda a: a.max(dim=0), [(3, 2)], fnx.float32),
    ("transpose", lambda a: a.transpose(0, 1), [(2, 3)], fnx.float32),
    ("reshape", lambda a: a.reshape(-1, 2), [(2, 3, 4)], fnx.float32),
    ("cat", lambda a, b: fnx.cat([a, b], dim=1), [(2, 3), (2, 5)], fnx.float32),
    ("where", lambda a, b: fnx.where(a > 0, a, b), [(2, 3), (3,)], fnx.float32),
]


@pytest.mark.parametrize("name, fn, shapes, dtype", CASES, ids=[c[0] for c in CASES])
def test_meta_matches_cpu(name, fn, shapes, dtype):
    rng = np.random.default_rng(0)
    cpu_args = [fnx.tensor(rng.standard_normal(s) * 3, dtype=dtype) for s in shapes]
    expected = fn(*cpu_args)
    got = fn(*[_meta_like(a) for a in cpu_args])
    exp_list = list(expected) if isinstance(expected, tuple) else [expected]
    got_list = list(got) if isinstance(got, tuple) else [got]
    for e, g in zip(exp_list, got_list):
        assert g.device == fnx.device("meta") and isinstance(g._data, MetaArray)
        assert g.shape == e.shape and g.dtype is e.dtype


def test_meta_errors_are_the_cpu_errors():
    a, b = fnx.empty(2, 3, device="meta"), fnx.empty(4, 5, device="meta")
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        a + b
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ b


def test_every_op_with_a_meta_function_has_a_meta_kernel():
    missing = [op.qualname for op in all_ops()
               if op.meta is not None and not op.has_kernel_for(DispatchKey.Meta)]
    assert missing == []


def test_meta_tensor_has_no_data():
    t = fnx.empty(1000, 1000, device="meta")
    with pytest.raises(Exception):
        t.item()
    assert t.numel() == 10 ** 6 and t.stride() == (1000, 1)
