"""``fnx.compile``, the front door: ``torch.compile``'s keywords, what a module compiles to,
and forgetting every compiled program (``reset``).

The keywords are checked here and turned into a ``CompiledFunction``'s settings; a model of
a registered class (``fnx.nn.Module``, registered by ``fnx.nn`` with
``register_compile_wrapper``, since this layer cannot import it) is wrapped by what the
class registered, so ``fnx.compile(model)`` is again a module.
"""
from __future__ import annotations

import functools

from . import precision
from .compiled_function import CompiledFunction, live_compiled_functions
from .target import targets

__all__ = ["compile", "register_compile_wrapper", "reset", "MODES", "OPTIONS"]

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
"""``torch.compile``'s modes. fnx accepts each and compiles the same way for all: XLA picks
its own kernels, and there are no CUDA graphs to capture."""

OPTIONS = {"max_autotune": bool, "max_autotune_gemm": bool, "max_autotune_pointwise": bool,
           "coordinate_descent_tuning": bool, "epilogue_fusion": bool, "shape_padding": bool,
           "freezing": bool, "aggressive_fusion": bool, "triton.cudagraphs": bool,
           "triton.cudagraph_trees": bool, "trace.enabled": bool, "trace.graph_diagram": bool,
           "cache_limit": int, "decompose": str, "value_checks": bool}
"""The ``options=`` keys fnx accepts, with the type each value must have. ``cache_limit``
and ``decompose`` are honored (as the keywords of the same names), and ``value_checks``
(default True) turns off the checks compiled into the program (out-of-range indices and
targets raise PyTorch's error, as in eager; off, they give unspecified values, as
``jax.numpy`` does); the others are Inductor's tuning and debugging switches, accepted
so PyTorch code runs, with no effect."""

_BACKENDS = {"inductor": "jax", "eager": "interpreter", "aot_eager": "interpreter"}
_wrappers: list = []        # (class, wrap): fnx.nn registers (Module, OptimizedModule)


def register_compile_wrapper(cls, wrap) -> None:
    """Make ``fnx.compile(obj)`` return ``wrap(obj, make)`` for an instance of ``cls``;
    ``make(fn)`` returns the ``CompiledFunction`` of ``fn`` with the call's settings."""
    _wrappers.append((cls, wrap))


def compile(model=None, *, fullgraph=False, dynamic=None, backend="jax", mode=None,
            options=None, disable=False, recompile_limit=None, decompose="prims",
            cache_limit=None):
    """Compile a function or module, as ``torch.compile``: traced on the first call (and
    for each new set of guards), lowered and jitted per region.

    A function gives a ``CompiledFunction``; a ``nn.Module`` gives a module
    (``OptimizedModule``) sharing the original's parameters and buffers, whose
    ``state_dict`` has the original's keys. Works as a call, as ``@fnx.compile`` and as
    ``@fnx.compile(...)``.

    Keywords, as fnx reads them:

    - ``backend``: a lowering target's name (``"jax"``, ``"interpreter"``, or one
      registered with ``fnx.lower.register_target``); PyTorch's ``"inductor"`` means
      ``"jax"``, ``"eager"`` and ``"aot_eager"`` mean ``"interpreter"``. A callable backend
      (a function of an FX graph) is not supported: NotImplementedError.
    - ``mode``: any of ``MODES``; all compile alike. ``options``: a dict of ``OPTIONS`` keys
      (not together with ``mode``, as in PyTorch); an unknown key is a RuntimeError.
    - ``fullgraph=True``: an op with no lowering or data-dependent control flow is an error
      instead of an eager fallback. ``dynamic``: ``None`` (default) traces a dim that
      took a third value once with a symbolic size, and later sizes reuse that graph (its
      guards checked, sizes substituted, only XLA compiles; ``fnx.lower.dynamic_shapes``);
      ``True`` makes every dim of every tensor argument symbolic from the first call;
      ``False`` specializes every shape.
    - ``disable=True`` returns ``model`` itself. ``recompile_limit`` is PyTorch's name for
      ``cache_limit``: after that many specializations, a call that none of them fits
      runs eagerly (the compiled ones keep serving theirs). Not given, it is
      ``fnx._dynamo.config.recompile_limit`` (8) when the function recompiles.
    - ``decompose``: the level traced graphs are decomposed to (``"prims"``, ``"core"``,
      ``"aten"``).

    >>> import fnx
    >>> w = fnx.tensor([[1., 2.], [3., 4.]])
    >>> f = fnx.compile(lambda x: (x @ w).relu().sum(-1))
    >>> f(fnx.tensor([[1., -1.]]))
    tensor([0.])
    >>> w.add_(1)
    tensor([[2., 3.],
            [4., 5.]])
    >>> f(fnx.tensor([[2., 1.]]))        # parameters are inputs, not constants
    tensor([19.])
    >>> @fnx.compile(mode="max-autotune", fullgraph=True)
    ... def g(x):
    ...     return x.exp() - 1
    >>> g(fnx.zeros(2))
    tensor([0., 0.])
    >>> h = fnx.compile(lambda x: x.cumsum(0), dynamic=True)
    >>> h(fnx.ones(3)), h(fnx.ones(5))
    (tensor([1., 2., 3.]), tensor([1., 2., 3., 4., 5.]))
    >>> h.dynamic_traces()               # one trace served both sizes
    1
    >>> model = fnx.nn.Linear(2, 1)
    >>> fnx.compile(model, disable=True) is model
    True
    >>> compiled = fnx.compile(model)
    >>> isinstance(compiled, fnx.nn.Module), compiled.weight is model.weight
    (True, True)
    """
    settings = _settings(fullgraph, dynamic, backend, mode, options, recompile_limit,
                         decompose, cache_limit)

    # a partial, not a closure: a compiled module reads its settings back (to be saved)
    make = functools.partial(CompiledFunction, **settings)

    def apply(fn):
        if disable:
            return fn
        if fn is None:
            raise RuntimeError("Model can't be None")
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is "
                                 f"provided.")
        for cls, wrap in _wrappers:
            if isinstance(fn, cls):
                return wrap(fn, make)
        return make(fn)

    return apply if model is None else apply(model)


def _settings(fullgraph, dynamic, backend, mode, options, recompile_limit, decompose,
              cache_limit) -> dict:
    """``CompiledFunction``'s keywords from ``compile``'s, each checked."""
    if dynamic is not None and not isinstance(dynamic, bool):
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    options = _check_options(options)
    decompose = options.get("decompose", decompose)
    if decompose not in ("prims", "core", "aten"):
        raise ValueError(f"fnx.compile: decompose must be 'prims', 'core' or 'aten', got "
                         f"{decompose!r}")
    if recompile_limit is not None:
        cache_limit = recompile_limit
    cache_limit = options.get("cache_limit", cache_limit)
    if cache_limit is not None and (isinstance(cache_limit, bool) or
                                    not isinstance(cache_limit, int) or cache_limit < 0):
        raise ValueError(f"fnx.compile: the recompile limit must be an int >= 0, got "
                         f"{cache_limit!r}")
    return {"backend": _backend(backend), "decompose": decompose, "dynamic": dynamic,
            "fullgraph": bool(fullgraph), "cache_limit": cache_limit,
            "value_checks": options.get("value_checks", True)}


def _check_options(options) -> dict:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"fnx.compile: options must be a dict, got {type(options).__name__}")
    for key, value in options.items():
        kind = OPTIONS.get(key)
        if kind is None:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{sorted(OPTIONS)}")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} "
                               f"should be {kind.__name__}")
    return options


def _backend(backend) -> str:
    if backend is None:
        return "jax"
    if not isinstance(backend, str):
        if callable(backend):
            raise NotImplementedError(
                "fnx.compile: a callable backend (a compiler of FX graphs) is not supported; "
                "register a lowering target with fnx.lower.register_target and pass its name")
        raise TypeError(f"fnx.compile: backend must be a str, got {type(backend).__name__}")
    name = _BACKENDS.get(backend, backend)
    if name not in targets():
        raise RuntimeError(f"Invalid backend: {backend!r}, see fnx.lower.targets() for "
                           f"available backends.")
    return name


@precision.on_change
def reset() -> None:
    """Forget every compiled program of every ``CompiledFunction`` (and any decision to run
    one eagerly): the next call of each traces and compiles again."""
    for cf in list(live_compiled_functions):
        cf.cache.clear()
        cf._fast = None
        cf._dynamic_shapes.clear()
        cf._eager_reason = None
        cf._warned.clear()
        cf._traced = cf._ran_eagerly = False
