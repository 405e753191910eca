"""``DistributedDataParallel``: one model replica per process, gradients averaged.

At construction rank 0's parameters and buffers are broadcast, so every replica starts
equal. The parameters that need gradients are split into buckets of about
``bucket_cap_mb`` (in reverse registration order, roughly the order backward produces
their gradients); a post-accumulate-grad hook on each parameter counts the ready ones, and
when a bucket is complete its gradients, flattened, start an asynchronous AVG
``all_reduce`` while backward goes on. When the last bucket has started, the reductions
are waited for and written back into ``.grad``, so after ``loss.backward()`` every rank
holds the average of the ranks' gradients. ``reduced_bytes`` counts the gradient bytes
all-reduced so far by eager steps: one step reduces exactly the model's gradient bytes.

Inside ``fnx.compile`` the hooks run while tracing and record the reductions as
``_c10d_functional`` ops, which lower to XLA collectives: a compiled DDP step (forward,
backward, the bucket all-reduces, the optimizer) is one program, run by every process as
an SPMD program over the group's mesh.
"""
from __future__ import annotations

import contextlib

from ... import api as fnx
from ...compiler import is_compiling
from ...distributed import ReduceOp, all_reduce, broadcast
from ...distributed.process_group import default_group
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _coalesced_broadcast(tensors, group, src):
    """Broadcast ``tensors`` from ``src`` with one collective per dtype."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for ts in by_dtype.values():
        flat = fnx.cat([t.detach().reshape(-1) for t in ts])
        broadcast(flat, src=src, group=group)
        _unflatten_into(flat, ts)


def _unflatten_into(flat, tensors):
    offset = 0
    with fnx.no_grad():
        for t in tensors:
            n = t.numel()
            t.copy_(flat[offset:offset + n].reshape(t.shape))
            offset += n


def _reachable_leaves(out):
    """The ids of the leaf tensors ``out``'s autograd graph reaches."""
    stack, seen, leaves = [], set(), set()

    def add(v):
        if isinstance(v, fnx.Tensor):
            if v.grad_fn is not None:
                stack.append(v.grad_fn)
            elif v.requires_grad:
                leaves.add(id(v))
        elif isinstance(v, (list, tuple)):
            for x in v:
                add(x)
        elif isinstance(v, dict):
            for x in v.values():
                add(x)
    add(out)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return leaves


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.ready = 0
        self.work = None
        self.flat = None


class DistributedDataParallel(Module):
    """Data parallelism across processes, as ``torch.nn.parallel.DistributedDataParallel``:
    wrap the replica, train as usual; after ``backward()`` each ``.grad`` is the average
    over the ranks. ``no_sync()`` skips the reduction (gradients accumulate locally until
    the next synchronized backward). ``device_ids``/``output_device`` are accepted for
    PyTorch's signature; each process computes on its own device.
    ``find_unused_parameters=True``: after each forward, the parameters the output does
    not depend on (found by walking its autograd graph) count as ready at once, with a zero
    gradient (their accumulated ``.grad`` if they have one) in the bucket reduction, as
    PyTorch does; one small all-reduce tells which parameters some rank used: those get
    the averaged gradient, the ones no rank used keep their ``.grad`` (None stays None).
    Without it every parameter that requires grad must get a gradient in each synchronized
    backward (else the next forward raises).

    >>> import fnx, fnx.distributed as dist
    >>> from fnx import nn
    >>> dist.init_process_group("gloo", world_size=1, rank=0)
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
    >>> model(fnx.ones(2, 3)).sum().backward()
    >>> model.module.weight.grad
    tensor([[2., 2., 2.]])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        self.module = module
        self.find_unused_parameters = bool(find_unused_parameters)
        self._unused = set()            # ids of the parameters this forward did not use
        self._used_map = None           # (flags, Work): which parameters some rank used
        self.process_group = default_group(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        self._sync_this_backward = False
        cap = (25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024
        params = [p for p in module.parameters() if p.requires_grad]
        state = list(module.parameters()) + list(module.buffers())
        if state and self.process_group.size() > 1:
            _coalesced_broadcast(state, self.process_group, self.process_group.ranks[0])
        self._buckets, current, size = [], [], 0
        for p in reversed(params):
            if current and (size + p.numel() * p.element_size() > cap
                            or p.dtype != current[0].dtype):
                self._buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += p.numel() * p.element_size()
        if current:
            self._buckets.append(_Bucket(current))
        self._bucket_of = {}
        for b in self._buckets:
            for p in b.params:
                self._bucket_of[id(p)] = b
                p.register_post_accumulate_grad_hook(self._grad_ready)
        self._launched = 0
        self.reduced_bytes = 0          # gradient bytes all-reduced so far (all buckets)

    def forward(self, *inputs, **kwargs):
        if self._launched or any(b.ready for b in self._buckets):
            raise RuntimeError("DistributedDataParallel: expected to have finished reduction in "
                               "the prior iteration before starting a new one: some parameters "
                               "got no gradient in the last backward (unused parameters are "
                               "not supported)")
        if self.broadcast_buffers and self.process_group.size() > 1:
            buffers = list(self.module.buffers())
            if buffers:
                _coalesced_broadcast(buffers, self.process_group, self.process_group.ranks[0])
        self._sync_this_backward = self.require_backward_grad_sync and fnx.is_grad_enabled()
        out = self.module(*inputs, **kwargs)
        if self._sync_this_backward and self.find_unused_parameters:
            self._mark_unused(out)
        return out

    def _mark_unused(self, out):
        """Count the parameters ``out`` does not depend on as ready (PyTorch's
        ``prepare_for_backward``), and start the all-reduce of the used-parameter flags."""
        used = _reachable_leaves(out)
        params = [p for b in self._buckets for p in b.params]
        self._unused.clear()
        self._unused.update(id(p) for p in params if id(p) not in used)
        flags = fnx.tensor([0 if id(p) in self._unused else 1 for p in params],
                           dtype=fnx.int32)
        work = all_reduce(flags, op=ReduceOp.MAX, group=self.process_group, async_op=True)
        self._used_map = (flags, work)
        for p in params:
            if id(p) in self._unused:
                self._grad_ready(p)

    @contextlib.contextmanager
    def no_sync(self):
        """Within it, backward accumulates gradients locally without reducing them.

        >>> import fnx, fnx.distributed as dist
        >>> from fnx import nn
        >>> dist.init_process_group("gloo", world_size=1, rank=0)
        >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(fnx.ones(1, 2)).sum().backward()
        >>> model.module.weight.grad
        tensor([[1., 1.]])
        >>> dist.destroy_process_group()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _grad_ready(self, param):
        if not self._sync_this_backward:
            return
        bucket = self._bucket_of[id(param)]
        bucket.ready += 1
        if bucket.ready < len(bucket.params):
            return
        bucket.flat = fnx.cat([self._local_grad(p).reshape(-1) for p in bucket.params])
        if not is_compiling():     # Python state a compiled step could not replay
            self.reduced_bytes += bucket.flat.numel() * bucket.flat.element_size()
        bucket.work = all_reduce(bucket.flat, op=ReduceOp.AVG, group=self.process_group,
                                 async_op=True)
        self._launched += 1
        if self._launched == len(self._buckets):
            self._finish()

    def _local_grad(self, p):
        """What ``p`` adds to its bucket: its gradient, zeros for an unused parameter
        that has none."""
        if p.grad is None:
            return fnx.zeros(p.shape, dtype=p.dtype, device=p.device)
        return p.grad.detach()

    def _finish(self):
        used = None
        if self._used_map is not None:
            flags, work = self._used_map
            work.wait()
            used = flags.tolist() if not is_compiling() else None
        k = 0
        for b in self._buckets:
            b.work.wait()
            if not self._unused:
                _unflatten_into(b.flat, [p.grad for p in b.params])
            else:
                offset = 0
                for p in b.params:
                    n = p.numel()
                    value = b.flat[offset:offset + n].reshape(p.shape)
                    offset += n
                    # no rank used it: its .grad stays as it was (when traced, the flags are
                    # unknown: a locally unused parameter takes the average, as when used)
                    if id(p) in self._unused and used is not None and not used[k]:
                        pass
                    elif p.grad is None:
                        p.grad = value.detach().clone()
                    else:
                        with fnx.no_grad():
                            p.grad.copy_(value)
                    k += 1
            b.ready, b.work, b.flat = 0, None, None
        self._launched = 0
        self._sync_this_backward = False
        if self._unused:
            self._unused.clear()
        if self._used_map is not None:
            self._used_map = None
