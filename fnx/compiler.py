"""``fnx.compiler``: asking about, stepping outside and resetting ``fnx.compile``, as
``torch.compiler``.

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

import functools
import os

import jax
from jax.experimental.compilation_cache import compilation_cache as _jax_cache

from .graph.tracer import DataDependentError, is_compiling, suspend_tracing
from .lower.dynamic_shapes import mark_dynamic
from .lower.frontend import reset

__all__ = ["is_compiling", "suspend_tracing", "reset", "disable", "mark_dynamic",
           "set_cache_dir"]


def set_cache_dir(path, *, min_compile_time_s: float = 0.0) -> None:
    """Keep XLA's compiled programs on disk under ``path`` (JAX's persistent compilation
    cache), so that a new process loads a program it compiled before instead of compiling it
    again: ``fnx.compile``'s programs and the cuda backend's eager kernels alike. Programs
    that took less than ``min_compile_time_s`` to compile are not written. ``None`` turns
    the cache off. The environment variable ``FNX_CACHE_DIR`` sets it when fnx is imported
    (as ``TORCHINDUCTOR_CACHE_DIR`` for Inductor). JAX keys each entry by the program, the
    compile options and the device, so a stale entry is never used; the setting is JAX's
    own and so applies to the process's other JAX programs too.

    >>> import fnx, tempfile
    >>> fnx.compiler.set_cache_dir(tempfile.mkdtemp())
    >>> fnx.compiler.set_cache_dir(None)
    """
    if path is not None:
        path = os.fspath(path)
        os.makedirs(path, exist_ok=True)
    _jax_cache.reset_cache()        # the cache object is made once; a new dir needs a new one
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_s))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


if os.environ.get("FNX_CACHE_DIR"):
    set_cache_dir(os.environ["FNX_CACHE_DIR"])


def disable(fn=None, recursive=True, *, reason=None):
    """Keep ``fn`` out of compiled code, as ``torch.compiler.disable`` (a decorator, with or
    without arguments). Called outside a trace, ``fn`` runs as usual. fnx cannot break a
    graph around it, so a compiled function that reaches ``fn`` runs eagerly as a whole
    (with a warning; with ``fullgraph=True`` it is an error). Only ``recursive=True`` is
    supported.

    >>> import fnx, warnings
    >>> @fnx.compiler.disable
    ... def helper(x):
    ...     return x * 2 if fnx.compiler.is_compiling() else x * 3
    >>> f = fnx.compile(lambda x: helper(x) + 1)
    >>> with warnings.catch_warnings(record=True):
    ...     f(fnx.ones(2))          # helper ran eagerly: it multiplied by 3
    tensor([4., 4.])
    >>> fnx.compile(lambda x: helper(x), fullgraph=True)(fnx.ones(1))
    Traceback (most recent call last):
    ...
    fnx.graph.tracer.DataDependentError: helper is disabled by fnx.compiler.disable: ...
    """
    if not recursive:
        raise NotImplementedError("fnx.compiler.disable(recursive=False): fnx cannot compile "
                                  "the functions a disabled function calls")
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn, updated=())
    def run_eagerly(*args, **kwargs):
        if is_compiling():
            name = getattr(fn, "__qualname__", None) or type(fn).__name__
            why = f" ({reason})" if reason else ""
            raise DataDependentError(f"{name} is disabled by fnx.compiler.disable{why}: a "
                                     f"trace cannot call it, so the compiled function runs "
                                     f"eagerly")
        return fn(*args, **kwargs)
    return run_eagerly
