"""Thread-local include/exclude key sets and the guards that set them.

The call keyset is ``(keys of the tensor arguments | include | ALWAYS) & ~exclude``.
``State.include`` already holds ``ALWAYS_INCLUDED`` and ``State.mask`` is ``~exclude``,
so the hot path reads two attributes and does two bit operations.
"""
from __future__ import annotations

import threading

from .dispatch_key import FULL, DispatchKey, DispatchKeySet

__all__ = ["IncludeDispatchKeyGuard", "ExcludeDispatchKeyGuard", "local_include_set",
           "local_exclude_set", "current_mode"]

# BackendSelect is in every call's keyset; ops without a BackendSelect kernel fall through it.
ALWAYS_INCLUDED = 1 << DispatchKey.BackendSelect


class State(threading.local):
    include = ALWAYS_INCLUDED   # user include set | ALWAYS_INCLUDED
    mask = FULL                 # ~exclude
    # Per-thread facts a trace on this thread asks about; another thread's backward or
    # inference_mode must not change what this thread sees.
    grad_log = None             # the active GradWriteLog (fnx.core.tensor)
    inference_depth = 0         # nesting of inference_mode (fnx.core.grad_mode)
    backward_runs = 0           # backward passes run (fnx.autograd.engine)
    suspensions = 0             # suspend_tracing blocks entered inside a trace
    below_autograd = 0          # nesting of ops run below an autograd kernel (a tracer
                                # tells them from ops run in no_grad: fnx.graph.tracer)
    # Autocast (fnx.core.autocast_mode): whether it is on is the Autocast<device> bit of
    # ``include``; the rest is here.
    autocast_nesting = 0        # autocast regions entered and not left
    autocast_cache_enabled = True

    def __init__(self):
        self.modes = []         # active interpreter modes (fnx.dispatch.modes), innermost last
        self.autocast_dtypes = {}   # device type -> dtype set by set_autocast_dtype
        self.autocast_cache = {}    # id(weight) -> (weakref, version, grad mode, its cast)


state = State()


def current_mode():
    """The innermost active interpreter mode on this thread (``fnx.dispatch.modes``), or
    None."""
    modes = state.modes
    return modes[-1] if modes else None


def local_include_set() -> DispatchKeySet:
    return DispatchKeySet(state.include & ~ALWAYS_INCLUDED)


def local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(FULL & ~state.mask)


def _bits(keys) -> int:
    if isinstance(keys, DispatchKey):
        return 1 << keys
    if isinstance(keys, int):
        return int(keys)
    r = 0
    for k in keys:
        r |= 1 << k
    return r


class IncludeDispatchKeyGuard:
    """Add keys to every call's keyset on this thread while active.

    >>> import fnx
    >>> from fnx.dispatch import DispatchKey, IncludeDispatchKeyGuard, local_include_set
    >>> with IncludeDispatchKeyGuard(DispatchKey.Tracer):
    ...     DispatchKey.Tracer in local_include_set()
    True
    """

    def __init__(self, keys):
        self.bits = _bits(keys)

    def __enter__(self):
        self.saved = state.include
        state.include = self.saved | self.bits
        return self

    def __exit__(self, *exc):
        state.include = self.saved


class ExcludeDispatchKeyGuard:
    """Remove keys from every call's keyset on this thread while active.

    >>> import fnx
    >>> from fnx.dispatch import DispatchKey, ExcludeDispatchKeyGuard, local_exclude_set
    >>> with ExcludeDispatchKeyGuard(DispatchKey.AutogradCPU):
    ...     DispatchKey.AutogradCPU in local_exclude_set()
    True
    """

    def __init__(self, keys):
        self.bits = _bits(keys)

    def __enter__(self):
        self.saved = state.mask
        state.mask = self.saved & ~self.bits
        return self

    def __exit__(self, *exc):
        state.mask = self.saved
