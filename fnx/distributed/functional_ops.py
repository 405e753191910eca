"""The collectives as operators, so programs that call them trace and compile.

They live in the ``_c10d_functional`` namespace (PyTorch's functional collectives):
each takes its input and returns a new tensor (``fnx.ops._c10d_functional.all_reduce(x,
"sum", "0")``), with a Meta kernel for tracing and a CPU/CUDA kernel that runs the eager
collective. Their JAX rules (``lowering.py``) put them inside compiled programs: a
compiled training step with DDP in it is one XLA program, run by every process as an SPMD
program over the group's mesh. While tracing, the in-place API (``dist.all_reduce(t)``)
records the op and a copy back into ``t``.

>>> import fnx, fnx.distributed as dist
>>> dist.init_process_group("gloo", world_size=1, rank=0)
>>> fnx.ops._c10d_functional.all_reduce(fnx.tensor([1., 2.]), "sum", "0")
tensor([1., 2.])
>>> dist.destroy_process_group()
"""
from __future__ import annotations

from .. import api as fnx
from .. import library
from . import collectives as C
from .process_group import ReduceOp, group_by_name

__all__ = ["OPS"]

_lib = library.Library("_c10d_functional", "DEF")
for _schema in (
        "all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
        "broadcast(Tensor input, int src, str group_name) -> Tensor",
        "all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor",
        "reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name)"
        " -> Tensor",
        "all_to_all_single(Tensor input, int[] output_split_sizes, int[] input_split_sizes,"
        " str group_name) -> Tensor",
        "wait_tensor(Tensor tensor) -> Tensor"):
    _lib.define(_schema)
OPS = fnx.ops._c10d_functional


def _all_reduce(x, reduce_op, group_name):
    out = x.clone()
    C.all_reduce(out, ReduceOp(reduce_op), group=group_by_name(group_name))
    return out


def _broadcast(x, src, group_name):
    out = x.clone()
    C.broadcast(out, src, group=group_by_name(group_name))
    return out


def _gathered_shape(x, group_size):
    return (group_size * x.shape[0],) + tuple(x.shape[1:]) if x.dim() else (group_size,)


def _all_gather_into_tensor(x, group_size, group_name):
    out = x.new_empty(_gathered_shape(x, group_size))
    C.all_gather_into_tensor(out, x, group=group_by_name(group_name))
    return out


def _reduce_scatter_tensor(x, reduce_op, group_size, group_name):
    out = x.new_empty((x.shape[0] // group_size,) + tuple(x.shape[1:]))
    C.reduce_scatter_tensor(out, x, ReduceOp(reduce_op), group=group_by_name(group_name))
    return out


def _all_to_all_single(x, output_split_sizes, input_split_sizes, group_name):
    rows = sum(output_split_sizes) if output_split_sizes else x.shape[0]
    out = x.new_empty((rows,) + tuple(x.shape[1:]))
    C.all_to_all_single(out, x, list(output_split_sizes) or None,
                        list(input_split_sizes) or None, group=group_by_name(group_name))
    return out


def _meta(shape_of):
    return lambda x, *a: x.new_empty(shape_of(x, *a))


_KERNELS = {
    "all_reduce": (_all_reduce, lambda x, *a: tuple(x.shape)),
    "broadcast": (_broadcast, lambda x, *a: tuple(x.shape)),
    "all_gather_into_tensor": (_all_gather_into_tensor,
                               lambda x, n, g: _gathered_shape(x, n)),
    "reduce_scatter_tensor": (_reduce_scatter_tensor,
                              lambda x, r, n, g: (x.shape[0] // n,) + tuple(x.shape[1:])),
    "all_to_all_single": (_all_to_all_single,
                          lambda x, o, i, g: ((sum(o) if o else x.shape[0]),)
                          + tuple(x.shape[1:])),
}
for _name, (_kernel, _shape) in _KERNELS.items():
    _lib.impl(_name, _kernel, "CPU")
    _lib.impl(_name, _kernel, "CUDA")
    _lib.impl(_name, _meta(_shape), "Meta")
for _key in ("CPU", "CUDA", "Meta"):
    _lib.impl("wait_tensor", lambda x: x, _key)       # the kernels above are synchronous
