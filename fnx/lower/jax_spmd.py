"""Programs that run as one SPMD program over a mesh of processes (collectives inside).

An op whose JAX rule is a collective (``psum``, ``all_gather``, ... over a named mesh
axis: ``fnx.distributed`` registers them for the ``_c10d_functional`` ops) also registers
a *mesh rule*: ``mesh_rules[op](*args, **kwargs)`` is the ``jax.sharding.Mesh`` its
collective runs over (one device per process, the axis its rule names). A program whose
graph holds such ops runs its whole body under ``jax.shard_map`` over that mesh: every
process runs the same program on its own values (each input is this process's value,
``P()`` over the mesh, with replication unchecked), and XLA runs the collectives inside
the program, between the compute that feeds them and the compute they feed.

Across processes a jitted program takes global arrays: ``to_global`` wraps each local
array as the process's block of one (no copy) and ``to_local`` takes the process's block
of each result. A mesh of this process's devices only takes the arrays as they are.

``node_checks[op](node) -> bool`` says whether one call of ``op`` can be lowered (an
all-to-all with uneven splits cannot: it runs eagerly between compiled regions).
"""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

__all__ = ["mesh_rules", "node_checks", "graph_mesh", "Spmd"]

mesh_rules: dict = {}       # op -> fn(*args, **kwargs) -> jax.sharding.Mesh
node_checks: dict = {}      # op -> fn(node) -> bool


def graph_mesh(graph):
    """The mesh ``graph``'s collectives run over, or None when it has none; a graph whose
    collectives name different meshes is refused."""
    meshes = []
    for n in graph.calls():
        rule = mesh_rules.get(n.target)
        if rule is not None:
            mesh = rule(*n.args, **n.kwargs)
            if all(mesh is not m for m in meshes):
                meshes.append(mesh)
    if len(meshes) > 1:
        raise NotImplementedError("fnx.compile: one compiled region runs collectives over "
                                  f"{len(meshes)} different process groups; compile them "
                                  "separately")
    return meshes[0] if meshes else None


class Spmd:
    """How a program of ``mesh`` is wrapped and fed."""

    def __init__(self, mesh):
        self.mesh = mesh
        self.sharding = NamedSharding(mesh, P())
        self.multi_process = not self.sharding.is_fully_addressable
        local = [d for d in mesh.devices.ravel() if d.process_index == jax.process_index()]
        self.device = local[0]

    def wrap(self, fn):
        """``fn`` (arrays -> list of arrays) as the body of a shard_map over the mesh."""
        return jax.shard_map(fn, mesh=self.mesh, in_specs=P(), out_specs=P(),
                             check_vma=False)

    def to_global(self, arrays):
        """The program's inputs: each local array as this process's block of a global one
        (Python scalars stay as they are: JAX replicates them)."""
        if not self.multi_process:
            return arrays
        out = []
        for a in arrays:
            if isinstance(a, (bool, int, float, complex)):
                out.append(a)
                continue
            if not isinstance(a, jax.Array) or a.devices() != {self.device}:
                with jax.enable_x64(True):
                    a = jax.device_put(np.asarray(a) if not isinstance(a, jax.Array) else a,
                                       self.device)
            out.append(jax.make_array_from_single_device_arrays(a.shape, self.sharding, [a]))
        return out

    def to_local(self, outs):
        """This process's block of each result."""
        if not self.multi_process:
            return outs
        return [o.addressable_data(0) for o in outs]
