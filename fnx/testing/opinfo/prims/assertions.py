"""OpInfo entries of the value-check prims (fnx/ir/prims/assertions.py): the reference is
the operand itself; the error inputs hold values outside the range (data-dependent, so not
for the meta check). ``check_linalg_info`` passes a result through and its errors hold
a non-zero info."""
from __future__ import annotations

from ....core import dtype as D
from ....ir import prims as P
from ...database import INTS, ErrorInput, OpInfo, SampleInput, register
from ._common import tensor


def _samples(info, device, dtype):
    yield SampleInput(tensor([[0, 1, 2], [2, 1, 0]], dtype, device), 0, 3, "IndexError",
                      "index {} is out of bounds")
    yield SampleInput(tensor([0, 1], dtype, device), 0, 2, "RuntimeError", "bad")
    yield SampleInput(tensor([], dtype, device), 0, 0, "IndexError", "{}")


def _ref(a, low, high, error, message):
    return a.copy()


def _errors(info, device):
    m = "index {} is out of bounds"
    yield ErrorInput(SampleInput(tensor([0, 3, 4], D.int64, device), 0, 3, "IndexError", m),
                     IndexError, "index 3 is out of bounds", meta=False)
    yield ErrorInput(SampleInput(tensor([[1], [-2]], D.int64, device), -1, 3, "RuntimeError",
                                 m), RuntimeError, "index -2 is out of bounds", meta=False)
    yield ErrorInput(SampleInput(tensor([0.5], D.float32, device), 0, 3, "IndexError", m),
                     RuntimeError, "prims.check_in_range: expected")
    yield ErrorInput(SampleInput(tensor([0], D.int64, device), 0, 3, "KeyError", m),
                     RuntimeError, "prims.check_in_range: error must be one of")


register(OpInfo(P.check_in_range, _ref, INTS, _samples, error_inputs=_errors))


# ----------------------------------------------------------------------------- check_linalg_info

def _info_samples(info, device, dtype):
    yield SampleInput(tensor([[1.5, -2.0], [0.25, 3.0]], dtype, device),
                      tensor(0, D.int32, device), "linalg.inv", "element {} is zero")
    yield SampleInput(tensor([[[1.0]], [[2.0]]], dtype, device),
                      tensor([0, 0], D.int32, device), "f", "minor {} failed")


def _info_ref(a, info, api, message):
    return a.copy()


def _info_errors(info, device):
    m = "the leading minor of order {} is not positive-definite"
    ones = tensor([[[1.0]], [[1.0]], [[1.0]]], D.float32, device)
    yield ErrorInput(SampleInput(ones, tensor([0, 2, 1], D.int32, device), "linalg.cholesky",
                                 m), RuntimeError,
                     r"linalg.cholesky: \(Batch element 1\): the leading minor of order 2 is not",
                     meta=False)
    yield ErrorInput(SampleInput(tensor([[1.0]], D.float32, device), tensor(3, D.int32, device),
                                 "linalg.inv", m),
                     RuntimeError, "linalg.inv: the leading minor of order 3", meta=False)
    yield ErrorInput(SampleInput(ones, tensor([0.0, 1.0, 0.0], D.float32, device), "f", m),
                     RuntimeError, "prims.check_linalg_info: expected")


register(OpInfo(P.check_linalg_info, _info_ref, (D.float32, D.float64), _info_samples,
                error_inputs=_info_errors))
