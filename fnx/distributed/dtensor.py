"""Distributed tensors for single-process SPMD: ``distribute_tensor`` places a tensor on a
``DeviceMesh`` (``Shard(dim)``: split along ``dim`` over a mesh dim; ``Replicate()``: a
full copy on each) as a ``jax.Array`` with a ``NamedSharding``, so each device holds only
its block, and ``redistribute`` moves the blocks with XLA.

Not there yet: fnx ops on a ``DTensor`` (take ``full_tensor()`` or ``local_shards()``),
``Partial`` placements, ``distribute_module``, and compiling over DTensors.

>>> import fnx, fnx.distributed as dist
>>> mesh = dist.init_device_mesh("cpu", (1,))
>>> d = dist.distribute_tensor(fnx.arange(4.), mesh, [dist.Shard(0)])
>>> d.placements, d.shape, d.full_tensor()
((Shard(dim=0),), (4,), tensor([0., 1., 2., 3.]))
"""
from __future__ import annotations

import dataclasses

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import api as fnx
from .device_mesh import DeviceMesh

__all__ = ["Shard", "Replicate", "DTensor", "distribute_tensor"]


@dataclasses.dataclass(frozen=True)
class Shard:
    """Split the tensor's ``dim`` evenly over one mesh dim."""
    dim: int


@dataclasses.dataclass(frozen=True)
class Replicate:
    """A full copy on every device along one mesh dim."""


def _spec(shape, mesh, placements, op):
    if len(placements) != mesh.ndim:
        raise ValueError(f"{op}: {len(placements)} placements for a {mesh.ndim}-dim mesh")
    axes = [[] for _ in shape]
    for mesh_dim, p in enumerate(placements):
        if isinstance(p, Shard):
            d = p.dim + len(shape) if p.dim < 0 else p.dim
            if not 0 <= d < len(shape):
                raise IndexError(f"{op}: Shard({p.dim}) is out of range for a "
                                 f"{len(shape)}-dim tensor")
            axes[d].append(mesh.axis_names[mesh_dim])
        elif not isinstance(p, Replicate):
            raise TypeError(f"{op}: placements must be Shard or Replicate, got {p!r}")
    for d, names in enumerate(axes):
        parts = int(np.prod([mesh.jax_mesh.shape[n] for n in names])) if names else 1
        if shape[d] % parts:
            raise ValueError(f"{op}: dim {d} of size {shape[d]} does not split evenly into "
                             f"{parts} shards")
    return P(*[tuple(n) if len(n) > 1 else (n[0] if n else None) for n in axes])


class DTensor:
    """A tensor laid out over a ``DeviceMesh``; ``full_tensor()`` gathers it."""

    def __init__(self, array, dtype, device_mesh, placements):
        self._array = array             # a jax.Array with a NamedSharding over the mesh
        self.dtype = dtype
        self.device_mesh = device_mesh
        self.placements = tuple(placements)

    @property
    def shape(self):
        return tuple(self._array.shape)

    def full_tensor(self):
        """The whole tensor, gathered to the host (a CPU tensor)."""
        with jax.enable_x64(True):
            return fnx.from_numpy(np.array(self._array)).to(self.dtype)

    def local_shards(self):
        """Each device's block, in mesh order (CPU tensors)."""
        order = {d: i for i, d in enumerate(self.device_mesh.jax_mesh.devices.ravel())}
        shards = sorted(self._array.addressable_shards, key=lambda s: order[s.device])
        with jax.enable_x64(True):
            return [fnx.from_numpy(np.array(s.data)).to(self.dtype) for s in shards]

    def redistribute(self, device_mesh=None, placements=None):
        """The same values laid out by ``placements`` (XLA moves the blocks)."""
        mesh = device_mesh or self.device_mesh
        placements = placements or [Replicate()] * mesh.ndim
        spec = _spec(self.shape, mesh, placements, "redistribute")
        with jax.enable_x64(True):
            arr = jax.device_put(self._array, NamedSharding(mesh.jax_mesh, spec))
        return DTensor(arr, self.dtype, mesh, placements)

    def __repr__(self):
        return (f"DTensor(shape={self.shape}, dtype={self.dtype}, "
                f"placements={self.placements}, mesh={self.device_mesh})")


def distribute_tensor(tensor, device_mesh: DeviceMesh = None, placements=None) -> DTensor:
    """Place ``tensor`` on ``device_mesh`` by ``placements`` (default: replicated).

    Each device receives only its own block (``jax.device_put`` with a ``NamedSharding``).
    """
    if device_mesh is None:
        raise ValueError("distribute_tensor: give a device_mesh (init_device_mesh(...))")
    placements = list(placements) if placements is not None else \
        [Replicate()] * device_mesh.ndim
    spec = _spec(tuple(tensor.shape), device_mesh, placements, "distribute_tensor")
    host = np.ascontiguousarray(tensor.detach().cpu().numpy())
    with jax.enable_x64(True):
        arr = jax.device_put(host, NamedSharding(device_mesh.jax_mesh, spec))
    return DTensor(arr, tensor.dtype, device_mesh, placements)
