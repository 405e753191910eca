"""``fnx.ops.<namespace>.<op>.<overload>``: every operator, by its ATen name.

>>> import fnx
>>> fnx.ops.aten.mul.Tensor(fnx.tensor([1, 2]), 3)
tensor([3, 6])
"""
from .dispatch.dispatcher import ops as _ops

aten = _ops.namespace("aten")
prims = _ops.namespace("prims")


def __getattr__(name):
    return getattr(_ops, name)
