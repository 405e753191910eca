"""fnx.cuda's runtime queries: allocator statistics, device properties, streams, events,
NVTX ranges (fnx.backends.cuda.memory, .streams).

Needs a cuda device: a JAX GPU, or FNX_CUDA_ON_CPU=1 (CI runs this file so). The allocator
statistics of a GPU are read through a stand-in device where a CPU device keeps none.
"""
import gc
import time
import warnings

import pytest

import fnx
from fnx.backends.cuda import memory

pytestmark = pytest.mark.skipif(not fnx.cuda.is_available(),
                                reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


def test_memory_allocated_follows_live_tensors():
    # (the cyclic collector off: garbage of earlier tests freed in between, arrays on the
    # same device, would move the figures; on JAX's CPU platform that is any CPU array)
    gc.collect()
    gc.disable()
    try:
        before = fnx.cuda.memory_allocated()
        x = fnx.empty(1024, device="cuda")          # 4096 bytes of float32
        grown = fnx.cuda.memory_allocated() - before
        assert 4096 <= grown < 2 * 4096
        y = fnx.empty(256, dtype=fnx.float64, device="cuda:1") \
            if fnx.cuda.device_count() > 1 else None
        assert fnx.cuda.memory_allocated(0) - before == grown   # cuda:1's is not counted
        del x, y
        assert fnx.cuda.memory_allocated() == before
    finally:
        gc.enable()


class _Stats:
    """A JAX device's allocator statistics, as XLA's GPU allocator names them."""

    def __init__(self, **stats):
        self.stats = stats


@pytest.fixture
def gpu_stats(monkeypatch):
    fake = _Stats(bytes_in_use=1000, peak_bytes_in_use=5000, pool_bytes=8192,
                  peak_pool_bytes=16384, num_allocs=7, largest_alloc_size=512,
                  bytes_limit=1 << 20)
    monkeypatch.setattr(memory, "_device_stats", lambda jd: dict(fake.stats))
    monkeypatch.setattr(memory, "_reset_at", {})
    monkeypatch.setattr(memory, "_warned", set())
    return fake


def test_statistics_under_pytorch_names(gpu_stats):
    assert fnx.cuda.memory_allocated() == 1000 and fnx.cuda.max_memory_allocated() == 5000
    assert fnx.cuda.memory_reserved() == 8192 and fnx.cuda.max_memory_reserved() == 16384
    assert fnx.cuda.mem_get_info() == ((1 << 20) - 1000, 1 << 20)
    stats = fnx.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == 1000
    assert stats["allocated_bytes.all.peak"] == 5000
    assert stats["reserved_bytes.all.peak"] == 16384 and stats["allocation.all.current"] == 7
    assert list(stats) == sorted(stats)
    assert fnx.cuda.get_device_properties().total_memory == 1 << 20


def test_peak_after_reset_is_exact_past_the_old_peak_else_an_upper_bound(gpu_stats):
    fnx.cuda.reset_peak_memory_stats()
    with pytest.warns(UserWarning, match="cannot reset its peak.*5000 bytes"):
        assert fnx.cuda.max_memory_allocated() == 5000      # not gone past: the old peak
    gpu_stats.stats.update(bytes_in_use=6000, peak_bytes_in_use=7000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fnx.cuda.max_memory_allocated() == 7000      # a new peak: exact
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        fnx.cuda.reset_max_memory_allocated()


@pytest.mark.skipif(not fnx.cuda.on_cpu(), reason="a GPU keeps allocator statistics")
def test_peaks_on_a_device_without_statistics_raise():
    with pytest.raises(RuntimeError, match="max_memory_allocated: cuda:0 is a JAX cpu "
                                           "device .*keeps no statistics"):
        fnx.cuda.max_memory_allocated()
    assert fnx.cuda.memory_stats() == {}
    p = fnx.cuda.get_device_properties(0)
    assert (p.major, p.minor) == (0, 0) == fnx.cuda.get_device_capability()
    assert p.total_memory > 0 and "cpu" in repr(p)
    assert fnx.cuda.is_bf16_supported() and not fnx.cuda.is_bf16_supported(False)


def test_events_time_the_work_between_their_records():
    start, end = fnx.cuda.Event(enable_timing=True), fnx.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="must be recorded"):
        start.elapsed_time(end)
    start.record()
    time.sleep(0.05)
    x = fnx.ones(64, 64, device="cuda") @ fnx.ones(64, 64, device="cuda")
    end.record()
    end.synchronize()
    assert end.query() and 50 <= start.elapsed_time(end) < 60_000
    assert x.cpu().numpy()[0, 0] == 64
    untimed = fnx.cuda.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(untimed)


def test_stream_context_makes_it_current_and_restores():
    assert fnx.cuda.current_stream() == fnx.cuda.default_stream()
    last = fnx.cuda.device_count() - 1
    s = fnx.cuda.Stream(last)
    with fnx.cuda.stream(s) as inside:
        assert inside is s and fnx.cuda.current_device() == last
        assert fnx.cuda.current_stream() is s
        y = fnx.ones(3, device="cuda") * 2
    assert fnx.cuda.current_device() == 0 and fnx.cuda.current_stream(last) == \
        fnx.cuda.default_stream(last)
    s.wait_stream(fnx.cuda.default_stream())
    s.synchronize()
    assert s.query() and y.device == fnx.device("cuda", last)
    assert s.record_event()._time is not None
    with fnx.cuda.stream(None):
        assert fnx.cuda.current_stream() == fnx.cuda.default_stream()


def test_nvtx_ranges_nest():
    nvtx = fnx.cuda.nvtx
    assert nvtx.range_push("outer") == 0 and nvtx.range_push("inner") == 1
    assert nvtx.range_pop() == 1 and nvtx.range_pop() == 0 and nvtx.range_pop() == -1

    @nvtx.range("step {}", 3)
    def step():
        return fnx.ones(2, device="cuda").sum().item()
    assert step() == 2.0
    nvtx.mark("done")
