"""A compiled step's small gradients as one program output, made into tensors when read.

A PyTorch-style training step keeps every parameter's gradient in ``.grad``, so its
program returns one output per parameter. On a small model each output costs more than
its arithmetic: JAX makes a ``jax.Array`` for it, fnx takes and gives a buffer, and the
tensor is updated (about 1.5 us per output on a 2-core CPU, where the whole step of a
64-128-128-10 MLP is ~60 us). ``ProgramPlan`` therefore packs the gradients of a step,
when they are small and of one dtype (``packable``), into a single flat output
(``Program.packing``). Each parameter's ``_grad`` then holds a ``PackedGrad``, a
``fnx.core.tensor.LazyGrad`` naming its slice; the first read of the value (``.grad``,
accumulation, an optimizer outside the step) makes it a tensor of its own, a private
copy of the slice. A step whose gradients nobody read takes no per-parameter work at
all, and the next call gives the old array back to the program as the buffer for the
new one.

>>> import fnx
>>> model = fnx.nn.Linear(3, 2)
>>> opt = fnx.optim.SGD(model.parameters(), lr=0.1)
>>> @fnx.compile
... def step(x):
...     opt.zero_grad()
...     model(x).sum().backward()
...     opt.step()
>>> for _ in range(3):
...     step(fnx.ones(4, 3))
>>> type(model.weight._grad).__name__                  # packed with the bias's
'PackedGrad'
>>> model.weight.grad.tolist()                         # read: a tensor from now on
[[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..backends.cpu import wrap
from ..core.tensor import LazyGrad

__all__ = ["GradPack", "PackedGrad", "packable", "PACK_BYTES"]

# Packing copies the gradients once more (the concatenation) to save a program output
# per parameter: worth it while the copy costs less than the outputs it saves, on a CPU
# about this many bytes per output saved.
PACK_BYTES = 32 * 1024

_getrefcount = sys.getrefcount


def packable(grad_outs) -> bool:
    """Whether the gradient outputs ``grad_outs`` (``ProgramPlan.grad_outs`` entries:
    input, output, storage key, dtype, device, shape) are worth packing: two or more
    resident CPU gradients of one dtype, small enough (``PACK_BYTES``)."""
    if len(grad_outs) < 2 or len({k for _, k, *_ in grad_outs}) != len(grad_outs):
        return False
    dtype = grad_outs[0][3]
    if any(key != "_jax" or dt is not dtype for _, _, key, dt, _, _ in grad_outs):
        return False
    size = sum(math.prod(shape) for *_, shape in grad_outs) * dtype.itemsize
    return size <= (len(grad_outs) - 1) * PACK_BYTES


class GradPack:
    """The packed gradients of one compiled entry: ``inputs`` (the parameters' input
    positions) in packing order, each one's slice of ``array`` (the last call's output),
    and the ``PackedGrad`` each parameter's ``_grad`` holds while nothing read it."""

    def __init__(self, inputs, dtype, shapes):
        self.inputs = list(inputs)
        self.dtype = dtype
        self.layout = []            # (offset, size, shape) per gradient
        offset = 0
        for shape in shapes:
            size = math.prod(shape)
            self.layout.append((offset, size, tuple(shape)))
            offset += size
        self.array = None
        self.viewed = False         # a NumPy view of ``array`` was made (it stays alive)
        self.markers = [PackedGrad(self, k) for k in range(len(self.inputs))]

    def sink(self, inputs):
        """The last call's array when the program may write the new gradients into its
        buffer: nothing read it since and nothing but this pack holds it; else None."""
        if self.array is None:
            self._adopt(inputs)
        a = self.array
        # references: ``self.array``, ``a``, getrefcount's argument
        if a is None or self.viewed or _getrefcount(a) != 3:
            return None
        return a

    def _adopt(self, inputs) -> None:
        """On this pack's first call, take over the packed gradients of another pack of the
        same layout whose slices the parameters' ``.grad`` all still are (another entry of
        the same step: its first call ran with every ``.grad`` None), so its array is given
        to this program as the buffer for the new ones."""
        first = inputs[self.inputs[0]]._grad
        other = first.pack if first.__class__ is PackedGrad else None
        if other is None or other is self or other.layout != self.layout or \
                other.dtype is not self.dtype or \
                any(inputs[i]._grad is not m for i, m in zip(self.inputs, other.markers)):
            return
        self.array, self.viewed = other.array, other.viewed
        other.array = None
        for i, marker in zip(self.inputs, self.markers):
            inputs[i]._grad = marker

    def assign(self, inputs, array) -> None:
        """The new gradients ``array``: each parameter's ``.grad`` becomes its slice (the
        caller made sure no trace records ``.grad`` writes: ``tls.state.grad_log``)."""
        self.array = array
        self.viewed = False
        for i, marker in zip(self.inputs, self.markers):
            t = inputs[i]
            if t._grad is not marker:
                t._grad = marker

    def tensors(self, array) -> list:
        """The gradients in ``array`` as tensors of their own (for a call whose ``.grad``
        writes a trace records)."""
        host = np.asarray(array)
        return [wrap(host[off:off + n].reshape(shape).copy(), self.dtype)
                for off, n, shape in self.layout]


class PackedGrad(LazyGrad):
    """``.grad`` of the ``index``-th parameter of ``pack``: its slice of ``pack.array``,
    made into a tensor (a private NumPy copy: later steps reuse the array) on first read."""
    __slots__ = ("pack", "index")

    def __init__(self, pack, index):
        self.pack = pack
        self.index = index

    def tensor(self):
        pack = self.pack
        off, n, shape = pack.layout[self.index]
        pack.viewed = True
        host = np.asarray(pack.array)       # (waits for the program that computed it)
        return wrap(host[off:off + n].reshape(shape).copy(), pack.dtype)

    def __repr__(self):
        return f"PackedGrad({self.index} of {len(self.pack.inputs)})"
