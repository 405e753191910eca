"""``fnx.jit``: PyTorch's TorchScript names, behaving as PyTorch does with its JIT turned off
(``PYTORCH_JIT=0``): ``script`` and ``trace`` give back the function or module they are
given, which then runs as Python; ``is_scripting()`` and ``is_tracing()`` are False, so
model code takes its Python branches; ``ignore``, ``unused``, ``export``, ``interface`` and
``script_if_tracing`` leave what they decorate as it is; ``annotate`` returns its value;
``fork``/``wait`` run the call at once. Code written for TorchScript (timm's
``if torch.jit.is_scripting():``, a ``@torch.jit.script`` helper) therefore ports
unchanged. fnx's compiler is ``fnx.compile``, and its portable program format is
``fnx.export``: a TorchScript archive (``jit.save``/``jit.load``) is refused with a
pointer to them.

>>> import fnx
>>> @fnx.jit.script
... def double(x):
...     return x * 2
>>> double(fnx.tensor([1.0, 2.0])).tolist(), fnx.jit.is_scripting()
([2.0, 4.0], False)
"""
from __future__ import annotations

import contextlib
from typing import Final

__all__ = ["script", "trace", "trace_module", "is_scripting", "is_tracing", "ignore", "unused",
           "export", "interface", "script_if_tracing", "annotate", "fork", "wait", "Final",
           "optimized_execution", "save", "load"]


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (PyTorch with its JIT off): it runs as Python.

    >>> import fnx
    >>> m = fnx.nn.Linear(2, 2)
    >>> fnx.jit.script(m) is m
    True
    """
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """``func`` itself (PyTorch with its JIT off): it runs as Python on any input.

    >>> import fnx
    >>> f = fnx.jit.trace(lambda x: x + 1, fnx.zeros(2))
    >>> f(fnx.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    return func


def trace_module(mod, inputs=None, *args, **kwargs):
    """``mod`` itself (PyTorch with its JIT off).

    >>> import fnx
    >>> m = fnx.nn.ReLU()
    >>> fnx.jit.trace_module(m, {"forward": fnx.zeros(1)}) is m
    True
    """
    return mod


def is_scripting() -> bool:
    """False: fnx never runs code as TorchScript.

    >>> import fnx
    >>> fnx.jit.is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """False: fnx never runs code under the TorchScript tracer (``fnx.compiler.is_compiling``
    says whether ``fnx.compile`` is tracing).

    >>> import fnx
    >>> fnx.jit.is_tracing()
    False
    """
    return False


def _identity_decorator(doc_name):
    def decorator(fn=None, **kwargs):
        if fn is None or isinstance(fn, bool):      # @ignore(drop=True), @unused(...)
            return lambda f: f
        return fn
    decorator.__name__ = decorator.__qualname__ = doc_name
    decorator.__doc__ = (f"What it decorates, unchanged (TorchScript's ``@{doc_name}``: with "
                         f"no TorchScript compiler, there is nothing to leave out or add).\n\n"
                         f"    >>> import fnx\n"
                         f"    >>> @fnx.jit.{doc_name}\n"
                         f"    ... def f(x):\n"
                         f"    ...     return x + 1\n"
                         f"    >>> f(1)\n    2\n")
    return decorator


ignore = _identity_decorator("ignore")
unused = _identity_decorator("unused")
export = _identity_decorator("export")
interface = _identity_decorator("interface")
script_if_tracing = _identity_decorator("script_if_tracing")


def annotate(the_type, the_value):
    """``the_value`` (a type hint for the TorchScript compiler).

    >>> import fnx
    >>> fnx.jit.annotate(list, [])
    []
    """
    return the_value


class _Done:
    """The result of ``fork``: the call has run already."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` now; the returned future's ``wait()`` gives its result
    (TorchScript would run it asynchronously; in Python it runs in place, as PyTorch's
    eager ``fork`` does).

    >>> import fnx
    >>> fnx.jit.wait(fnx.jit.fork(pow, 2, 5))
    32
    """
    return _Done(func(*args, **kwargs))


def wait(future):
    """The result of a ``fork``."""
    return future.wait()


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context with no effect (it steers TorchScript's executor).

    >>> import fnx
    >>> with fnx.jit.optimized_execution(False):
    ...     pass
    """
    yield


def save(m, f, _extra_files=None):
    """Refused: fnx writes no TorchScript archives. ``fnx.save(m.state_dict(), f)`` keeps
    the weights, ``fnx.export.export(m, args).save(f)`` a portable program."""
    raise NotImplementedError("fnx.jit.save: fnx has no TorchScript archives; save the "
                              "weights with fnx.save(model.state_dict(), f) or a portable "
                              "program with fnx.export.save(fnx.export.export(model, args), f)")


def load(f, map_location=None, _extra_files=None):
    """Refused: fnx reads no TorchScript archives (see ``save``)."""
    raise NotImplementedError("fnx.jit.load: fnx cannot read TorchScript archives; load "
                              "weights with fnx.load or a program with fnx.export.load")


