"""Collectives on tensors, run as XLA programs over the group's mesh.

Each call builds the global array from this process's tensor (one shard per rank, stacked
on a new leading axis, ``jax.make_array_from_single_device_arrays``) and calls a jitted
``jax.shard_map`` whose body is the collective (``psum``, ``all_gather``, ``psum_scatter``,
``all_to_all``); XLA runs it across the processes (gloo on CPU, NCCL on GPU). Programs are
compiled once per (collective, shape, dtype, op) and group.

Before the data moves, the ranks exchange a small signature (op, dtype, shape) with one
tiny all-gather, so a rank that passes a different shape or dtype gets an error that names
the op and the ranks on every rank, instead of a hang or garbage.

The result is written into the output tensor in place, as PyTorch does; with
``async_op=True`` the call returns a ``Work`` whose ``wait()`` writes it (XLA runs the
collective in the background meanwhile).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import api as fnx
from ..compiler import is_compiling
from .. import ops as _ops
from . import watchdog
from .process_group import AXIS, GroupMember, ReduceOp, default_group

__all__ = ["Work", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "all_to_all_single", "barrier"]

_MAX_DIMS = 8
_SIG_LEN = 4 + _MAX_DIMS     # op code, dtype code, ndim, extra, shape...
_OPS = ["all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
        "reduce_scatter_tensor", "all_to_all_single", "barrier"]
_REDS = [op.value for op in ReduceOp]
_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
           "float32", "float64", "complex64", "complex128"]


class Work:
    """The handle of an ``async_op=True`` collective: ``wait()`` blocks until the result is
    in the output tensor; ``is_completed()`` asks without blocking.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> t = fnx.ones(3)
    >>> w = dist.all_reduce(t, async_op=True)
    >>> w.wait(), t
    (True, tensor([1., 1., 1.]))
    >>> w.is_completed()
    True
    >>> dist.destroy_process_group()
    """

    def __init__(self, finish=None, op="collective"):
        self._out = None            # the global jax.Array the program returns
        self._finish = finish       # writes this process's shard into the output tensor
        self._done = finish is None     # a traced call (the op ran synchronously)
        if not self._done:          # watched from before the launch, which may block too
            watchdog.watch(self, op)

    def is_completed(self) -> bool:
        return self._done or (self._out is not None and self._out.is_ready())

    def is_success(self) -> bool:
        return self.is_completed()

    def wait(self, timeout=None) -> bool:
        if not self._done:
            with jax.enable_x64(True):
                local = np.asarray(self._out.addressable_shards[0].data)[0]
            watchdog.done(self)
            self._finish(local)
            self._done = True
            self._out = None
        return True

    def result(self):
        self.wait()
        return []


def _host(tensor, op, name="tensor"):
    if not isinstance(tensor, fnx.Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(tensor).__name__}")
    arr = np.ascontiguousarray(tensor.detach().cpu().numpy())
    if str(arr.dtype) not in _DTYPES:
        raise TypeError(f"{op}: unsupported dtype {tensor.dtype} for a collective")
    return arr


def _write(tensor, value):
    with fnx.no_grad():
        tensor.copy_(fnx.from_numpy(np.ascontiguousarray(value)))


def _group(group, op):
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    return default_group(group)


def _check_signature(pg, op, arr, extra=0):
    """All ranks agree on (op, dtype, shape, extra) or every rank raises, naming them."""
    if pg.size() == 1:
        return
    if arr.ndim > _MAX_DIMS:
        raise ValueError(f"{op}: tensors of more than {_MAX_DIMS} dims are not supported")
    sig = np.zeros(_SIG_LEN, np.int64)
    sig[:4] = (_OPS.index(op), _DTYPES.index(str(arr.dtype)), arr.ndim, extra)
    sig[4:4 + arr.ndim] = arr.shape
    sigs = _run(f"{op} (its argument check)", pg, "gather", sig, ())
    if (sigs == sigs[0]).all():
        return
    seen = []
    for r, s in zip(pg.ranks, sigs.tolist()):
        name = _OPS[s[0]]
        arg = (f" op={_REDS[s[3] - 1]}" if name in ("all_reduce", "reduce_scatter_tensor")
               else f" src={s[3]}" if name == "broadcast" else "")
        seen.append(f"rank {r}: {name} {_DTYPES[s[1]]}{s[4:4 + s[2]]}{arg}")
    kind = TypeError if len(set(sigs[:, 1])) > 1 else RuntimeError
    raise kind(f"{op}: the ranks passed different tensors or arguments ({'; '.join(seen)})")


def _body(kind, params, n):
    """The per-rank function of the shard_map: ``x`` is this rank's value."""
    if kind == "gather":
        return lambda x: jax.lax.all_gather(x, AXIS)
    if kind == "broadcast":
        src, = params
        return lambda x: jax.lax.psum(jnp.where(jax.lax.axis_index(AXIS) == src, x,
                                                jnp.zeros_like(x)), AXIS)
    if kind == "all_to_all":
        return lambda x: jax.lax.all_to_all(x, AXIS, 0, 0, tiled=True)
    if kind == "reduce":
        red, = params
        if red == "sum":
            return lambda x: jax.lax.psum(x, AXIS)
        if red == "avg":
            return lambda x: (jax.lax.psum(x, AXIS) / n).astype(x.dtype)
        if red == "max":
            return lambda x: jax.lax.pmax(x, AXIS)
        if red == "min":
            return lambda x: jax.lax.pmin(x, AXIS)
        return lambda x: jnp.prod(jax.lax.all_gather(x, AXIS), axis=0, dtype=x.dtype)
    if kind == "reduce_scatter":
        red, = params
        if red in ("sum", "avg"):
            div = n if red == "avg" else 1
            return lambda x: (jax.lax.psum_scatter(x, AXIS, scatter_dimension=0, tiled=True)
                              / div).astype(x.dtype)
        combine = {"max": jnp.max, "min": jnp.min, "product": jnp.prod}[red]

        def scatter(x):
            chunks = x.reshape((n, x.shape[0] // n) + x.shape[1:])
            mine = jax.lax.all_to_all(chunks, AXIS, 0, 0)    # chunk `me` of every rank
            return combine(mine, axis=0).astype(x.dtype)
        return scatter
    raise AssertionError(kind)


def _program(pg, kind, params, shape, dtype):
    key = (kind, params, shape, dtype)
    fn = pg.programs.get(key)
    if fn is None:
        body = _body(kind, params, pg.size())
        fn = jax.jit(jax.shard_map(lambda x: body(x[0])[None], mesh=pg.mesh,
                                   in_specs=P(AXIS), out_specs=P(AXIS), check_vma=False))
        pg.programs[key] = fn
    return fn


def _launch(pg, kind, arr, params):
    """Start the program on this rank's ``arr``; returns the global result (not waited)."""
    with jax.enable_x64(True):
        shard = jax.device_put(arr[None], pg.device)
        glob = jax.make_array_from_single_device_arrays(
            (pg.size(),) + arr.shape, NamedSharding(pg.mesh, P(AXIS)), [shard])
        return _program(pg, kind, params, arr.shape, str(arr.dtype))(glob)


def _run(name, pg, kind, arr, params):
    got = []
    _start(name, pg, kind, arr, params, got.append, False)
    return got[0]


def _start(name, pg, kind, arr, params, finish, async_op):
    work = Work(finish, name)
    try:
        work._out = _launch(pg, kind, arr, params)
    except BaseException:
        watchdog.done(work)
        raise
    if async_op:
        return work
    work.wait()
    return None


def _traced(outputs, results, async_op):
    """While tracing: record the functional op's result and a copy into the output."""
    with fnx.no_grad():
        for out, res in zip(outputs, results):
            out.copy_(res)
    return Work() if async_op else None


def _fun(name):
    return getattr(_ops._c10d_functional, name).default


def _op_name(op):
    if isinstance(op, ReduceOp):
        return op.value
    raise TypeError(f"expected a fnx.distributed.ReduceOp, got {op!r}")


def _reduce_operand(arr, red, op):
    """bool reduces as int32 (SUM/MAX = any, MIN/PRODUCT = all); AVG needs a float."""
    if red == "avg" and arr.dtype.kind in "biu":
        raise TypeError(f"{op}: ReduceOp.AVG needs a floating point or complex tensor, got "
                        f"{arr.dtype}")
    if arr.dtype == np.bool_:
        return arr.astype(np.int32), lambda v: v != 0
    if red in ("max", "min") and arr.dtype.kind == "c":
        raise TypeError(f"{op}: ReduceOp.{red.upper()} is not defined for complex tensors")
    return arr, lambda v: v


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the ranks of ``group``; every rank gets the result, in place.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> t = fnx.tensor([3, 4])
    >>> dist.all_reduce(t, op=dist.ReduceOp.MAX); t
    tensor([3, 4])
    >>> dist.destroy_process_group()
    """
    red = _op_name(op)
    pg = _group(group, "all_reduce")
    if pg is None:
        return None
    if is_compiling():
        return _traced([tensor], [_fun("all_reduce")(tensor, red, pg.group_name)], async_op)
    arr = _host(tensor, "all_reduce")
    _check_signature(pg, "all_reduce", arr, _REDS.index(red) + 1)
    operand, post = _reduce_operand(arr, red, "all_reduce")
    return _start("all_reduce", pg, "reduce", operand, (red,),
                  lambda v: _write(tensor, post(v)), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> t = fnx.tensor([5., 6.])
    >>> dist.broadcast(t, src=0); t
    tensor([5., 6.])
    >>> dist.destroy_process_group()
    """
    pg = _group(group, "broadcast")
    if pg is None:
        return None
    if group_src is None:
        if src is None:
            raise ValueError("broadcast: give src (a global rank) or group_src")
        if src not in pg.ranks:
            raise ValueError(f"broadcast: src rank {src} is not in the group {pg.ranks}")
        group_src = pg.ranks.index(src)
    if is_compiling():
        return _traced([tensor], [_fun("broadcast")(tensor, pg.ranks[group_src],
                                                    pg.group_name)], async_op)
    arr = _host(tensor, "broadcast")
    _check_signature(pg, "broadcast", arr, group_src)
    operand, post = (arr.astype(np.int32), lambda v: v != 0) if arr.dtype == np.bool_ \
        else (arr, lambda v: v)
    finish = (lambda v: None) if pg.size() == 1 else (lambda v: _write(tensor, post(v)))
    return _start("broadcast", pg, "broadcast", operand, (group_src,), finish, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather every rank's ``tensor`` into ``tensor_list`` (one tensor per rank).

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> out = [fnx.zeros(2)]
    >>> dist.all_gather(out, fnx.tensor([1., 2.])); out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
    """
    pg = _group(group, "all_gather")
    if pg is None:
        return None
    if is_compiling():
        stacked = _fun("all_gather_into_tensor")(tensor.unsqueeze(0), pg.size(),
                                                 pg.group_name)
        return _traced(tensor_list, list(stacked.unbind(0)), async_op)
    arr = _host(tensor, "all_gather")
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != arr.shape:
            raise ValueError(f"all_gather: tensor_list[{i}] has shape {tuple(t.shape)}, the "
                             f"input has {arr.shape}")
    _check_signature(pg, "all_gather", arr)

    def finish(v):
        for t, part in zip(tensor_list, v):
            _write(t, part)
    return _start("all_gather", pg, "gather", arr, (), finish, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's ``input_tensor`` along dim 0 into ``output_tensor``
    (``world_size * input.shape[0]`` rows); a ``(world_size, *input.shape)`` output takes
    them stacked.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> out = fnx.zeros(2)
    >>> dist.all_gather_into_tensor(out, fnx.tensor([7., 8.])); out
    tensor([7., 8.])
    >>> dist.destroy_process_group()
    """
    pg = _group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    op = "all_gather_into_tensor"
    if is_compiling():
        res = _fun(op)(input_tensor, pg.size(), pg.group_name)
        return _traced([output_tensor], [res.reshape(output_tensor.shape)], async_op)
    arr = _host(input_tensor, op, "input_tensor")
    n = pg.size()
    out_shape = tuple(output_tensor.shape)
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"{op}: output dtype {output_tensor.dtype} differs from the input "
                        f"dtype {input_tensor.dtype}")
    stacked = (n,) + arr.shape
    cat = (n * arr.shape[0],) + arr.shape[1:] if arr.ndim else None
    if out_shape not in (stacked, cat):
        raise ValueError(f"{op}: output shape {out_shape} must be {cat or stacked} (world "
                         f"size {n} times the input's {arr.shape})")
    _check_signature(pg, op, arr)
    return _start(op, pg, "gather", arr, (),
                  lambda v: _write(output_tensor, v.reshape(out_shape)), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` across ranks, then give rank ``r`` the ``r``-th of ``world_size``
    equal chunks along dim 0, in ``output``.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> out = fnx.zeros(2)
    >>> dist.reduce_scatter_tensor(out, fnx.tensor([1., 2.])); out
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    name = "reduce_scatter_tensor"
    red = _op_name(op)
    pg = _group(group, name)
    if pg is None:
        return None
    if is_compiling():
        return _traced([output], [_fun(name)(input, red, pg.size(), pg.group_name)],
                       async_op)
    arr = _host(input, name, "input")
    n = pg.size()
    if output.dtype != input.dtype:
        raise TypeError(f"{name}: output dtype {output.dtype} differs from the input dtype "
                        f"{input.dtype}")
    if arr.ndim == 0 or tuple(output.shape) != (arr.shape[0] // n,) + arr.shape[1:] \
            or arr.shape[0] % n:
        raise ValueError(f"{name}: input shape {arr.shape} must be the output shape "
                         f"{tuple(output.shape)} with dim 0 times the world size {n}")
    _check_signature(pg, name, arr, _REDS.index(red) + 1)
    operand, post = _reduce_operand(arr, red, name)

    return _start(name, pg, "reduce_scatter", operand, (red,),
                  lambda v: _write(output, post(v)), async_op)


def _splits(given, rows, n, op, name):
    if given is None:
        if rows % n:
            raise ValueError(f"{op}: dim 0 of {name} ({rows}) does not split into {n} equal "
                             f"chunks; give {name}_split_sizes")
        return [rows // n] * n
    given = [int(v) for v in given]
    if len(given) != n or min(given) < 0 or sum(given) != rows:
        raise ValueError(f"{op}: {name}_split_sizes {given} must be {n} non-negative sizes "
                         f"summing to dim 0 of {name} ({rows})")
    return given


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split ``input`` along dim 0 (into ``world_size`` equal chunks, or by
    ``input_split_sizes``), send chunk ``j`` to rank ``j``, and concatenate what arrives
    (from rank 0 first, sized by ``output_split_sizes``) into ``output``.

    >>> import fnx, fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> out = fnx.zeros(3)
    >>> dist.all_to_all_single(out, fnx.tensor([1., 2., 3.])); out
    tensor([1., 2., 3.])
    >>> dist.destroy_process_group()
    """
    name = "all_to_all_single"
    pg = _group(group, name)
    if pg is None:
        return None
    if is_compiling():
        res = _fun(name)(input, list(output_split_sizes or []), list(input_split_sizes or []),
                         pg.group_name)
        return _traced([output], [res], async_op)
    arr = _host(input, name, "input")
    n, me = pg.size(), pg.rank()
    if output.dtype != input.dtype:
        raise TypeError(f"{name}: output dtype {output.dtype} differs from the input dtype "
                        f"{input.dtype}")
    if arr.ndim == 0 or output.dim() == 0 or tuple(output.shape[1:]) != arr.shape[1:]:
        raise ValueError(f"{name}: input {arr.shape} and output {tuple(output.shape)} must "
                         f"have a dim 0 and the same other dims")
    sends = _splits(input_split_sizes, arr.shape[0], n, name, "input")
    gets = _splits(output_split_sizes, output.shape[0], n, name, "output")
    if input_split_sizes is None and output_split_sizes is None:
        if tuple(output.shape) != arr.shape:
            raise ValueError(f"{name}: output shape {tuple(output.shape)} must match the "
                             f"input shape {arr.shape}")
        _check_signature(pg, name, arr)
        return _start(name, pg, "all_to_all", arr, (), lambda v: _write(output, v), async_op)
    # Uneven splits: learn every rank's sizes, pad each chunk to the largest, exchange.
    rest = arr.shape[1:]
    _check_signature(pg, name, np.empty((0,) + rest, arr.dtype), 1)
    matrix = _run(name, pg, "gather", np.asarray(sends, np.int64), ()) if n > 1 \
        else np.asarray([sends], np.int64)
    column = matrix[:, me].tolist()             # what every rank sends to this one
    if column != gets:
        raise ValueError(f"{name}: rank {pg.ranks[me]} expects output_split_sizes {gets} "
                         f"but the ranks send it {column}")
    width = max(int(matrix.max()), 1)
    padded = np.zeros((n, width) + rest, arr.dtype)
    offsets = np.concatenate([[0], np.cumsum(sends)])
    for j in range(n):
        padded[j, :sends[j]] = arr[offsets[j]:offsets[j + 1]]

    def finish(v):
        v = v.reshape((n, width) + rest)
        _write(output, np.concatenate([v[i, :gets[i]] for i in range(n)]))
    return _start(name, pg, "all_to_all", padded.reshape((n * width,) + rest), (), finish,
                  async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of ``group`` reached the barrier.

    >>> import fnx.distributed as dist
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    pg = _group(group, "barrier")
    if pg is None:
        return None
    return _start("barrier", pg, "reduce", np.zeros(1, np.int32), ("sum",), lambda v: None,
                  async_op)
