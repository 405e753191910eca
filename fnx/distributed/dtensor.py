"""Distributed tensors for single-process SPMD: ``distribute_tensor`` places a tensor on a
``DeviceMesh`` (``Shard(dim)``: split along ``dim`` over a mesh dim; ``Replicate()``: a
full copy on each) as a ``jax.Array`` with a ``NamedSharding``, so each device holds only
its block, and ``redistribute`` moves the blocks with XLA.

A ``DTensor`` is an fnx ``Tensor`` whose storage is that array, kept resident (never
copied to one NumPy array behind its back), so:

- ``fnx.compile`` over DTensors (arguments or module parameters, ``distribute_module``)
  feeds the laid-out arrays to ``jax.jit`` as they are: XLA's SPMD partitioner (GSPMD)
  partitions the program by their shardings and inserts the collectives (a data-parallel
  step: batch ``Shard(0)``, parameters ``Replicate()``: the gradient all-reduce).
- an fnx op on a DTensor (it carries the Tracer key, which with no trace active hands the
  call to ``DTensor.__fnx_dispatch__``, as PyTorch's Python key does) runs as a one-op
  compiled program over the DTensors' arrays, so pointwise ops and matmul keep their
  layout, and returns DTensors with the layout XLA chose (``placements`` reads it off the
  array). An op that cannot compile runs on the gathered values (a plain tensor back).
  View ops return copies (a DTensor's blocks cannot be aliased), in-place ops rebind.

``fully_shard`` (``fnx.distributed.fsdp``) also shards a dim 0 that does not split
evenly: the storage is padded, the shape is not (see "An uneven Shard(0)" below).

Not there yet: ``Partial`` placements, ``to_local`` (one process drives every device:
see ``local_shards``).

>>> import fnx, fnx.distributed as dist
>>> mesh = dist.init_device_mesh("cpu", (1,))
>>> d = dist.distribute_tensor(fnx.arange(4.), mesh, [dist.Shard(0)])
>>> d.placements, tuple(d.shape), d.full_tensor()
((Shard(dim=0),), (4,), tensor([0., 1., 2., 3.]))
>>> (d * 2 + 1).full_tensor()
tensor([1., 3., 5., 7.])
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import warnings

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import api as fnx
from ..backends.cpu import wrap_resident
from ..core.dispatch_key import DispatchKey, below
from ..core.tensor import ResidentView, Tensor, grad_value, resident, set_resident
from .device_mesh import DeviceMesh

__all__ = ["Shard", "Replicate", "DTensor", "distribute_tensor", "distribute_module"]

_TRACER_BIT = 1 << DispatchKey.Tracer
_BELOW_TRACER = below(DispatchKey.Tracer)


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


def _placements(array, mesh):
    """The placements of ``array``'s layout over ``mesh`` (a mesh dim that splits none of
    its dims: ``Replicate``)."""
    sharding = array.sharding
    if not isinstance(sharding, NamedSharding):
        return (Replicate(),) * mesh.ndim
    where = {}
    for d, entry in enumerate(sharding.spec):
        for name in (entry if isinstance(entry, tuple) else (entry,)):
            if name is not None:
                where[name] = d
    return tuple(Shard(where[n]) if n in where else Replicate() for n in mesh.axis_names)


def _lay_out(host, mesh, spec):
    with jax.enable_x64(True):
        return jax.device_put(host, NamedSharding(mesh.jax_mesh, spec))


# An uneven Shard(0) (dim 0 not a multiple of the mesh size), as FSDP2 lays it out: the
# storage is padded on dim 0 to a multiple of the shard count and split evenly (each device
# holds ceil(rows / n) rows; the last ones hold padding), while the tensor's shape stays
# the logical one (``_rows``). JAX (0.10) lays out only even splits as arrays, so the
# padding is ours: a compiled program takes the padded storage, cuts it to its rows inside
# (XLA partitions uneven rows within a program) and pads the new value and gradient it
# returns (``fnx.lower.jax_compile.Program._pinned``); a value that arrives unpadded (an
# eager gradient, a storage written as NumPy) is padded and split again by ``_settle``.

@functools.partial(jax.jit, static_argnums=1)
def _first_rows(padded, rows):
    return padded[:rows]


def _rows_of(padded, rows):
    """The first ``rows`` rows of ``padded`` (gathered by XLA), of its own dtype."""
    with jax.enable_x64(True):
        return _first_rows(padded, rows)


@functools.lru_cache(maxsize=None)
def _padder(pad, sharding):
    def pad_rows(a):
        return jax.numpy.pad(a, ((0, pad),) + ((0, 0),) * (a.ndim - 1))
    return jax.jit(pad_rows, out_shardings=sharding)


def padded_rows(rows, parts) -> int:
    """Dim 0's padded size: ``rows`` rounded up to a multiple of ``parts``."""
    return -(-rows // parts) * parts


def _pad_lay_out(values, rows, sharding):
    """``values`` (dim 0 of ``rows``: NumPy or a jax.Array) padded with zero rows and laid
    out by ``sharding`` (which splits dim 0)."""
    parts = sharding.mesh.shape[sharding.spec[0]]
    with jax.enable_x64(True):
        return _padder(padded_rows(rows, parts) - rows, sharding)(values)


def _set_padded(t, arr, rows):
    """Make ``arr`` (padded on dim 0) the storage of ``t``, whose dim 0 has ``rows``."""
    set_resident(t, arr)
    t.__dict__["_rows"] = rows


_meshes: dict = {}      # device set -> the DeviceMesh last used over it


def _as_dtensor(t, mesh, cls=None):
    """Make the resident tensor ``t`` (its array laid out over ``mesh``) a DTensor."""
    t.__class__ = cls or DTensor
    t._ks |= _TRACER_BIT
    t.__dict__["_device_mesh"] = mesh
    _meshes[frozenset(mesh.jax_mesh.devices.flat)] = mesh
    return t


class _PaddedView(ResidentView):
    """``DTensor._data``: as ``Tensor._data`` (the NumPy view of the resident storage,
    made on first use), but without the padding rows of a padded storage."""

    @staticmethod
    def view(d, arr):
        rows = d.get("_rows")
        return np.asarray(arr) if rows is None else np.asarray(_rows_of(arr, rows))


class DTensor(Tensor):
    """A tensor laid out over a ``DeviceMesh``; ``full_tensor()`` gathers it."""

    _keep_resident = True       # fnx.core.tensor.make_private leaves the layout alone
    _data = _PaddedView()

    @property
    def _array(self):
        """The ``jax.Array`` laid out over the mesh (padded on dim 0 for an uneven
        ``Shard(0)``)."""
        arr = resident(self)
        if arr is None:         # its storage was replaced by a NumPy array: lay it out again
            d = self.__dict__
            values = np.asarray(d["_data"])
            if "_rows" in d:
                del d["_data"]
                _set_padded(self, _pad_lay_out(values, len(values), d["_padded_as"]),
                            len(values))
                return d["_jax"]
            arr = _lay_out(values, self.device_mesh, P(*[None] * self.ndim))
            set_resident(self, arr)
        return arr

    def _values(self):
        """The logical values as a ``jax.Array`` (without a padded storage's padding)."""
        arr = self._array
        rows = self.__dict__.get("_rows")
        return arr if rows is None else _rows_of(arr, rows)

    def _unpadded(self):
        """What a program is fed for a padded DTensor: its rows (gathered by XLA)."""
        return _rows_of(self._array, self.__dict__["_rows"])

    def _settle(self):
        """After a program rebound this padded DTensor (its storage now holds the logical
        rows) or set its ``.grad``: pad and split both again as the parameter is."""
        d = self.__dict__
        rows, sharding = d["_rows"], d["_padded_as"]
        arr = resident(self)
        if arr is None:                 # NumPy storage written: lay it out again
            arr = self._array
        if arr.shape[0] == rows:
            set_resident(self, _pad_lay_out(arr, rows, sharding))
        g = grad_value(self)
        if g is not None and "_rows" not in g.__dict__ and g._device.type == "cpu" and \
                g._base is None:
            values = resident(g)
            if values is None:
                values = np.asarray(g._data)
            if values.shape == arr.shape and values.sharding == arr.sharding:
                # padded and laid out already (a compiled step's gradient)
                g.__dict__.pop("_data", None)
                g.__dict__.pop("_jview", None)
            elif values.shape == tuple(self.shape):
                values = _pad_lay_out(values, rows, sharding)
            else:
                return
            _set_padded(g, values, rows)
            g.__dict__["_padded_as"] = sharding
            _as_dtensor(g, self.device_mesh)

    @classmethod
    def _make(cls, data, dtype, device, ks):
        """An alias over a storage given as NumPy (autograd's saved outputs): a plain
        tensor over the gathered values (the layout lives in the DTensor's own array)."""
        return Tensor._make(data, dtype, device, ks & ~_TRACER_BIT)

    @property
    def device_mesh(self):
        mesh = self.__dict__.get("_device_mesh")
        if mesh is None:    # a copy made without its attributes (autograd's saved outputs)
            mesh = self.__dict__["_device_mesh"] = \
                _meshes[frozenset(resident(self).sharding.device_set)]
        return mesh

    @property
    def placements(self):
        return _placements(self._array, self.device_mesh)

    def full_tensor(self):
        """The whole tensor, gathered to the host (a plain CPU tensor)."""
        with jax.enable_x64(True):
            return fnx.from_numpy(np.array(self._values())).to(self.dtype)

    def local_shards(self):
        """Each device's block, in mesh order (CPU tensors); a padded storage's blocks
        without their padding rows (the last ones may have fewer rows, or none)."""
        order = {d: i for i, d in enumerate(self.device_mesh.jax_mesh.devices.ravel())}
        shards = sorted(self._array.addressable_shards, key=lambda s: order[s.device])
        rows = self.__dict__.get("_rows")
        with jax.enable_x64(True):
            blocks = [np.array(s.data) for s in shards]
            if rows is not None:
                starts = [s.index[0].start or 0 for s in shards]
                blocks = [b[:max(0, min(len(b), rows - a))] for a, b in zip(starts, blocks)]
            return [fnx.from_numpy(b).to(self.dtype) for b in blocks]

    def redistribute(self, device_mesh=None, placements=None):
        """The same values laid out by ``placements`` (XLA moves the blocks)."""
        mesh = device_mesh or self.device_mesh
        placements = placements or [Replicate()] * mesh.ndim
        spec = _spec(tuple(self.shape), mesh, placements, "redistribute")
        with jax.enable_x64(True):
            arr = jax.device_put(self._values(), NamedSharding(mesh.jax_mesh, spec))
        return _as_dtensor(wrap_resident(arr, self.dtype), mesh)

    def __repr__(self):
        return (f"DTensor(shape={tuple(self.shape)}, dtype={self.dtype}, "
                f"placements={self.placements}, mesh={self.device_mesh})")

    @classmethod
    def __fnx_dispatch__(cls, op, ks, args, kwargs):
        """An op on DTensors: a one-op compiled program over their arrays (XLA lays out
        the result), or, when that cannot run, the op on the gathered values."""
        mesh = _mesh_of(args, kwargs)
        if getattr(_state, "busy", False):
            return op.redispatch(ks & _BELOW_TRACER, *args, **kwargs)
        fn = _programs.get(op)
        if fn is None:
            fn = _programs[op] = fnx.compile(_OpCall(op), cache_limit=64)
        written = [(t, t._array.sharding) for t in _dtensors(args, kwargs)] \
            if op.schema.is_mutable else ()
        _state.busy = True
        try:
            with fnx.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")     # an eager fallback is expected here
                out = fn(*args, **kwargs)
        finally:
            _state.busy = False
        if op.name in _LIKE and isinstance(args[0], DTensor) and isinstance(out, Tensor):
            return _laid_out_as(out, args[0])
        for t, sharding in written:     # an in-place op keeps the layout (placements)
            if "_rows" in t.__dict__:
                t._settle()
                continue
            arr = resident(t)
            if arr is None or arr.sharding != sharding:
                with jax.enable_x64(True):
                    set_resident(t, jax.device_put(arr if arr is not None
                                                   else np.asarray(t._data), sharding))
        if written:
            same = _written_result(op, args, kwargs)
            if same is not None:
                return same         # an in-place op returns the tensor it wrote, as eager
        return _wrap(out, mesh)


# ops whose result is a new tensor "like" their input: laid out as it (as PyTorch's DTensor
# does), so an optimizer's state (``zeros_like(param)``) is sharded as its parameter
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                   "randn_like", "randint_like", "clone"})


def _written_result(op, args, kwargs):
    """The DTensor argument that ``op`` writes and returns (``self`` of ``mul_``, ``out``
    of an ``out=`` overload), or None."""
    returns = op.schema.returns
    alias = returns[0].type.alias if len(returns) == 1 else None
    if alias is None or not alias.is_write:
        return None
    for i, a in enumerate(op.schema.arguments):
        if a.is_write and a.type.alias.sets == alias.sets:
            value = args[i] if i < len(args) else kwargs.get(a.name)
            return value if isinstance(value, DTensor) else None
    return None


def _laid_out_as(out, like):
    """``out`` (of ``like``'s shape) laid out as the DTensor ``like`` (padded as it is)."""
    d = like.__dict__
    values = resident(out)
    if values is None:
        values = np.asarray(out._data)
    if "_rows" in d:
        out.__dict__.pop("_data", None)
        _set_padded(out, _pad_lay_out(values, d["_rows"], d["_padded_as"]), d["_rows"])
        out.__dict__["_padded_as"] = d["_padded_as"]
    else:
        with jax.enable_x64(True):
            set_resident(out, jax.device_put(values, like._array.sharding))
    return _as_dtensor(out, like.device_mesh, DTensor)


class _OpCall:
    """``op(*args, **kwargs)``: the function compiled for one op on DTensors."""

    def __init__(self, op):
        self.op = op
        self.__qualname__ = f"DTensor.{op.name}"

    def __call__(self, *args, **kwargs):
        return self.op(*args, **kwargs)


_programs: dict = {}
_state = threading.local()


def _dtensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, DTensor):
                yield t


def _mesh_of(args, kwargs):
    for t in _dtensors(args, kwargs):
        return t.device_mesh
    raise AssertionError("no DTensor argument")


def _wrap(out, mesh):
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap(o, mesh) for o in out)
    if isinstance(out, Tensor) and not isinstance(out, DTensor):
        arr = resident(out)
        if arr is not None and arr.sharding.device_set == set(mesh.jax_mesh.devices.flat):
            return _as_dtensor(out, mesh)
    return out


def distribute_tensor(tensor, device_mesh: DeviceMesh = None, placements=None) -> DTensor:
    """Place ``tensor`` on ``device_mesh`` by ``placements`` (default: replicated).

    Each device receives only its own block (``jax.device_put`` with a ``NamedSharding``);
    the result requires grad when ``tensor`` does (a leaf).
    """
    if device_mesh is None:
        raise ValueError("distribute_tensor: give a device_mesh (init_device_mesh(...))")
    placements = list(placements) if placements is not None else \
        [Replicate()] * device_mesh.ndim
    spec = _spec(tuple(tensor.shape), device_mesh, placements, "distribute_tensor")
    if isinstance(tensor, DTensor):
        host = np.asarray(tensor._values())
    else:
        host = np.ascontiguousarray(tensor.detach().cpu().numpy())
    out = _as_dtensor(wrap_resident(_lay_out(host, device_mesh, spec), tensor.dtype),
                      device_mesh)
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out


_mixed: dict = {}


def mixed_class(mixin, cls, prefix):
    """``cls`` that is also a ``mixin`` (made once, named ``prefix + cls.__name__``): the
    class an object becomes in place (a parameter a DTensor, a module an FSDPModule), so
    everything holding it sees the change."""
    if issubclass(cls, mixin):
        return cls
    made = _mixed.get((mixin, cls))
    if made is None:
        made = _mixed[mixin, cls] = type(f"{prefix}{cls.__name__}", (mixin, cls), {})
    return made


def distribute_parameter(param, device_mesh, placements, *, pad=False):
    """Lay ``param`` (a parameter or buffer, kept the same object, so optimizers holding it
    see the change) out over ``device_mesh`` by ``placements``: it becomes a DTensor.
    With ``pad``, a ``Shard(0)`` on a 1-d mesh whose dim 0 does not split evenly pads the
    storage as FSDP2 does (the shape stays ``param``'s)."""
    shape = tuple(param.shape)
    host = np.asarray(param._values()) if isinstance(param, DTensor) else \
        np.ascontiguousarray(param.detach().cpu().numpy())
    n = device_mesh.size()
    d = param.__dict__
    d.pop("_fed", None)
    d.pop("_rows", None)
    if pad and list(placements) == [Shard(0)] and shape and shape[0] % n:
        sharding = NamedSharding(device_mesh.jax_mesh, P(device_mesh.axis_names[0]))
        d.pop("_data", None)
        _set_padded(param, _pad_lay_out(host, shape[0], sharding), shape[0])
        d["_padded_as"] = sharding
    else:
        spec = _spec(shape, device_mesh, placements, "distribute_module")
        set_resident(param, _lay_out(host, device_mesh, spec))
    return _as_dtensor(param, device_mesh, mixed_class(DTensor, type(param), "DTensor"))


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Lay ``module``'s parameters and buffers out over ``device_mesh``, as PyTorch's
    ``distribute_module``: ``partition_fn(name, submodule, device_mesh)`` is called for
    every submodule (it lays out that submodule's own parameters, e.g. with
    ``distribute_parameter``); without one every parameter and buffer is replicated.
    ``input_fn(module, inputs, device_mesh)`` and ``output_fn(module, outputs,
    device_mesh)`` become a forward pre-hook and a forward hook (lay out the inputs, and
    the outputs, as they return).

    >>> import fnx, fnx.distributed as dist
    >>> mesh = dist.init_device_mesh("cpu", (1,))
    >>> m = dist.distribute_module(fnx.nn.Linear(2, 1), mesh)
    >>> isinstance(m.weight, dist.DTensor), isinstance(m.weight, fnx.nn.Parameter)
    (True, True)
    """
    if device_mesh is None:
        raise ValueError("distribute_module: give a device_mesh (init_device_mesh(...))")
    replicate = [Replicate()] * device_mesh.ndim
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, device_mesh)
        else:
            for p in list(sub.parameters(recurse=False)) + list(sub.buffers(recurse=False)):
                if not isinstance(p, DTensor):
                    distribute_parameter(p, device_mesh, replicate)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, inputs: input_fn(m, inputs, device_mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, inputs, out: output_fn(m, out, device_mesh))
    return module
