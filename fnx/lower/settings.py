"""Process-wide settings of ``fnx.compile``, under PyTorch's names: ``fnx._dynamo.config``,
``fnx._inductor.config`` and the compiler's stance (``fnx.compiler.set_stance``).

A ``Settings`` knows its keys and their types: setting an unknown key is an
AttributeError and a value of the wrong type a TypeError, as PyTorch's config modules
answer, so a misspelt switch is never silently ignored. ``patch`` changes some for a
``with`` block or a decorated function. ``DYNAMO`` holds the switches
``CompiledFunction`` reads (``HONORED``), and ``INDUCTOR`` one, ``fallback_random``; the
others tune how Dynamo traces or how Inductor generates kernels, which fnx does its own way
(XLA picks the kernels): they are accepted, so PyTorch scripts run, and change nothing.
Setting ``fallback_random`` bumps ``guards.state_version``: programs traced under the
other value are not reused.

>>> DYNAMO.cache_size_limit
8
>>> with DYNAMO.patch(cache_size_limit=2):
...     DYNAMO.cache_size_limit
2
>>> DYNAMO.cache_size_limt = 3
Traceback (most recent call last):
...
AttributeError: fnx._dynamo.config.cache_size_limt does not exist
"""
from __future__ import annotations

import contextlib

from ..graph import guards

__all__ = ["Settings", "DYNAMO", "INDUCTOR", "HONORED", "STANCES", "stance"]


class Settings:
    """A namespace of typed switches (``spec``: ``{key: default}``; a dotted key makes a
    nested namespace, ``triton.cudagraphs``)."""

    def __init__(self, name: str, spec: dict, aliases=None, on_change=None):
        object.__setattr__(self, "_aliases", dict(aliases or {}))
        object.__setattr__(self, "_on_change", on_change)   # (key) -> None, after a set
        nested = {}
        values = {}
        for key, default in spec.items():
            head, dot, rest = key.partition(".")
            if dot:
                nested.setdefault(head, {})[rest] = default
            else:
                values[key] = default
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", values)
        for head, sub in nested.items():
            values[head] = Settings(f"{name}.{head}", sub)

    def __getattr__(self, key):
        try:
            return self._values[self._aliases.get(key, key)]
        except KeyError:
            raise AttributeError(f"{self._name}.{key} does not exist") from None

    def __setattr__(self, key, value):
        key = self._aliases.get(key, key)
        if key not in self._values or isinstance(self._values[key], Settings):
            raise AttributeError(f"{self._name}.{key} does not exist")
        kind = type(self._values[key])
        if not _fits(value, kind):
            raise TypeError(f"{self._name}.{key} must be a {kind.__name__}, got "
                            f"{type(value).__name__}")
        changed = self._values[key] != value
        self._values[key] = value
        if changed and self._on_change is not None:
            self._on_change(key)

    def keys(self) -> list:
        return [k for k, v in self._values.items() if not isinstance(v, Settings)] + \
            [f"{k}.{s}" for k, v in self._values.items() if isinstance(v, Settings)
             for s in v.keys()]

    @contextlib.contextmanager
    def _patched(self, changes):
        old = {k: self._get(k) for k in changes}
        try:
            for k, v in changes.items():
                self._set(k, v)
            yield
        finally:
            for k, v in old.items():
                self._set(k, v)

    def patch(self, changes=None, **kwargs):
        """Change some switches for a ``with`` block or a decorated function (a dict or
        keywords; dotted keys reach nested switches), then put them back."""
        return self._patched({**(changes or {}), **kwargs})

    def _get(self, key):
        head, dot, rest = key.partition(".")
        return getattr(self, head)._get(rest) if dot else getattr(self, key)

    def _set(self, key, value):
        head, dot, rest = key.partition(".")
        if dot:
            getattr(self, head)._set(rest, value)
        else:
            setattr(self, key, value)

    def __repr__(self):
        return f"<{self._name}: {len(self.keys())} switches>"


def _fits(value, kind) -> bool:
    """Whether ``value`` may be set where the default is a ``kind`` (no bool for an int,
    an int for a float)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return isinstance(value, (int, kind)) and not isinstance(value, bool)
    return isinstance(value, kind)


DYNAMO = Settings("fnx._dynamo.config", {
    # honored (HONORED says how)
    "recompile_limit": 8, "automatic_dynamic_shapes": True,
    "assume_static_by_default": True, "suppress_errors": False, "error_on_recompile": False,
    "specialize_int": False,
    # accepted, no effect: fnx traces every op it meets (no bytecode analysis to tune)
    "accumulated_recompile_limit": 256,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "specialize_float": False, "optimize_ddp": True,
    "inline_inbuilt_nn_modules": True, "guard_nn_modules": False, "verbose": False,
    "force_parameter_static_shapes": True, "allow_unspec_int_on_nn_module": False,
    "skip_nnmodule_hook_guards": True, "log_compilation_metrics": True,
    "prefer_deferred_runtime_asserts_over_guards": False,
}, aliases={"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"})

HONORED = {
    "recompile_limit": "the default cache_limit of every compiled function not given one "
                       "(cache_size_limit is its older name)",
    "automatic_dynamic_shapes": "False: a dim is traced symbolically only when marked "
                                "(mark_dynamic) or with dynamic=True",
    "assume_static_by_default": "False: dynamic=None acts as dynamic=True",
    "suppress_errors": "True: an error while tracing or compiling runs the function "
                       "eagerly, with a warning, instead of raising",
    "error_on_recompile": "True: a recompilation raises (set_stance('fail_on_recompile'))",
    "specialize_int": "True: an int argument is never traced as a symbol (each value is "
                      "its own specialization)",
}

def _inductor_changed(key) -> None:
    if key == "fallback_random":
        guards.bump()


INDUCTOR = Settings("fnx._inductor.config", {
    # honored: compiled samplers (rand, dropout's bernoulli, multinomial) run eager's
    # kernels at graph breaks, so they draw eager's numbers (graph_breaks.BreakTracer)
    "fallback_random": False} | {
    key: False for key in (
        "max_autotune", "max_autotune_gemm", "max_autotune_pointwise",
        "coordinate_descent_tuning", "epilogue_fusion", "shape_padding", "freezing",
        "aggressive_fusion", "fx_graph_cache", "fx_graph_remote_cache", "autotune_local_cache",
        "force_fuse_int_mm_with_mul", "use_mixed_mm", "cpp_wrapper", "benchmark_kernel",
        "conv_1x1_as_mm", "debug", "split_reductions", "triton.unique_kernel_names",
        "triton.cudagraphs", "triton.cudagraph_trees", "triton.use_block_ptr",
        "triton.cudagraph_skip_dynamic_graphs", "trace.enabled", "trace.graph_diagram",
        "cpp.enable_kernel_profile")} | {"compile_threads": 1, "realize_opcount_threshold": 30},
    on_change=_inductor_changed)

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
           "eager_then_compile")
_stance = ["default"]


def stance() -> str:
    """The compiler's stance now (``fnx.compiler.set_stance``)."""
    return _stance[0]


def replace_stance(value: str) -> str:
    """Set the stance; the one it replaces."""
    old, _stance[0] = _stance[0], value
    return old
