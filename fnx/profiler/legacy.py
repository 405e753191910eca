"""``fnx.autograd.profiler``: PyTorch's older profiler API over ``fnx.profiler``.

>>> import fnx
>>> with fnx.autograd.profiler.profile() as prof:
...     _ = fnx.ones(3).sum()
>>> [e.name for e in prof.function_events]
['aten::ones', 'aten::sum']
"""
from __future__ import annotations

from . import ProfilerActivity, record_function
from . import profile as _profile
from .events import FunctionEventAvg

__all__ = ["profile", "record_function", "emit_nvtx"]


class profile:
    """Record the ops run inside when ``enabled`` (``use_cuda``/``use_device``: the same
    host events); ``function_events``, ``key_averages()``, ``table()`` and
    ``export_chrome_trace()`` as ``fnx.profiler.profile``'s."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self._prof = _profile(activities=[ProfilerActivity.CPU], record_shapes=record_shapes,
                              acc_events=acc_events)

    def __enter__(self):
        if self.enabled:
            self._prof.__enter__()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._prof.__exit__(*exc)
        return False

    @property
    def function_events(self):
        return self._prof.events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, **kwargs):
        return self._prof.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, *args, **kwargs) -> str:
        return self._prof.events().table(*args, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        self._prof.export_chrome_trace(path)

    def total_average(self):
        """All events summed into one average."""
        out = FunctionEventAvg("Total")
        for e in self._prof.events().key_averages():
            out.count += e.count
            out.cpu_time_total += e.cpu_time_total
            out.self_cpu_time_total += e.self_cpu_time_total
        return out

    def __str__(self):
        return self.table()


class emit_nvtx:
    """PyTorch marks every op with an NVTX range for Nsight; fnx's ops reach the GPU as
    XLA programs, which carry XLA's own NVTX ranges, so this context adds nothing."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
