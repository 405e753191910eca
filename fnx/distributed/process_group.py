"""Process groups on JAX's multi-process runtime.

``init_process_group`` starts ``jax.distributed`` (its coordinator runs in rank 0 at
``MASTER_ADDR:MASTER_PORT``); every process then sees every process's devices, and a group
is one device per member process, the first of each (``LOCAL_RANK`` picks the GPU when a
node has several). Collectives run as XLA programs over a mesh of those devices
(``fnx/distributed/collectives.py``). PyTorch's ``"gloo"`` backend maps onto XLA's gloo CPU
collectives, ``"nccl"`` onto XLA's GPU collectives (NCCL).

A world of one process needs no coordinator: it runs the same programs on a one-device mesh.
"""
from __future__ import annotations

import datetime
import enum
import json
import os
import socket
import sys
import time

import jax
import numpy as np
from jax.sharding import Mesh

try:
    from jax._src import xla_bridge  # private: asked only whether JAX's backends are up
except ImportError:
    xla_bridge = None

__all__ = ["ReduceOp", "ProcessGroup", "Backend", "init_process_group", "is_initialized",
           "is_available", "get_rank", "get_world_size", "get_backend", "new_group",
           "destroy_process_group", "default_group", "GroupMember", "group_by_name"]

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")
DEFAULT_TIMEOUT = 1800.0   # seconds a collective may take (PyTorch's gloo default: 30 min)
ERROR_FILE_ENV = "FNX_DISTRIBUTED_ERROR_FILE"   # where a failing rank says why (run.py)
AXIS = "ranks"          # the mesh axis the collectives reduce over


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter_tensor`` combine the ranks' values.

    >>> import fnx.distributed as dist
    >>> dist.ReduceOp.SUM, dist.ReduceOp.AVG.name
    (<ReduceOp.SUM: 'sum'>, 'AVG')
    """
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class Backend(str):
    """A backend name, as ``torch.distributed.Backend``: ``Backend("GLOO") == "gloo"``.

    >>> import fnx.distributed as dist
    >>> dist.Backend("NCCL") == dist.Backend.NCCL
    True
    """
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name):
        low = str(name).lower()
        if low not in (cls.GLOO, cls.NCCL):
            raise ValueError(f"Invalid backend: '{name}' (fnx.distributed knows 'gloo' for CPU "
                             f"and 'nccl' for GPUs)")
        return str.__new__(cls, low)


class ProcessGroup:
    """A set of ranks that run collectives together: one device per member process.

    ``rank()`` is this process's index in the group (-1 when it is not a member).
    """

    def __init__(self, ranks, backend, devices, group_name):
        self.ranks = list(ranks)
        self.group_name = group_name    # what the _c10d_functional ops name it by
        self.backend = backend
        self.devices = devices          # one JAX device per member, in group-rank order
        me = jax.process_index() if _STATE["world_size"] > 1 else 0
        self._rank = self.ranks.index(me) if me in self.ranks else -1
        self._mesh = None
        self.programs = {}              # the collectives' compiled programs, per signature

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return len(self.ranks)

    @property
    def mesh(self) -> Mesh:
        if self._mesh is None:
            self._mesh = Mesh(np.array(self.devices, dtype=object), (AXIS,))
        return self._mesh

    @property
    def device(self):
        """This process's device in the group."""
        return self.devices[self._rank]

    def __repr__(self):
        return f"ProcessGroup(backend={self.backend!r}, ranks={self.ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group``
    returns to a process outside the new group (as in PyTorch)."""
    WORLD = None
    NON_GROUP_MEMBER = -100


_STATE = {"group": None, "world_size": 0, "rank": -1, "backend": None, "distributed": False,
          "groups": {}}


def _named(pg):
    _STATE["groups"][pg.group_name] = pg
    return pg


def group_by_name(name) -> ProcessGroup:
    """The group a ``_c10d_functional`` op names (``"0"`` is the world)."""
    default_group()
    try:
        return _STATE["groups"][name]
    except KeyError:
        raise ValueError(f"unknown process group {name!r} (not a member, or destroyed)") \
            from None


def is_available() -> bool:
    """True: fnx.distributed runs on JAX's distributed runtime.

    >>> import fnx.distributed as dist
    >>> dist.is_available()
    True
    """
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` ran (and ``destroy_process_group`` did not since).

    >>> import fnx.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _STATE["group"] is not None


def default_group(group=None) -> ProcessGroup:
    """``group``, or the default group; ValueError (PyTorch's) before initialization."""
    if _STATE["group"] is None:
        raise ValueError(NOT_INITIALIZED)
    return _STATE["group"] if group is None else group


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world); -1 outside the group.

    >>> import fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return default_group(group).rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (default: the world); -1 outside the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return default_group(group).size()


def get_backend(group=None) -> str:
    """The backend name of ``group`` ("gloo" or "nccl")."""
    return default_group(group).backend


def _env_int(name, given):
    if given is not None and given >= 0:
        return given
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"init_process_group: {name} is not set (launch with "
                         f"python -m fnx.distributed.run, or pass {name.lower()}=)")
    return int(value)


def _address(init_method):
    if init_method is None or init_method == "env://":
        addr = os.environ.get("MASTER_ADDR")
        port = os.environ.get("MASTER_PORT")
        if addr is None or port is None:
            raise ValueError("init_process_group: MASTER_ADDR and MASTER_PORT must be set for "
                             "init_method='env://' (launch with python -m fnx.distributed.run)")
        return f"{addr}:{port}"
    if init_method.startswith("tcp://"):
        return init_method[len("tcp://"):].rstrip("/")
    raise ValueError(f"init_process_group: init_method {init_method!r} is not supported "
                     f"(use 'env://' or 'tcp://host:port')")


def _wait_for_coordinator(address, seconds, rank, world_size):
    """Wait until the coordinator (rank 0) accepts connections; a clear error after
    ``seconds`` (JAX itself aborts the process when it cannot register in time)."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=1):
                return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise RuntimeError(f"init_process_group: rank {rank} of {world_size} timed "
                                   f"out after {seconds} s waiting for the master (rank 0) at "
                                   f"{address}: {e}") from e
            time.sleep(0.2)


def _exit_on_uncaught_exception():
    """A rank that dies of an exception exits at once (after printing it), as a torchrun
    worker does; otherwise JAX's exit handler would wait for every other rank to reach its
    own shutdown, and a rank that failed would hang instead of exiting."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            previous(kind, value, tb)
            path = os.environ.get(ERROR_FILE_ENV)
            if path:        # for the launcher: when and why this rank failed
                with open(path, "w") as f:
                    json.dump({"time": time.time(), "error": f"{kind.__name__}: {value}"}, f)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
    sys.excepthook = hook


def _default_backend():
    try:
        return Backend.NCCL if jax.devices("gpu") else Backend.GLOO
    except RuntimeError:
        return Backend.GLOO


def _world_devices(backend):
    """One device per process, in process order: the process's first local device."""
    platform = "gpu" if backend == Backend.NCCL else "cpu"
    first = {}
    for d in sorted(jax.devices(platform), key=lambda d: d.id):
        first.setdefault(d.process_index, d)
    return [first[p] for p in sorted(first)]


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None) -> None:
    """Join the default process group, as ``torch.distributed.init_process_group``.

    ``rank``/``world_size`` default to the ``RANK``/``WORLD_SIZE`` environment variables and
    the coordinator to ``MASTER_ADDR:MASTER_PORT`` (``init_method='env://'``) or
    ``'tcp://host:port'``, as ``python -m fnx.distributed.run`` (or torchrun) sets them.
    ``timeout`` (a ``timedelta`` or seconds) bounds joining the group and each collective:
    one that takes longer ends the process with a message naming it (default 30 min).
    Must run before JAX starts its backends in this process (before any cuda tensor).

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> t = fnx.tensor([1., 2.])
    >>> dist.all_reduce(t); t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    if _STATE["group"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group: store= is not supported; fnx uses JAX's "
                                  "coordinator (init_method='env://' or 'tcp://host:port')")
    backend = _default_backend() if backend is None else Backend(backend)
    world_size = _env_int("WORLD_SIZE", world_size)
    rank = _env_int("RANK", rank)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is not in [0, {world_size}) "
                         f"(world_size={world_size})")
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    distributed = world_size > 1
    if distributed:
        address = _address(init_method)
        if xla_bridge is not None and xla_bridge.backends_are_initialized():
            raise RuntimeError("init_process_group must run before JAX initializes its "
                               "backends in this process (before any cuda tensor or "
                               "compiled call)")
        if backend == Backend.GLOO:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        seconds = max(int(timeout), 1)      # to join: JAX wants whole seconds
        local = os.environ.get("LOCAL_RANK")
        kwargs = {}
        if backend == Backend.NCCL and (device_id is not None or local is not None):
            kwargs["local_device_ids"] = [device_id.index if hasattr(device_id, "index")
                                          else int(device_id if device_id is not None
                                                   else local)]
        if rank != 0:
            _wait_for_coordinator(address, seconds, rank, world_size)
        try:
            jax.distributed.initialize(coordinator_address=address, num_processes=world_size,
                                       process_id=rank, initialization_timeout=seconds,
                                       **kwargs)
        except Exception as e:
            raise RuntimeError(f"init_process_group: rank {rank} of {world_size} could not "
                               f"join the coordinator at {address} within {seconds} s: "
                               f"{type(e).__name__}: {e}") from e
        _exit_on_uncaught_exception()
        devices = _world_devices(backend)
        if len(devices) != world_size:
            raise RuntimeError(f"init_process_group: expected {world_size} processes with "
                               f"{backend} devices, JAX sees {len(devices)}")
    else:
        devices = [jax.local_devices(backend="gpu" if backend == Backend.NCCL else "cpu")[0]]
    _STATE.update(world_size=world_size, rank=rank, backend=str(backend),
                  distributed=distributed, timeout=timeout)
    _STATE["groups"] = {}
    _STATE["group"] = _named(ProcessGroup(range(world_size), str(backend), devices, "0"))
    GroupMember.WORLD = _STATE["group"]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False):
    """A group of some ranks; every rank must call it, as in PyTorch. A rank outside
    ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``.

    >>> import fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> dist.new_group([0]).size()
    1
    >>> dist.destroy_process_group()
    """
    world = default_group()
    ranks = sorted(set(world.ranks if ranks is None else ranks))
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is not in [0, {world.size()})")
    _STATE["created"] = _STATE.get("created", 0) + 1     # every rank counts alike
    if world.rank() not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    return _named(ProcessGroup(ranks, world.backend, [world.devices[r] for r in ranks],
                               str(_STATE["created"])))


def destroy_process_group(group=None) -> None:
    """Leave the default group (shutting down JAX's distributed client) or drop ``group``.

    JAX cannot start its distributed runtime twice in one process, so a process that left a
    multi-process group cannot join another.
    """
    if group is not None and group is not _STATE["group"]:
        return
    if _STATE["group"] is None:
        raise ValueError(NOT_INITIALIZED)
    if _STATE["distributed"]:
        jax.distributed.shutdown()
    _STATE.update(group=None, world_size=0, rank=-1, backend=None, distributed=False,
                  groups={}, created=0)
    GroupMember.WORLD = None
