"""fnx.OutOfMemoryError: one exception type (a RuntimeError, as torch.OutOfMemoryError) for
an allocation that fails, naming the op: NumPy's MemoryError in the CPU backend's kernels
and factories, XLA's RESOURCE_EXHAUSTED on the cuda backend and in compiled programs."""
import numpy as np
import pytest

import fnx
from fnx.core.errors import OutOfMemoryError, out_of_memory

HUGE = 10**13       # 40 TB of float32: refused by every allocator, never overcommitted


def test_type_is_a_runtime_error_and_public():
    assert fnx.OutOfMemoryError is OutOfMemoryError is fnx.cuda.OutOfMemoryError
    assert issubclass(OutOfMemoryError, RuntimeError)
    assert not issubclass(OutOfMemoryError, MemoryError)       # as torch.OutOfMemoryError


@pytest.mark.parametrize("make, op", [
    (lambda: fnx.empty(HUGE), "aten::empty.memory_format"),
    (lambda: fnx.zeros(HUGE), "aten::zeros"),
    (lambda: fnx.ones(10**7, 10**6), "aten::ones"),
    (lambda: fnx.randn(HUGE), "aten::randn"),
    (lambda: fnx.full((HUGE,), 2.0), "aten::full"),
    (lambda: fnx.ones(1).expand(HUGE).contiguous(), "aten::clone"),
    (lambda: fnx.ones(1).expand(HUGE) * 2, "aten::mul.Tensor"),
])
def test_cpu_allocation_failures_name_the_op(make, op):
    with pytest.raises(fnx.OutOfMemoryError, match=f"^{op}: out of memory on cpu: "
                                                   f"Unable to allocate"):
        make()


def test_inputs_are_unchanged_after_an_out_of_memory_error():
    x = fnx.arange(3, dtype=fnx.float32)
    before = x.numpy().copy()
    with pytest.raises(fnx.OutOfMemoryError):
        x.expand(HUGE, 3) + x
    assert np.array_equal(x.numpy(), before)
    # the process goes on: a normal allocation afterwards works
    assert (x + 1).tolist() == [1.0, 2.0, 3.0]


def test_xla_resource_exhausted_maps_to_it():
    xla = RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                       "8589934592 bytes.")
    e = out_of_memory(xla, "aten::mm")
    assert type(e) is OutOfMemoryError
    assert str(e).startswith("aten::mm: out of memory: RESOURCE_EXHAUSTED")
    assert "8589934592 bytes" in str(e)
    assert out_of_memory(RuntimeError("INVALID_ARGUMENT: shapes"), "aten::mm") is None
    assert out_of_memory(ValueError("RESOURCE_EXHAUSTED"), "aten::mm") is None
    assert out_of_memory(e, "outer") is None        # already mapped: the innermost op wins
    m = out_of_memory(MemoryError(), "aten::add.Tensor")
    assert str(m) == "aten::add.Tensor: out of memory on cpu: the allocation failed"


def test_compiled_program_out_of_memory():
    @fnx.compile
    def f(x):
        return fnx.zeros(HUGE) + x

    with pytest.raises(fnx.OutOfMemoryError, match="^fnx.compile: the compiled program: "
                                                   "out of memory: RESOURCE_EXHAUSTED"):
        f(fnx.ones(1))
    # a differentiable call runs the forward of its vjp program: the same error
    with pytest.raises(fnx.OutOfMemoryError, match="^fnx.compile: the compiled program: "
                                                   "out of memory"):
        f(fnx.ones(1, requires_grad=True))


def test_cuda_backend_out_of_memory():
    """On the cuda backend (on the host under FNX_CUDA_ON_CPU=1 when there is no GPU), an
    op's jitted program that XLA cannot allocate for raises OutOfMemoryError naming it."""
    if not fnx.cuda.is_available():
        pytest.skip("no cuda device (run with FNX_CUDA_ON_CPU=1 to test the cuda backend)")
    with pytest.raises(fnx.OutOfMemoryError, match="^aten::empty.memory_format: out of "
                                                   "memory: RESOURCE_EXHAUSTED"):
        fnx.empty(HUGE, device="cuda")
    with pytest.raises(fnx.OutOfMemoryError, match="^aten::full: out of memory"):
        fnx.ones(HUGE, device="cuda")
