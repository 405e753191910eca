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
from .lower import settings
from .lower.compiled_function import live_compiled_functions
from .lower.dynamic_shapes import mark_dynamic
from .lower.frontend import reset

__all__ = ["is_compiling", "is_dynamo_compiling", "suspend_tracing", "reset", "disable",
           "mark_dynamic", "set_cache_dir", "set_stance", "allow_in_graph",
           "assume_constant_result", "cudagraph_mark_step_begin"]


def is_dynamo_compiling() -> bool:
    """``is_compiling()`` (PyTorch's name for the same question under Dynamo)."""
    return is_compiling()


def allow_in_graph(fn):
    """``fn`` itself, as ``torch.compiler.allow_in_graph`` asks: fnx traces the ops a
    function runs rather than its bytecode, so every function whose ops can be traced is
    in the graph already.

    >>> import fnx
    >>> double = fnx.compiler.allow_in_graph(lambda x: x * 2)
    >>> fnx.compile(lambda x: double(x) + 1)(fnx.ones(1))
    tensor([3.])
    """
    return fn


def assume_constant_result(fn):
    """``fn`` itself: its result while tracing is baked into the program, as
    ``torch.compiler.assume_constant_result`` asks; fnx runs a function's Python once per
    trace anyway, so a value it computes without tensors is a constant of the program."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Nothing to do: fnx captures no CUDA graphs (``mode="reduce-overhead"`` compiles as
    every mode does), so no step boundary needs marking."""


class set_stance:
    """Set how compiled functions behave, as ``torch.compiler.set_stance``: as a call (from
    now on), a ``with`` block or a decorator (during the decorated function's calls).

    - ``"default"``: trace and compile as usual.
    - ``"force_eager"``: every compiled function runs its Python eagerly.
    - ``"eager_on_recompile"``: a call no compiled program fits runs eagerly instead of
      tracing again (a function's first trace is allowed).
    - ``"fail_on_recompile"``: such a call raises RuntimeError naming the guard that failed.
    - ``"eager_then_compile"``: a function's first call runs eagerly, later calls compile.

    ``skip_guard_eval_unsafe`` is accepted and has no effect (fnx always checks guards);
    ``force_backend`` is not supported.

    >>> import fnx
    >>> f = fnx.compile(lambda x: x + 1 if fnx.compiler.is_compiling() else x - 1)
    >>> with fnx.compiler.set_stance("force_eager"):
    ...     f(fnx.zeros(1))
    tensor([-1.])
    >>> f(fnx.zeros(1))
    tensor([1.])
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False,
                 force_backend=None):
        if is_compiling():
            raise RuntimeError("fnx.compiler.set_stance cannot be called inside a compiled "
                               "function")
        if stance not in settings.STANCES:
            raise ValueError(f"fnx.compiler.set_stance: unknown stance {stance!r}; one of "
                             f"{', '.join(settings.STANCES)}")
        if force_backend is not None:
            raise NotImplementedError("fnx.compiler.set_stance: force_backend is not "
                                      "supported; pass backend= to fnx.compile")
        self.stance = stance
        self.prior = _apply_stance(stance)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _apply_stance(self.prior)

    def __call__(self, fn):
        # decorating: the stance holds during the calls only, not from now on
        _apply_stance(self.prior)
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            prior = _apply_stance(stance)
            try:
                return fn(*args, **kwargs)
            finally:
                _apply_stance(prior)
        return with_stance


def _apply_stance(stance) -> str:
    """Set the stance; the one it replaces. Forcing eager drops every armed fast path,
    which would otherwise run the compiled program without asking."""
    if stance == "force_eager":
        for cf in list(live_compiled_functions):
            cf._fast = None
    return settings.replace_stance(stance)


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
    (with a warning; with ``fullgraph=True`` it is an error). ``recursive=False`` (PyTorch
    then compiles the functions ``fn`` calls) runs them eagerly too: the same values.

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
