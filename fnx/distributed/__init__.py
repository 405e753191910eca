"""``fnx.distributed``: process groups and collectives, as ``torch.distributed``, on JAX's
distributed runtime (its coordinator, and XLA's gloo CPU or NCCL GPU collectives).

Launch one process per device with ``python -m fnx.distributed.run --nproc-per-node N
script.py``; in the script, ``init_process_group()`` reads the environment it sets.

>>> import fnx, fnx.distributed as dist
>>> dist.is_initialized()
False
>>> dist.init_process_group("gloo", world_size=1, rank=0)
>>> t = fnx.tensor([1., 2.])
>>> dist.all_reduce(t, op=dist.ReduceOp.SUM); t
tensor([1., 2.])
>>> dist.destroy_process_group()
"""
from . import functional_ops  # noqa: F401  (defines the _c10d_functional ops)
from . import lowering  # noqa: F401  (their JAX rules: collectives inside compiled programs)
from . import fsdp  # noqa: F401  (fnx.distributed.fsdp.fully_shard)
from .collectives import (Work, all_gather, all_gather_into_tensor, all_reduce,
                          all_to_all_single, barrier, broadcast, reduce_scatter_tensor)
from .device_mesh import DeviceMesh, init_device_mesh
from .dtensor import DTensor, Replicate, Shard, distribute_module, distribute_tensor
from .process_group import (Backend, GroupMember, ProcessGroup, ReduceOp, destroy_process_group,
                            get_backend, get_rank, get_world_size, init_process_group,
                            is_available, is_initialized, new_group)

__all__ = ["DeviceMesh", "init_device_mesh", "DTensor", "Replicate", "Shard",
           "distribute_tensor", "distribute_module", "Backend", "GroupMember", "ProcessGroup",
           "ReduceOp", "Work", "all_gather",
           "all_gather_into_tensor", "all_reduce", "all_to_all_single", "barrier", "broadcast",
           "destroy_process_group", "get_backend", "get_rank", "get_world_size",
           "init_process_group", "is_available", "is_initialized", "new_group",
           "reduce_scatter_tensor"]
