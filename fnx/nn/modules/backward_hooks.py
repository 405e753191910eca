"""Module backward hooks (``register_full_backward_hook``,
``register_full_backward_pre_hook``), as PyTorch places them.

A module's call with such hooks passes its positional tensor arguments, and later its
tensor outputs, through an identity autograd function (``BackwardHookFunction``). The
node on the outputs sees the gradients of the outputs: the pre-hooks run there and may
replace them. The node on the inputs sees the gradients of the inputs: the hooks run there
with both and may replace the input gradients. A module none of whose inputs requires grad
runs its hooks at the output node, with None input gradients.
"""
from __future__ import annotations

import functools
import warnings

from ...autograd.function import Function
from ...core.grad_mode import is_grad_enabled
from ...core.tensor import Tensor

__all__ = ["BackwardHook", "BackwardHookFunction", "put_legacy_hooks"]


class BackwardHookFunction(Function):
    """The identity, as an autograd node that hooks can be put on."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack(indices, values, size) -> tuple:
    """A tuple of ``size`` with ``values`` at ``indices`` and None elsewhere."""
    out = [None] * size
    for i, v in zip(indices, values):
        out[i] = v
    return tuple(out)


class BackwardHook:
    """The backward hooks of one call of ``module``."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks              # hook(module, grad_input, grad_output)
        self.pre_hooks = pre_hooks      # pre_hook(module, grad_output)
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = 0
        self.input_index = self.output_index = None

    @staticmethod
    def _through_identity(args, on_node):
        """``args`` with its tensors passed through ``BackwardHookFunction`` (its node given
        to ``on_node``), and their positions; unchanged and None when no tensor requires
        grad or grad mode is off."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in index])
        on_node(next(t.grad_fn for t in new if t.grad_fn is not None))
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple) -> tuple:
        def on_node(node):
            node.register_hook(self._at_inputs)
        self.n_inputs = len(args)
        args, self.input_index = self._through_identity(args, on_node)
        return args

    def setup_output_hook(self, result):
        def on_node(node):
            node.register_hook(self._at_outputs)
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        outs, self.output_index = self._through_identity(outs, on_node)
        return outs[0] if single else outs

    def _at_outputs(self, grad_inputs, _):
        """The output node's hook: ``grad_inputs`` are the gradients of the outputs."""
        self.grad_outputs = _pack(self.output_index, grad_inputs, self.n_outputs)
        replaced = None
        for hook in self.pre_hooks:
            got = hook(self.module, self.grad_outputs)
            if got is None:
                continue
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(got)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = replaced = got
        if self.input_index is None:
            # no input requires grad: the input node is never reached, run the hooks now
            none = (None,) * self.n_inputs
            for hook in self.hooks:
                got = hook(self.module, none, self.grad_outputs)
                if got is not None and not (isinstance(got, tuple) and
                                            all(g is None for g in got)):
                    raise RuntimeError(f"backward hook of {type(self.module).__name__}: a "
                                       f"module none of whose inputs requires grad has no "
                                       f"input gradients, so its hook must return None")
            self.grad_outputs = None
        if replaced is not None:
            return tuple(replaced[i] for i in self.output_index)
        return None

    def _at_inputs(self, grad_inputs, _):
        """The input node's hook: ``grad_inputs`` are the gradients of the inputs."""
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs
            return None
        res = _pack(self.input_index, grad_inputs, self.n_inputs)
        for hook in self.hooks:
            got = hook(self.module, res, self.grad_outputs)
            if got is None:
                continue
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(got)}, but expected {len(res)}")
            res = got
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)


def _legacy_backward_hook(hook, module, grad_input, grad_output):
    return hook(module, grad_input, grad_output)


def put_legacy_hooks(module, args, result):
    """``register_backward_hook``'s hooks go on the node that made the (first) output:
    they see the gradients of that one op's inputs and outputs."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) \
            if isinstance(var, dict) else var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in module._backward_hooks.values():
        node.register_hook(functools.partial(_legacy_backward_hook, hook, module))
    why = _legacy_hook_problem(args, result, node)
    if why:
        warnings.warn(f"Using a non-full backward hook {why} is deprecated: the hook sees "
                      f"the gradients of the module's last op, not the module's; use "
                      f"register_full_backward_hook", FutureWarning, stacklevel=3)


def _legacy_hook_problem(args, result, node):
    """Why a legacy hook on ``node`` would not see the module's own gradients (the cases
    PyTorch warns about), or None."""
    outs = result if isinstance(result, tuple) else (result,)
    if not all(isinstance(r, Tensor) for r in outs):
        return "on a Module that does not return a Tensor or a tuple of Tensors"
    if not all(isinstance(a, Tensor) for a in args):
        return "on a Module that does not take a Tensor or a tuple of Tensors"
    made_by = {id(r.grad_fn) for r in outs if r.grad_fn is not None}
    if made_by != {id(node)}:
        return "when the outputs are made by several autograd nodes"
    input_nodes = {id(a.grad_fn) for a in args if a.grad_fn is not None}
    if input_nodes != {id(e[0]) if e is not None else None for e in node.next_edges}:
        return "when the forward contains multiple autograd nodes"
    return None
