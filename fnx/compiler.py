"""``fnx.compiler``: asking about and stepping outside an ``fnx.compile`` trace, as
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
from .graph.tracer import is_compiling, suspend_tracing

__all__ = ["is_compiling", "suspend_tracing"]
