"""``fnx.compiler``: asking about and stepping outside an ``fnx.compile`` trace.

>>> import fnx
>>> fnx.compiler.is_compiling()
False
>>> @fnx.compile
... def f(x):
...     return x + 1 if fnx.compiler.is_compiling() else x - 1
>>> f(fnx.zeros(1))
tensor([1.])
"""
from __future__ import annotations

import contextlib

from .core import tls
from .core.dispatch_key import DispatchKey

__all__ = ["is_compiling", "suspend_tracing"]


suspensions = [0]      # blocks run outside a trace so far (fnx.compile asks, see below)


def is_compiling() -> bool:
    """True while ``fnx.compile`` (or ``fnx.graph.tracer.trace``) is tracing this thread."""
    from .graph.tracer import TracingMode
    return any(isinstance(m, TracingMode) for m in tls.state.modes)


@contextlib.contextmanager
def suspend_tracing():
    """Run a block on real tensors in the middle of a trace, e.g. to create state that
    outlives the trace (an optimizer's momentum buffers on its first step). Tensors made
    here are real; the traced program reads them as inputs and writes them back.

    >>> import fnx
    >>> state = {}
    >>> def step(x):
    ...     if "buf" not in state:
    ...         with fnx.compiler.suspend_tracing():
    ...             state["buf"] = fnx.zeros(2)
    ...     state["buf"].add_(x)
    ...     return state["buf"] * 1
    >>> f = fnx.compile(step)
    >>> f(fnx.ones(2)), f(fnx.ones(2))
    (tensor([1., 1.]), tensor([2., 2.]))
    """
    state = tls.state
    modes, include = state.modes, state.include
    if modes:
        suspensions[0] += 1
    state.modes = []
    state.include = include & ~(1 << DispatchKey.Tracer)
    try:
        yield
    finally:
        state.modes = modes
        state.include = include
