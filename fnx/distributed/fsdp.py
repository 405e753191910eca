"""``fully_shard``: fully sharded data parallelism in the style of PyTorch's FSDP2
(``torch.distributed.fsdp.fully_shard``), for single-process SPMD over a ``DeviceMesh``.

Each parameter becomes a DTensor sharded on dim 0 over the mesh (``Shard(0)``), so each
device holds 1/N of its bytes. As in FSDP2, a dim 0 that does not split evenly is padded
to a multiple of N (each device holds ceil(rows / N) rows, the last ones padding) while
the parameter keeps its shape (``.shape``, ``state_dict()``, ``full_tensor()``, the
optimizer's math): programs cut the padding off and pad the new values and gradients
again (``fnx.distributed.dtensor``); the optimizer's state is laid out as its parameter.
A step
compiled with ``fnx.compile`` is one program that XLA partitions by those layouts: it
gathers the parameters for the compute (all-gather) and reduce-scatters the gradients;
the new parameters and their ``.grad`` keep the ``Shard(0)`` layout (the compiled program
pins them to their inputs' layouts). Eager ops on the parameters run as programs over the
mesh too (``DTensor``).

``state_dict()`` gathers every DTensor into a full tensor (what a checkpoint holds);
``load_state_dict`` takes full tensors and lays each out as its parameter is.

>>> import fnx, fnx.distributed as dist
>>> from fnx.distributed.fsdp import fully_shard
>>> mesh = dist.init_device_mesh("cpu", (1,))
>>> m = fully_shard(fnx.nn.Linear(2, 2), mesh=mesh)
>>> m.weight.placements, type(m).__name__
((Shard(dim=0),), 'FSDPLinear')
>>> type(m.state_dict()["weight"]).__name__
'Tensor'
"""
from __future__ import annotations

import jax

from ..graph.tracer import is_compiling
from .device_mesh import init_device_mesh
from .dtensor import DTensor, Replicate, Shard, distribute_parameter, mixed_class

__all__ = ["fully_shard", "FSDPModule"]


class FSDPModule:
    """The class ``fully_shard`` mixes into the module's own (as PyTorch's FSDP2 does)."""

    def state_dict(self, *args, **kwargs):
        """The module's state dict with every DTensor gathered into a full tensor."""
        sd = super().state_dict(*args, **kwargs)
        for k, v in sd.items():
            if isinstance(v, DTensor):
                sd[k] = v.full_tensor()
        return sd


def _shard_grad(p):
    """After an eager backward, a padded parameter's gradient is padded and split as the
    parameter (a compiled step does so as its program returns)."""
    if not is_compiling():
        p._settle()


def fully_shard(module, *, mesh=None, reshard_after_forward=True):
    """Shard ``module``'s parameters on dim 0 over ``mesh`` (default: every device of the
    default platform in a 1-d mesh); returns ``module``, now also an ``FSDPModule``.
    ``reshard_after_forward`` is accepted for PyTorch's signature (XLA decides when the
    gathered parameters are freed)."""
    if mesh is None:
        kind = "cuda" if jax.default_backend() == "gpu" else "cpu"
        mesh = init_device_mesh(kind, (len(jax.devices()),))
    if mesh.ndim != 1:
        raise ValueError(f"fully_shard: a 1-d mesh is supported, got {mesh.ndim} dims")
    for p in module.parameters():
        if not isinstance(p, DTensor):
            distribute_parameter(p, mesh, [Shard(0) if p.dim() > 0 else Replicate()],
                                 pad=True)
            if "_rows" in p.__dict__ and p.requires_grad:
                p.register_post_accumulate_grad_hook(_shard_grad)
    for b in module.buffers():
        if not isinstance(b, DTensor):
            distribute_parameter(b, mesh, [Replicate()])
    module.__class__ = mixed_class(FSDPModule, type(module), "FSDP")
    return module
