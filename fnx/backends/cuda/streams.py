"""``fnx.cuda`` streams, events and NVTX ranges, as ``torch.cuda`` has them.

JAX gives each device one ordered queue of work (XLA orders a program's kernels by their
data dependencies), so every ``Stream`` of a device is that queue: work "on" two streams
runs in one order, which is a valid schedule of any stream program; ``wait_stream`` and
``wait_event`` have nothing left to order. ``Event.record()`` waits for the work queued
so far and takes the time, so ``elapsed_time`` between two recorded events is the wall
time between the completions of the work before each (what timing a region measures),
at the price of a host wait at each record. NVTX ranges become JAX profiler trace
annotations (they show in ``jax.profiler`` traces, and in Nsight through XLA's own NVTX).

>>> import fnx
>>> if fnx.cuda.is_available():
...     start, end = fnx.cuda.Event(enable_timing=True), fnx.cuda.Event(enable_timing=True)
...     start.record(); y = fnx.ones(64, 64, device="cuda") @ fnx.ones(64, 64, device="cuda")
...     end.record(); end.synchronize()
...     assert start.elapsed_time(end) >= 0.0
"""
from __future__ import annotations

import contextlib
import threading
import time

import jax

from ...core.device import device as _device
from . import devices

__all__ = ["Stream", "Event", "current_stream", "default_stream", "set_stream", "stream",
           "nvtx"]

_local = threading.local()      # .streams: device index -> the stream made current


class Stream:
    """A queue of work on one cuda device (see the module's note: JAX's one queue)."""

    def __init__(self, device=None, priority=0, **kwargs):
        index = devices.current_device() if device is None else devices._index(device)
        devices.jax_device(index)       # validates
        self.device = _device("cuda", index)
        self.priority = priority

    def synchronize(self) -> None:
        """Wait for the work queued on the device."""
        devices.synchronize(self.device)

    def query(self) -> bool:
        """Whether the work queued on the device has finished."""
        jd = devices.jax_device(self.device.index)
        return all(devices.arrays_on(jd, lambda a, _: a.is_ready()))

    def wait_event(self, event) -> None:
        """Later work waits for ``event``: it does already (one queue)."""

    def wait_stream(self, stream) -> None:
        """Later work waits for ``stream``'s: it does already (one queue)."""

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash(("fnx.cuda.Stream", self.device))

    def __repr__(self):
        return f"<fnx.cuda.Stream device={self.device} priority={self.priority}>"


_defaults: dict = {}


def default_stream(device=None) -> Stream:
    """The device's default stream."""
    index = devices.current_device() if device is None else devices._index(device)
    s = _defaults.get(index)
    if s is None:
        s = _defaults[index] = Stream(index)
    return s


def current_stream(device=None) -> Stream:
    """The stream made current on the device in this thread (``set_stream``, ``stream``),
    else its default one."""
    index = devices.current_device() if device is None else devices._index(device)
    s = getattr(_local, "streams", {}).get(index)
    return s if s is not None else default_stream(index)


def set_stream(s: Stream) -> None:
    """Make ``s`` its device's current stream in this thread."""
    if s is None:
        return
    if not hasattr(_local, "streams"):
        _local.streams = {}
    _local.streams[s.device.index] = s


class stream:
    """Context manager: ``s`` is its device's current stream (and that device the current
    device) inside; ``None`` changes nothing."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        s = self.s
        if s is None:
            return None
        self._device = devices.device(s.device.index).__enter__()
        self._prev = current_stream(s.device.index)
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self.s is not None:
            set_stream(self._prev)
            self._device.__exit__(*exc)
        return False


class Event:
    """A point in a stream's work; with ``enable_timing=True``, two recorded events give
    the milliseconds between them (``elapsed_time``)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self.blocking, self.interprocess = blocking, interprocess
        self._time = None
        self._device = None

    def record(self, stream=None) -> None:
        """Mark the work queued so far (waits for it: see the module's note)."""
        stream = current_stream() if stream is None else stream
        stream.synchronize()
        self._device = stream.device
        self._time = time.perf_counter()

    def query(self) -> bool:
        """Whether the work before the record has finished (it has: ``record`` waits)."""
        return True

    def synchronize(self) -> None:
        """Wait for the work before the record (done at the record)."""

    def wait(self, stream=None) -> None:
        """Make ``stream``'s later work wait for this event: it does already."""

    def elapsed_time(self, end_event) -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument "
                               "'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed "
                               "time.")
        return (end_event._time - self._time) * 1e3

    def __repr__(self):
        state = "recorded" if self._time is not None else "not recorded"
        return f"<fnx.cuda.Event {state}>"


class _Nvtx:
    """``fnx.cuda.nvtx``: named ranges (``range_push``/``range_pop``, ``range``) and marks,
    recorded as JAX profiler trace annotations."""

    def _stack(self) -> list:
        if not hasattr(_local, "ranges"):
            _local.ranges = []
        return _local.ranges

    def range_push(self, msg: str) -> int:
        """Open a range; returns its depth (0 for the outermost)."""
        annotation = jax.profiler.TraceAnnotation(msg)
        annotation.__enter__()
        stack = self._stack()
        stack.append(annotation)
        return len(stack) - 1

    def range_pop(self) -> int:
        """Close the innermost range; returns its depth, or -1 when none is open."""
        stack = self._stack()
        if not stack:
            return -1
        stack.pop().__exit__(None, None, None)
        return len(stack)

    @contextlib.contextmanager
    def range(self, msg: str, *args, **kwargs):
        """Context manager (and decorator): a range named ``msg.format(*args, **kwargs)``."""
        with jax.profiler.TraceAnnotation(msg.format(*args, **kwargs)):
            yield

    def mark(self, msg: str) -> None:
        """An instant event."""
        with jax.profiler.TraceAnnotation(msg):
            pass


nvtx = _Nvtx()
