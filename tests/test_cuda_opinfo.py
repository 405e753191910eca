"""The OpInfo database on the cuda device: eager values vs the NumPy references (in-place
ops return self and bump its version, out= ops return out), and PyTorch's errors.

Needs a cuda device: a JAX GPU, or the FNX_CUDA_ON_CPU=1 switch.  Every eager cuda kernel
is an XLA compilation per argument signature (~0.1 s on a CPU), so by default each entry
runs for one dtype (float32 where it has it) on its first 3 samples: ~3 minutes under the
switch on 2 cores.  ``FNX_CUDA_OPINFO=full`` runs every dtype and sample, and also the
decomposed-to-prims check (for a GPU machine or a nightly run); ``FNX_OPINFO_DTYPES``
narrows the dtypes as for the CPU suite.

Errors that depend on values (integer division by zero, an index out of range) are left
out: on CUDA those are device-side asserts in PyTorch, and the jitted kernels do not check
values (JAX clamps indices).
"""
import os

import pytest

import fnx
import fnx.testing as ft
from fnx.testing import checks as C

AVAILABLE = fnx.cuda.is_available()
FULL = os.environ.get("FNX_CUDA_OPINFO", "") == "full"
pytestmark = pytest.mark.skipif(not AVAILABLE, reason="no cuda device (no JAX GPU; set "
                                                      "FNX_CUDA_ON_CPU=1)")


def _reference_params():
    if not AVAILABLE:
        return []
    if FULL:
        return ft.backend_params("cuda", checks=("reference", "decomp_prims"))
    out, seen = [], set()
    for c in ft.cases(["reference"], device="cuda", max_samples=3):
        want = fnx.float32 if fnx.float32 in c.info.dtypes else c.info.dtypes[0]
        if c.dtype is not want or c.info.name in seen:
            continue
        seen.add(c.info.name)
        marks = pytest.mark.xfail(strict=True, reason=c.known.reason) if c.known else ()
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _reference_params())
def test_cuda_reference(case):
    case.run()


def _error_params():
    if not AVAILABLE:
        return []
    return [pytest.param(info, id=info.name) for info in ft.entries()
            if "errors" in info.applicable_checks()]


@pytest.mark.parametrize("info", _error_params())
def test_cuda_errors(info):
    errs = [e for e in info.error_inputs("cpu") if e.meta]
    if not errs:
        pytest.skip(f"{info.name}: only value-dependent error inputs")
    failures = []
    for e in errs:
        moved = type(e)(C.to_device(e.sample, "cuda"), e.error_type, e.match, e.meta)
        try:
            C.check_errors(info, moved)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)
