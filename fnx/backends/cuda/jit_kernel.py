"""The CUDA key's boxed kernel: any op that reaches prims runs as one jitted JAX program.

For each (op, argument signature) -- the tensors' shapes, dtypes and devices and every
non-tensor argument's value -- the op is traced once on meta tensors, functionally and
decomposed to prims (``fnx.graph.tracer.trace``), lowered with the JAX target's rules
(``fnx.lower.jax``) and ``jax.jit``-ed for the device; the entry is cached, so a repeated
call costs the signature walk, one dict lookup and the jitted call.

Python scalars are part of the signature (XLA constants), as ``torch.compile`` specializes
on them: a loop that changes a Python float every step recompiles every step; pass a 0-dim
cuda tensor instead, which is a program input.

Ops a trace cannot express -- results whose shape depends on data (``nonzero``,
``masked_select``), Python results (``equal``), decompositions that read values -- run
elsewhere: a CompositeExplicit op runs its decomposition eagerly (each op it calls is a
cuda kernel), anything else runs on the CPU backend with its tensors copied to the host
and its results copied back (the host synchronization such ops need on a GPU anyway).
Random ops thread a key: each key the trace drew becomes a program input, drawn per call
from the device's generator (``fnx.cuda``) or the op's ``generator=``.
"""
from __future__ import annotations

import os

import jax
import numpy as np

from ...core import tls
from ...core.device import CPU, canonical
from ...core.dispatch_key import FULL, AliasKey, DispatchKey
from ...core.meta_array import meta_tensor
from ...core.random import rng as _rng
from ...core.tensor import Tensor
from ...graph.graph import Node
from ...graph.tracer import DataDependentError, trace
from ...keys import functionalize as _functionalize
from ...lower.jax import JAX_TARGET
from ...lower import precision
from ...lower.jax_compile import graph_program, raise_failed
from ..cpu._core import same_device_error
from ..cpu._core import wrap as cpu_wrap
from . import devices as cuda
from .storage import CUDA_KS, canonical_cuda, jax_device, to_device, to_host, wrap_array, x64

__all__ = ["generic_kernel", "run_on_cpu", "cache_info", "clear_cache"]

_CACHE_SIZE = int(os.environ.get("FNX_CUDA_CACHE_SIZE", "4096"))
_cache: dict = {}
_stats = {"hits": 0, "misses": 0, "cpu": 0, "eager": 0}
_CPU_BIT = 1 << DispatchKey.CPU
_tensor_new = Tensor.__new__


class _Walk:
    """State of one signature walk: the tensors in order and the call's device."""
    __slots__ = ("tensors", "dev", "other", "op")

    def __init__(self, op):
        self.tensors = []
        self.dev = None         # the cuda device of the call
        self.other = None       # a non-cuda, non-scalar device seen before any cuda one
        self.op = op


def _device_of(t, w: _Walk):
    d = t._device
    if d.type == "cuda":
        if w.dev is None:
            if w.other is not None:
                raise same_device_error(w.op.name, d, w.other)
            w.dev = d
        elif d != w.dev:
            raise same_device_error(w.op.name, w.dev, d)
    elif d is CPU and not t._data.shape:
        pass                    # a 0-dim CPU tensor joins any device, as in PyTorch
    elif w.dev is not None:
        raise same_device_error(w.op.name, w.dev, d)
    elif w.other is None:
        w.other = d


def _sig(v, w: _Walk):
    """A hashable description of one argument; tensors are collected in order."""
    if isinstance(v, Tensor):
        if v._device is not w.dev:
            _device_of(v, w)
        w.tensors.append(v)
        # devices and dtypes are interned: their ids hash faster than they do
        return (v._data.shape, id(v._dtype), id(v._device), v._is_wrapped_number)
    c = v.__class__
    if c is float:
        return (c, v) if v == v else (c, "nan")
    if c is int or c is bool or c is complex:
        return (c, v)
    if c is list or c is tuple:
        return (c,) + tuple(_sig(x, w) for x in v)
    if isinstance(v, np.generic):
        return (c, v.item())
    return v


def _replace(v, it):
    """``v`` with its tensors replaced, in ``_sig`` order, by those of ``it``."""
    if isinstance(v, Tensor):
        return next(it)
    c = v.__class__
    if c is list or c is tuple:
        return c(_replace(x, it) for x in v)
    return v


_mutable: dict = {}       # op -> schema.is_mutable (a property that walks the schema)


def generic_kernel(op, ks, args, kwargs):
    """The boxed CUDA kernel (also registered directly for CompositeExplicit core ops)."""
    mutable = _mutable.get(op)
    if mutable is None:
        mutable = _mutable[op] = op.schema.is_mutable
    if mutable:
        # Reached only with the Functionalize key excluded: functionalize here.
        return _functionalize.mutate(op, ks, args, kwargs)
    w = _Walk(op)
    key = [op]
    for a in args:
        key.append(_sig(a, w))
    if kwargs:
        for k, v in kwargs.items():
            key.append(k)
            key.append(_sig(v, w))
    key = tuple(key)
    dev = w.dev
    if dev is None:
        d = kwargs.get("device")
        dev = canonical_cuda(d) if d is not None and str(d).startswith("cuda") else \
            canonical_cuda("cuda")
        key = key + (dev,)
    try:
        entry = _cache.get(key)
        hashable = True
    except TypeError:           # an unhashable argument: build without caching
        entry, hashable = None, False
    if entry is None:
        _stats["misses"] += 1
        entry = _build(op, args, kwargs, w.tensors, dev)
        if hashable:
            if len(_cache) >= _CACHE_SIZE:
                for k in list(_cache)[:_CACHE_SIZE // 2]:   # drop the oldest half
                    del _cache[k]
            _cache[key] = entry
    else:
        _stats["hits"] += 1
    return entry(args, kwargs, w.tensors)


# ----------------------------------------------------------------------------- entries

class _Jitted:
    """One traced, lowered, jitted program and how to feed it and wrap its results."""
    __slots__ = ("fn", "feeds", "spec", "outs", "dev", "single", "checked", "checks")

    def __call__(self, args, kwargs, tensors):
        if self.feeds is None:
            arrays = [t._data for t in tensors]
        else:
            arrays = [_feed(f, tensors, self.dev) for f in self.feeds]
        with x64(True):
            outs = self.fn(*arrays)
        if self.checks:     # value checks (out-of-range indices): the last output
            raise_failed(self.checks, outs[-1])
            outs = outs[:-1]
        if not self.checked:
            self._check(outs)
        if self.single is not None:
            dtype, dev = self.single
            t = _tensor_new(Tensor)
            t._data = outs[0]
            t._dtype = dtype
            t._device = dev
            t._ks = CUDA_KS
            return t
        wrapped = [_wrap_out(o, dtype, dev) for o, (dtype, dev) in zip(outs, self.outs)]
        return _unflatten(self.spec, iter(wrapped))

    def _check(self, outs):
        # The lowering rules promise exact dtypes; hold them to it once per entry.
        for o, (dtype, _) in zip(outs, self.outs):
            if o.dtype != dtype.numpy:
                raise AssertionError(f"fnx cuda: {o.dtype} result where {dtype} was expected")
        self.checked = True


def _feed(f, tensors, dev):
    kind, v = f
    if kind != "rng":
        data = tensors[v]._data if kind == "arg" else v._data
        # host data (0-dim CPU tensors) is copied: JAX's CPU client may alias it
        return data if isinstance(data, jax.Array) else np.array(data)
    device, generator = v           # a random key, fresh per call
    return _next_key(device, generator, dev)


def _next_key(device, generator, dev):
    if generator is None:
        d = device if device is not None and getattr(device, "type", None) == "cuda" else dev
        generator = cuda.generator_for(canonical_cuda(d).index)
    words = _rng(generator, "cuda random op").integers(0, 1 << 32, size=2, dtype=np.uint64)
    return words.astype(np.int64)


def _wrap_out(arr, dtype, dev):
    if dev.type == "cuda":
        if jax_device(dev) not in arr.devices():
            arr = to_device(arr, dev)
        return wrap_array(arr, dtype, dev)
    if dev.type == "meta":
        return meta_tensor(arr.shape, dtype)
    return cpu_wrap(to_host(arr, dtype), dtype)


def _unflatten(spec, it):
    if isinstance(spec, Node):
        return next(it)
    if isinstance(spec, (list, tuple)):
        return type(spec)(_unflatten(s, it) for s in spec)
    return spec


class _Eager:
    """Run the op's CompositeExplicit kernel (its decomposition) op by op on the device."""
    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self, args, kwargs, tensors):
        _stats["eager"] += 1
        return self.op.kernels[AliasKey.CompositeExplicitAutograd](CUDA_KS, *args, **kwargs)


class _OnCpu:
    """Run the op on the CPU backend: tensors to the host, results back to the device."""
    __slots__ = ("op", "dev")

    def __init__(self, op, dev):
        self.op = op
        self.dev = dev

    def __call__(self, args, kwargs, tensors):
        return run_on_cpu(self.op, args, kwargs, self.dev)[0]


def run_on_cpu(op, args, kwargs, dev):
    """``op`` on host copies of its cuda tensors; returns (result with cuda tensors for
    cuda results, {id(host copy): original tensor})."""
    _stats["cpu"] += 1
    copies = {}

    def down(v):
        if isinstance(v, Tensor):
            if v._device.type == "cuda":
                c = cpu_wrap(to_host(v._data, v._dtype), v._dtype)
                c._is_wrapped_number = v._is_wrapped_number
                copies[id(c)] = (c, v)
                return c
            return v
        if isinstance(v, (list, tuple)):
            return type(v)(down(x) for x in v)
        return v

    cargs = [down(a) for a in args]
    ckw = {k: (CPU if k == "device" and v is not None and str(v).startswith("cuda")
               else down(v)) for k, v in kwargs.items()}
    out = op.redispatch(_CPU_BIT, *cargs, **ckw)

    def up(v):
        if isinstance(v, Tensor):
            hit = copies.get(id(v))
            if hit is not None and hit[0] is v:
                return hit[1]           # an input returned as it is (written, or self)
            if v._device is CPU:
                return wrap_array(to_device(v._data, dev), v._dtype, dev)
            return v
        if isinstance(v, (list, tuple)):
            return type(v)(up(x) for x in v)
        return v

    return up(out), copies


# ----------------------------------------------------------------------------- building

def _build(op, args, kwargs, tensors, dev):

    wrapped = [i for i, t in enumerate(tensors) if t._is_wrapped_number]

    def call(*ts):
        for i in wrapped:       # Python scalars the API wrapped still promote as scalars
            ts[i]._is_wrapped_number = True
        it = iter(ts)
        a = [_replace(x, it) for x in args]
        kw = {k: _replace(v, it) for k, v in kwargs.items()}
        return op(*a, **kw)

    saved = (tls.state.include, tls.state.mask)
    tls.state.include, tls.state.mask = tls.ALWAYS_INCLUDED, FULL
    try:
        # 0-dim CPU tensors enter the program as device inputs (uploaded per call)
        stand_ins = [t if t._device is dev else Tensor._make(t._data, t._dtype, dev, CUDA_KS)
                     for t in tensors]
        graph = trace(call, *stand_ins, decompose_to="prims", functional=True,
                      lift_captured=True)
        program, out_nodes = graph_program(JAX_TARGET, graph)
    except (DataDependentError, NotImplementedError):
        return _fallback_entry(op, dev)
    finally:
        tls.state.include, tls.state.mask = saved
    if graph.mutated_inputs:
        return _fallback_entry(op, dev)
    e = _Jitted()
    sources = graph.input_sources
    n = len(tensors)
    host = any(t._device.type != "cuda" for t in tensors)
    if len(sources) == n and all(s == ("arg", i) for i, s in enumerate(sources)) \
            and not host:
        e.feeds = None
    else:
        e.feeds = [s if s[0] != "arg" else ("arg", s[1]) for s in sources]
    e.dev = dev
    e.spec = graph.output_node.args[0]
    e.outs = [(nd.meta.dtype, _out_device(nd.meta.device, dev)) for nd in out_nodes]
    e.checked = False
    e.checks = program.checks
    single = len(out_nodes) == 1 and e.spec is out_nodes[0] and e.outs[0][1] is dev
    e.single = e.outs[0] if single else None
    jd = jax_device(dev)
    with x64(True):
        # Pinned to the device: programs without device inputs (factories) land there too.
        e.fn = jax.jit(program, out_shardings=jax.sharding.SingleDeviceSharding(jd)) \
            if all(o[1] is dev for o in e.outs) else jax.jit(program)
    return e


def _out_device(meta_dev, dev):
    if meta_dev is None:
        return dev
    d = canonical(meta_dev)         # a node's device may be a string ("cpu")
    return canonical_cuda(d) if d.type == "cuda" else d


def _fallback_entry(op, dev):
    if AliasKey.CompositeExplicitAutograd in op.kernels:
        return _Eager(op)
    return _OnCpu(op, dev)


def cache_info() -> dict:
    """Counts of cache hits, compiles, eager-composite and CPU-run calls (for tests and
    benchmarks)."""
    return {**_stats, "entries": len(_cache)}


@precision.on_change      # a kernel jitted with the old float32 precision must not run
def clear_cache() -> None:
    _cache.clear()
