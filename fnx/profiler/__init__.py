"""``fnx.profiler``: which ops a region runs and how long each takes, as ``torch.profiler``.

``profile`` records every op call that goes through the dispatcher (forward and backward,
eager kernels on any device, the ops a decomposition calls nested in it) and every
``record_function`` range, with its host time; ``key_averages().table()`` prints PyTorch's
table, ``export_chrome_trace`` writes a Chrome trace. ``schedule`` and ``step()`` limit
recording to some steps of a loop; ``tensorboard_trace_handler`` writes each recorded
cycle's trace to a directory.

What it measures: host time, from an op's dispatch to its return. Eager CPU kernels run
synchronously, so that is their time. JAX runs GPU work (and a compiled program's) asynchronously:
there the time is the dispatch's, and the device's own timeline is ``jax.profiler``'s
(``ProfilerActivity.CUDA`` is accepted and records the same host events). A compiled
program's call is one event, named after the function.

>>> import fnx
>>> from fnx.profiler import profile, record_function, ProfilerActivity
>>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
...     with record_function("model"):
...         y = fnx.nn.functional.relu(fnx.ones(2, 3) @ fnx.ones(3, 4))
>>> [e.key for e in prof.key_averages()]
['model', 'aten::ones', 'aten::matmul', 'aten::mm', 'aten::relu']
>>> "Self CPU time total" in prof.key_averages().table(sort_by="cpu_time_total")
True
"""
from __future__ import annotations

import enum
import functools
import gzip
import os
import socket
import threading
import time
import warnings

from ..core import profiling
from ..core.dispatch_key import DispatchKey, below
from ..core.tensor import Tensor
from ..dispatch.modes import DispatchMode
from .events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """The action for each step: ``skip_first`` steps idle, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last one saves), ``repeat`` times (0:
    without end).

    >>> from fnx.profiler import schedule
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:
            return ProfilerAction.NONE
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):
    """An ``on_trace_ready`` handler writing each cycle's Chrome trace to ``dir_name`` as
    ``<worker>.<time in ms>.pt.trace.json`` (the name TensorBoard's profiler plugin reads)."""
    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json")
        if use_gzip:
            tmp = path + ".tmp"
            prof.export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
        else:
            prof.export_chrome_trace(path)
    return handler


_BELOW_TRACER = below(DispatchKey.Tracer)


class _Recording(DispatchMode):
    """The dispatch mode a recording profiler pushes: every op call becomes an event."""

    def __init__(self, prof):
        self.prof = prof

    def handle(self, op, ks, args, kwargs):
        # (named as PyTorch's profiler names ops: without the overload, "aten::add")
        event = self.prof._open(op.qualname.split(".", 1)[0], args)
        try:
            # (below the Tracer key only for this op: the ops it calls come back here,
            # nested in its event)
            return op.redispatch(int(ks) & _BELOW_TRACER, *args, **kwargs)
        finally:
            self.prof._close(event)


class profile:
    """Record the ops run inside (see the module's note). ``activities``: what to record
    (CPU and CUDA record the same host events); ``schedule`` with ``step()``: which steps;
    ``on_trace_ready(prof)``: called after each cycle's last active step;
    ``record_shapes``: keep each op's input shapes (``key_averages(group_by_input_shape=
    True)``). ``profile_memory``, ``with_stack``, ``with_flops`` and ``with_modules`` are
    accepted and record nothing more."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        unknown = self.activities - supported_activities()
        if unknown:
            raise ValueError(f"fnx.profiler: unsupported activities "
                             f"{sorted(a.name for a in unknown)}")
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.acc_events = acc_events
        self.step_num = 0
        self._events = EventList()
        self._open_stack = []
        self._mode = None
        self._action = ProfilerAction.NONE
        self._thread = threading.get_ident()

    # ---- recording
    def _open(self, name, args=None, user=False):
        now = time.perf_counter_ns() / 1e3
        parent = self._open_stack[-1] if self._open_stack else None
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] \
            if self.record_shapes and args is not None else None
        event = FunctionEvent(name, now, threading.get_ident(), shapes, parent, user)
        if parent is not None:
            parent.cpu_children.append(event)
        self._open_stack.append(event)
        self._events.append(event)
        return event

    def _close(self, event) -> None:
        event.end_us = time.perf_counter_ns() / 1e3
        if self._open_stack and self._open_stack[-1] is event:
            self._open_stack.pop()

    def _recording(self) -> bool:
        return self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    # (the observer side of fnx.core.profiling: named ranges from record_function and
    # from compiled programs' calls)
    def open(self, name):
        return self._open(name, None, user=True)

    def close(self, event) -> None:
        self._close(event)

    def _start_recording(self) -> None:
        if self._mode is None:
            self._mode = _Recording(self)
            self._mode.__enter__()
            profiling.observe(self)

    def _stop_recording(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
            profiling.unobserve(self)

    def _enter_action(self, action) -> None:
        was = self._action
        self._action = action
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if was not in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
                if not self.acc_events:
                    self._events = EventList()
            self._start_recording()
        else:
            self._stop_recording()

    # ---- public
    def start(self) -> None:
        self._enter_action(self.schedule(self.step_num))

    def stop(self) -> None:
        saving = self._action is ProfilerAction.RECORD_AND_SAVE or \
            (self._recording() and self.schedule is _always_record)
        self._stop_recording()
        self._action = ProfilerAction.NONE
        if saving and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Mark the end of a step: the schedule's action for the next one starts."""
        finished = self._action
        self.step_num += 1
        nxt = self.schedule(self.step_num)
        if finished is ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording()
            self._action = ProfilerAction.NONE
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        self._enter_action(nxt)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def events(self) -> EventList:
        """Every recorded event (of the last recorded cycle)."""
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, **kwargs):
        """The events averaged by name (and input shapes)."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("fnx.profiler: group_by_input_shape needs record_shapes=True")
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        self._events.export_chrome_trace(path)

    def table(self, *args, **kwargs) -> str:
        return self._events.table(*args, **kwargs)


class record_function:
    """A named range in the profile (context manager or decorator); nothing when no
    profiler records."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open = []

    def __enter__(self):
        self._open.append(profiling.open_range(self.name))
        return self

    def __exit__(self, *exc):
        profiling.close_range(self._open.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped

