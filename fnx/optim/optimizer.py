"""``Optimizer``: parameter groups, per-parameter state and (de)serialization, as
``torch.optim.Optimizer``.

Subclasses write ``step`` with in-place fnx tensor ops under ``no_grad`` and keep the step
count as a tensor (``state['step']``), so a compiled training step traces the update as
ordinary graph ops without baking in the step number.
"""
from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from itertools import chain

from .. import api as fnx
from .. import compiler
from ..core import tls
from ..core.grad_mode import enable_grad, no_grad
from ..graph import guards
from ..graph.tracer import read_traced
from ..core.tensor import Tensor
from ..nn.modules.module import RemovableHandle

__all__ = ["Optimizer", "ParamGroup", "required"]


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class ParamGroup(dict):
    """One parameter group: a dict whose options, read while ``fnx.compile`` traces a step,
    are program inputs (floats such as ``lr``, ``momentum``, ``betas``) or guards (ints,
    bools, strings, None). A scheduler's new learning rate reaches the compiled step
    without a recompilation, and a changed ``nesterov`` flag recompiles.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.ones(1))
    >>> opt = fnx.optim.SGD([p], lr=0.5)
    >>> type(opt.param_groups[0]).__name__, opt.param_groups[0]["lr"]
    ('ParamGroup', 0.5)
    """
    __slots__ = ()

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if tls.state.modes:         # only a trace reads through the tracer
            return read_traced(value, self, key, f"param_group[{key!r}]")
        return value

    def get(self, key, default=None):
        return self[key] if key in self else default


def _use_grad(step):
    """Run ``step`` under ``no_grad`` (the updates are not part of any graph)."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with no_grad():
            return step(self, *args, **kwargs)
    return wrapper


class Optimizer:
    """Base class of the optimizers.

    ``params``: an iterable of tensors, or of dicts (parameter groups with their own
    options, e.g. ``[{'params': body}, {'params': head, 'lr': 1e-3}]``); ``defaults``: the
    options a group does not set.

    >>> import fnx
    >>> w = fnx.nn.Parameter(fnx.ones(2))
    >>> opt = fnx.optim.SGD([w], lr=0.1)
    >>> w.grad = fnx.tensor([1.0, -1.0])
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9000, 1.1000], requires_grad=True)
    """

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state = OptimizerState(dict)
        self.param_groups = []
        self._step_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        if isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in ("state", "param_groups"):
            _replaced(self)      # (``opt.state = defaultdict(dict)`` resets the state)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_hooks", OrderedDict())
        _replaced(self)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with its own options) to optimize."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(ParamGroup(param_group))
        _replaced(self)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None by default, as PyTorch)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    # unconditionally: not reading .grad keeps a compiled step that starts
                    # here independent of whether the last step left gradients
                    p.grad = None
                elif p.grad is not None:
                    g = p.grad
                    if g.grad_fn is not None:
                        g = p.grad = g.detach()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        """The loss ``closure()`` returns, computed with grad enabled (None without one)."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _grads(group):
        """``(param, gradient)`` for each parameter of ``group`` that has a gradient,
        negated under ``maximize`` (every optimizer's step starts from these)."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            if p.grad is not None:
                yield p, (-p.grad if maximize else p.grad)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after every ``step``."""
        handle = RemovableHandle(self._step_hooks)
        self._step_hooks[handle.id] = hook
        return handle

    def _run_step_hooks(self, args, kwargs):
        for hook in list(self._step_hooks.values()):
            hook(self, args, kwargs)

    @staticmethod
    def _step_tensor(state, param):
        """The step counter as a float32 0-dim tensor (PyTorch keeps it as a tensor too),
        incremented in place so compiled steps read it instead of baking it in."""
        step = state.get("step")
        if step is None:
            with compiler.suspend_tracing():    # state outlives a compiled step's trace
                step = state["step"] = fnx.zeros((), dtype=fnx.float32, device=param.device)
        step.add_(1)
        return step

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` with
        parameters numbered in group order, as PyTorch's."""
        index = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            index.update({id(p): i for i, p in enumerate(group["params"], start)
                          if id(p) not in index})
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {index[id(k)]: v for k, v in self.state.items() if isinstance(k, Tensor)
                 and id(k) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the options and state saved by ``state_dict`` (state tensors are moved to
        each parameter's device, and floating ones to its dtype; ``step`` stays as is)."""
        state_dict = copy.deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step":
                    return value
                if value.is_floating_point() and param.is_floating_point():
                    return value.to(param.device, param.dtype)
                return value.to(param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = OptimizerState(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = dict(saved)
            saved["params"] = group["params"]
            new_groups.append(ParamGroup(saved))
        self.state = state
        self.param_groups = new_groups      # (each replaced: __setattr__ -> _replaced)


class OptimizerState(defaultdict):
    """``Optimizer.state``: a ``defaultdict(dict)``, as PyTorch's, that counts removals
    (``clear()``, ``del state[p]``, ``pop``) in ``removals`` and bumps
    ``guards.state_version``: a compiled step that captured the removed state tensors
    must not run again (``guards.optimizer_state``).

    >>> import fnx
    >>> opt = fnx.optim.SGD([fnx.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> opt.state.clear(); opt.state.removals
    1
    """

    removals = 0

    def _removed(self) -> None:
        self.removals += 1
        guards.bump()

    def clear(self) -> None:
        super().clear()
        self._removed()

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        self._removed()

    def pop(self, *args):
        value = super().pop(*args)
        self._removed()
        return value

    def popitem(self):
        item = super().popitem()
        self._removed()
        return item


def _replaced(optimizer) -> None:
    """The optimizer's groups or state are new objects (``load_state_dict``,
    ``add_param_group``): a compiled step that captured the old ones (its state tensors,
    the dicts it reads ``lr`` from) must not run again (``guards.optimizer_state``)."""
    d = optimizer.__dict__
    d["_fnx_version"] = d.get("_fnx_version", 0) + 1
    guards.bump()


def _scalar(x):
    """A Python number, or a 0-dim tensor's value when ``x`` is a tensor (options such as
    ``lr`` may be tensors, as PyTorch allows)."""
    return x.item() if isinstance(x, Tensor) else x
