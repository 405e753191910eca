"""``DeviceMesh``: devices arranged in an n-dimensional grid with named dims, as PyTorch's,
for single-process SPMD: one process drives every device of the mesh (JAX's way), so the
mesh's entries index this process's devices of ``device_type`` (``"cpu"``: JAX's CPU
devices, several with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``; ``"cuda"``:
its GPUs). It is a ``jax.sharding.Mesh`` underneath (``jax_mesh``).

>>> import fnx.distributed as dist
>>> mesh = dist.init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
>>> mesh.shape, mesh.mesh_dim_names, mesh.size()
((1,), ('dp',), 1)
"""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh

__all__ = ["DeviceMesh", "init_device_mesh"]


def _platform_devices(device_type):
    platform = {"cpu": "cpu", "cuda": "gpu"}.get(device_type)
    if platform is None:
        raise ValueError(f"DeviceMesh: device_type must be 'cpu' or 'cuda', got "
                         f"{device_type!r}")
    try:
        return jax.devices(platform)
    except RuntimeError as e:
        raise RuntimeError(f"DeviceMesh: no {device_type} devices: {e}") from None


class DeviceMesh:
    """A grid of devices: ``mesh`` holds device indices (nested lists or an array)."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None):
        self.device_type = device_type
        ids = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        devices = _platform_devices(device_type)
        if ids.size == 0 or ids.min() < 0 or ids.max() >= len(devices):
            raise ValueError(f"DeviceMesh: device indices must be in [0, {len(devices)}) "
                             f"({len(devices)} {device_type} devices), got {ids.tolist()}")
        if len(set(ids.ravel().tolist())) != ids.size:
            raise ValueError(f"DeviceMesh: a device appears twice in {ids.tolist()}")
        names = tuple(mesh_dim_names) if mesh_dim_names is not None else \
            tuple(f"dim{i}" for i in range(ids.ndim))
        if len(names) != ids.ndim or len(set(names)) != len(names):
            raise ValueError(f"DeviceMesh: mesh_dim_names {names} must name each of the "
                             f"{ids.ndim} dims once")
        self.mesh = ids
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        self.axis_names = names
        self.jax_mesh = Mesh(np.array([devices[i] for i in ids.ravel()],
                                      dtype=object).reshape(ids.shape), names)

    @property
    def shape(self):
        return tuple(self.mesh.shape)

    @property
    def ndim(self):
        return self.mesh.ndim

    def size(self, mesh_dim=None) -> int:
        return int(self.mesh.size if mesh_dim is None else self.mesh.shape[mesh_dim])

    def __repr__(self):
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self.mesh.tolist()}{names})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None) -> DeviceMesh:
    """A mesh of the first ``prod(mesh_shape)`` devices of ``device_type``, in order."""
    shape = tuple(int(s) for s in mesh_shape)
    return DeviceMesh(device_type, np.arange(int(np.prod(shape))).reshape(shape),
                      mesh_dim_names=mesh_dim_names)
