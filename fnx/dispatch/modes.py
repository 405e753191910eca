"""Interpreter modes on the Tracer key: one boxed fallback that hands every op call to the
innermost active mode.

A mode (the tracer that records a Graph, the decomposer that runs ops by their
decompositions) is entered as a context manager.  While it is active the Tracer key
is in the thread-local include set, so every op call, factories included, reaches
``mode.handle(op, keyset, args, kwargs)``.  Ops the mode calls from ``handle`` come
back to it (that is how a decomposition is interpreted recursively); ``run_below``
runs an op on the keys under the Tracer with the mode suspended.

>>> import fnx
>>> from fnx.dispatch.modes import DispatchMode
>>> class Count(DispatchMode):
...     def __init__(self):
...         self.seen = []
...     def handle(self, op, ks, args, kwargs):
...         self.seen.append(str(op))
...         return self.run_below(op, ks, args, kwargs)
>>> with Count() as m:
...     y = fnx.ones(2) * 3
>>> m.seen
['aten::ones', 'aten::mul.Tensor']
"""
from __future__ import annotations

from ..core.dispatch_key import DispatchKey, below
from ..core.tls import ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard, current_mode, state
from .dispatcher import register_fallback

__all__ = ["DispatchMode", "current_mode"]

_TRACER_BELOW = below(DispatchKey.Tracer)


class DispatchMode:
    """Base class: subclasses implement ``handle(op, ks, args, kwargs)``."""

    records_graph = False   # True for the tracer: the Functionalize key then steps aside

    def handle(self, op, ks, args, kwargs):
        raise NotImplementedError

    def run_below(self, op, ks, args, kwargs):
        """Run ``op`` on the keys below the Tracer, with no mode intercepting nested calls."""
        with ExcludeDispatchKeyGuard(DispatchKey.Tracer):
            return op.redispatch(int(ks) & _TRACER_BELOW, *args, **kwargs)

    def __enter__(self):
        self._guard = IncludeDispatchKeyGuard(DispatchKey.Tracer)
        self._guard.__enter__()
        state.modes.append(self)
        return self

    def __exit__(self, *exc):
        state.modes.pop()
        self._guard.__exit__(*exc)


def _tracer_fallback(op, ks, args, kwargs):
    mode = current_mode()
    if mode is None:
        # a tensor subclass that takes the Tracer key itself (PyTorch's __torch_dispatch__
        # on its Python key): a DTensor runs its ops as programs over its mesh
        handler = _subclass_handler(args, kwargs)
        if handler is not None:
            return handler(op, ks, args, kwargs)
        raise RuntimeError(f"{op.qualname}: a tensor carries the Tracer key but no tracing or "
                           f"decomposing mode is active (a traced tensor escaped its trace?)")
    return mode.handle(op, ks, args, kwargs)


def _subclass_handler(args, kwargs):
    for a in (*args, *kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            handler = getattr(type(t), "__fnx_dispatch__", None)
            if handler is not None:
                return handler
    return None


def install() -> None:
    register_fallback(DispatchKey.Tracer, _tracer_fallback)
