"""``fnx.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

``checkpoint(fn, *args)`` runs ``fn`` without keeping its intermediate values and runs it
again during the backward pass to get them, trading compute for memory. Both of
PyTorch's variants are here:

- ``use_reentrant=False`` (recommended): the result is differentiable when ``fn`` reads
  any tensor that requires grad, an argument or one it reaches by itself (a module's
  parameters); ``autograd.grad`` works through it. The tensors ``fn`` reads are found
  while it runs (under a dispatch mode), and the backward pass asks ``autograd.grad`` of
  the recomputed outputs for exactly those.
- ``use_reentrant=True`` (PyTorch's default when the argument is not given, with a
  warning): the result requires grad only when an argument does; the recomputation's
  backward accumulates into the parameters' ``.grad`` itself, so only ``backward()``
  reaches them (``autograd.grad`` raises), and keyword arguments are refused.

Random ops draw the same numbers in the recomputation (``preserve_rng_state``: the CPU
generator's state, and the cuda generators' of the devices the arguments are on, are put
back for it). Inside ``fnx.compile`` the function is simply called: XLA decides what a
compiled program keeps.

>>> import fnx
>>> from fnx.utils.checkpoint import checkpoint
>>> lin = fnx.nn.Linear(3, 2)
>>> x = fnx.ones(4, 3)
>>> checkpoint(lin, x, use_reentrant=False).sum().backward()
>>> lin.weight.grad.tolist()
[[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
"""
from __future__ import annotations

import warnings

from .. import cuda as _cuda
from ..autograd import Function
from ..autograd.engine import backward as _backward, grad as _grad
from ..core import random as _random
from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..core.pytree import flatten, unflatten
from ..core.tensor import Tensor
from ..dispatch.modes import DispatchMode
from ..graph.tracer import is_compiling

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """A checkpointed function cannot be recomputed as asked."""


def checkpoint(function, *args, use_reentrant=None, context_fn=None,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, its intermediate values recomputed in the backward
    pass instead of kept (see the module docstring for the two variants).

    >>> import fnx
    >>> from fnx.utils.checkpoint import checkpoint
    >>> w = fnx.tensor([2.0], requires_grad=True)
    >>> y = checkpoint(lambda x: (x * w).exp(), fnx.zeros(1), use_reentrant=False)
    >>> fnx.autograd.grad(y.sum(), w)[0].tolist()
    [0.0]
    """
    if use_reentrant is None:
        warnings.warn("fnx.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; it defaults to True (PyTorch's default), but "
                      "use_reentrant=False is recommended", UserWarning, stacklevel=2)
        use_reentrant = True
    if context_fn is not None:
        raise ValueError("fnx.utils.checkpoint: context_fn (selective checkpointing) is not "
                         "supported")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if is_compiling() or not is_grad_enabled():
        return function(*args, **kwargs)
    rng = _RngStates(args) if preserve_rng_state else None
    if use_reentrant:
        return _reentrant(function, args, rng)
    with no_grad(), _ReadsGradTensors() as reads:
        out = function(*args, **kwargs)
    if not reads.tensors:
        return out
    flat, spec = flatten(out)
    box = _Box(function, args, kwargs, rng, flat, reentrant=False)
    return unflatten(spec, _Checkpoint.apply(box, *reads.tensors))


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in order on ``input``, checkpointing
    all but the last of ``segments`` equal runs of them, as PyTorch's.

    >>> import fnx
    >>> from fnx.utils.checkpoint import checkpoint_sequential
    >>> net = fnx.nn.Sequential(fnx.nn.Linear(2, 2), fnx.nn.ReLU(), fnx.nn.Linear(2, 1))
    >>> x = fnx.ones(3, 2, requires_grad=True)
    >>> bool((checkpoint_sequential(net, 2, x, use_reentrant=False) == net(x)).all())
    True
    """
    if use_reentrant is None:
        warnings.warn("fnx.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly; it defaults to True",
                      UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else \
        list(functions)
    size = len(functions) // segments
    end = -1

    def run(start, stop):
        def forward(x):
            for f in functions[start:stop + 1]:
                x = f(x)
            return x
        return forward
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


class _ReadsGradTensors(DispatchMode):
    """Records, in order and once each, the tensors requiring grad that ops read."""

    def __init__(self):
        self.tensors = []
        self._seen = set()

    def handle(self, op, ks, args, kwargs):
        for a in (*args, *kwargs.values()):
            for t in (a if isinstance(a, (list, tuple)) else (a,)):
                if isinstance(t, Tensor) and t.requires_grad and id(t) not in self._seen:
                    self._seen.add(id(t))
                    self.tensors.append(t)
        return self.run_below(op, ks, args, kwargs)


class _RngStates:
    """The CPU generator's state and the cuda generators' of the arguments' devices."""

    def __init__(self, args):
        self.cpu = _random.get_rng_state()
        self.cuda = {str(a.device): _cuda.get_rng_state(a.device) for a in args
                     if isinstance(a, Tensor) and a.device.type == "cuda"}

    def __enter__(self):
        self._saved = (_random.get_rng_state(),
                       {d: _cuda.get_rng_state(d) for d in self.cuda})
        _random.set_rng_state(self.cpu)
        for d, state in self.cuda.items():
            _cuda.set_rng_state(state, d)

    def __exit__(self, *exc):
        cpu, cuda = self._saved
        _random.set_rng_state(cpu)
        for d, state in cuda.items():
            _cuda.set_rng_state(state, d)


class _Box:
    """What the backward pass needs to run the function again."""

    def __init__(self, function, args, kwargs, rng, outputs, reentrant):
        self.function, self.args, self.kwargs, self.rng = function, args, kwargs, rng
        self.outputs, self.reentrant = outputs, reentrant

    def recompute(self, args):
        """The function's flat tensor outputs, recomputed with grad on ``args``."""
        with enable_grad():
            if self.rng is None:
                out = self.function(*args, **self.kwargs)
            else:
                with self.rng:
                    out = self.function(*args, **self.kwargs)
        return flatten(out)[0]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, box, *inputs):
        ctx.box = box
        ctx.inputs = inputs
        return tuple(box.outputs)

    @staticmethod
    def backward(ctx, *grads):
        box, inputs = ctx.box, ctx.inputs
        if box.reentrant:       # on detached arguments; parameters accumulate their .grad
            args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor)
                    else a for a in box.args]
        else:
            args = box.args
        # the recomputed outputs that take part, with their gradients
        pairs = [(o, g) for o, g in zip(box.recompute(args), grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        outs, grads = [o for o, _ in pairs], [g for _, g in pairs]
        if box.reentrant:
            if outs:
                _backward(outs, grads)
            return (None, *[a.grad for a in args if isinstance(a, Tensor)])
        if not outs:
            return (None,) * (1 + len(inputs))
        return (None, *_grad(outs, list(inputs), grads, allow_unused=True))


def _reentrant(function, args, rng):
    with no_grad():
        out = function(*args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not any(t.requires_grad for t in tensors):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=3)
        return out
    flat, spec = flatten(out)
    box = _Box(function, args, {}, rng, flat, reentrant=True)
    return unflatten(spec, _Checkpoint.apply(box, *tensors))
