"""``nn.Module``: the base class of every layer, as ``torch.nn.Module``.

A module keeps its parameters, buffers and submodules in three ordered dicts filled by
``__setattr__`` (assigning a ``Parameter``, a ``Module`` or, for a registered name, a
tensor), so ``state_dict`` keys, ``parameters()`` order and ``repr`` follow PyTorch's.
Device and dtype moves (``to``, ``cuda``, ``half``, ...) go through one recursive ``_apply``
that converts each parameter and buffer and puts the result *into the same tensor object*
(its data, dtype, device and keyset), so optimizers and compiled functions holding them
keep working after ``model.cuda()``.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import api as fnx
from ...core import dtype as D
from ...core.device import device as _device_cls
from ...core.dispatch_key import AUTOGRAD_BITS
from ...core.grad_mode import no_grad
from ...core.tensor import Tensor, _autograd_bit, drop_resident, shared_data
from ...graph import guards as _guards
from .backward_hooks import BackwardHook, put_legacy_hooks
from .hooks import HOOK_SETS, IdSet, RemovableHandle, WrappedHook, insert_hook
from .stores import STORES as _STORES, Registry as _Registry
from ..parameter import Buffer, Parameter

__all__ = ["Module", "RemovableHandle"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and those it did not use."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# ``local_metadata`` key of load_state_dict's first pass: check, write nothing.
_CHECK_ONLY = "fnx_check_only"
# ``local_metadata`` key of its second pass: the pre-hooks ran in the first.
_PRE_HOOKS_RAN = "fnx_pre_hooks_ran"

def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _type_name(value) -> str:
    if isinstance(value, Tensor):
        return value.type()
    return type(value).__name__


def _check_name(kind: str, name) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


def _assign_into(t: Tensor, new: Tensor) -> None:
    """Make ``t`` hold ``new``'s data, dtype and device, keeping ``t``'s identity and
    its requires_grad flag."""
    had_grad = bool(t._ks & AUTOGRAD_BITS)
    ks = new._ks & ~AUTOGRAD_BITS
    if new is not t:
        data = shared_data(new)
        drop_resident(t)
        t._data, t._dtype, t._device = data, new._dtype, new._device
    t._ks = ks | _autograd_bit(ks) if had_grad else ks
    t._base = None


class Module:
    """Base class for all neural network modules, as ``torch.nn.Module``.

    >>> import fnx
    >>> from fnx import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(3, 2)
    ...         self.register_buffer("scale", fnx.ones(2))
    ...     def forward(self, x):
    ...         return self.fc(x) * self.scale
    >>> net = Net()
    >>> net
    Net(
      (fc): Linear(in_features=3, out_features=2, bias=True)
    )
    >>> list(net.state_dict())
    ['scale', 'fc.weight', 'fc.bias']
    >>> net(fnx.ones(4, 3)).shape
    fnx.Size([4, 2])
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument; "
                            f"Module.__init__() takes no arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry()
        d["_buffers"] = _Registry()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = _Registry()
        for name in HOOK_SETS:
            d[name] = IdSet()
        d["_is_full_backward_hook"] = None

    # ------------------------------------------------------------------ forward and hooks
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or
                self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        full = self._is_full_backward_hook is not False and list(self._backward_hooks.values())
        bw_hook = None
        if full or self._backward_pre_hooks:
            bw_hook = BackwardHook(self, full or [], list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except BaseException:
            for hid, hook in list(self._forward_hooks.items()):
                if hid in self._forward_hooks_always_called:
                    self._run_forward_hook(hid, hook, args, kwargs, None)
            raise
        for hid, hook in list(self._forward_hooks.items()):
            res = self._run_forward_hook(hid, hook, args, kwargs, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(f"For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}")
            result = bw_hook.setup_output_hook(result)
        if self._is_full_backward_hook is False and self._backward_hooks:
            put_legacy_hooks(self, args, result)
        return result

    def _run_forward_hook(self, hid, hook, args, kwargs, result):
        if hid in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before ``forward``; a non-None result replaces the arguments."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        insert_hook(self._forward_pre_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` runs after ``forward``; a non-None result
        replaces the output."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        insert_hook(self._forward_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        positional tensor inputs are computed (None for an input that needs none); a
        non-None result replaces ``grad_input``. Only tensors the module takes and returns
        directly (or in a returned tuple) count.

        >>> import fnx
        >>> from fnx import nn
        >>> lin, seen = nn.Linear(2, 1), []
        >>> _ = lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(fnx.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [fnx.Size([3, 1])]
        """
        return self._add_backward_hook(hook, prepend, full=True)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are
        computed, before those of its inputs; a non-None result replaces ``grad_output``."""
        handle = RemovableHandle(self._backward_pre_hooks)
        insert_hook(self._backward_pre_hooks, handle.id, hook, prepend)
        return handle

    def register_backward_hook(self, hook):
        """PyTorch's deprecated form: ``hook(module, grad_input, grad_output)`` put on the
        autograd node of the module's last op, so ``grad_input`` is that op's; prefer
        ``register_full_backward_hook``."""
        return self._add_backward_hook(hook, False, full=False)

    def _add_backward_hook(self, hook, prepend, full):
        """A full (``register_full_backward_hook``) or legacy backward hook: one module
        takes one kind only, as PyTorch's."""
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full
        handle = RemovableHandle(self._backward_hooks)
        insert_hook(self._backward_hooks, handle.id, hook, prepend)
        return handle

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs at the start of this module's
        ``state_dict`` (before its own entries and its children's)."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        """The older form of ``register_state_dict_post_hook``: a non-None result of
        ``hook(module, state_dict, prefix, local_metadata)`` replaces the state dict."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` (``module`` first with ``with_module``) runs at the
        start of this module's ``_load_from_state_dict``: it may rename or drop keys of
        ``state_dict`` (a copy of the one given to ``load_state_dict``) and add to the lists.

        >>> import fnx
        >>> m = fnx.nn.Linear(1, 1)
        >>> def rename(sd, prefix, *rest):
        ...     if prefix + "w" in sd:
        ...         sd[prefix + "weight"] = sd.pop(prefix + "w")
        >>> h = m._register_load_state_dict_pre_hook(rename)
        >>> m.load_state_dict({"w": fnx.ones(1, 1), "bias": fnx.zeros(1)})
        <All keys matched successfully>
        >>> m.weight.item(), h.remove()
        (1.0, None)
        """
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = WrappedHook(
            hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries (see
        ``_register_load_state_dict_pre_hook``)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module
        wrote its entries into a state dict."""
        try:        # marked: it must return None (the older form may replace the dict)
            hook._from_public_api = True
        except AttributeError:      # a bound method takes no attribute (PyTorch fails)
            hook = functools.partial(hook)
            hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after this module and its children
        loaded; it may edit ``incompatible_keys``' lists in place, which ``strict``
        then judges (clearing them avoids the error).  The lists hold every missing and
        unexpected key of the whole load, and every pre-hook has run before the first
        post-hook (PyTorch interleaves them and its lists hold the keys found so far: fnx
        checks every key before it copies anything)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def compile(self, *args, **kwargs) -> None:
        """Compile this module in place, as ``torch.nn.Module.compile``: later calls run its
        hooks and ``forward`` through ``fnx.compile(..., *args, **kwargs)`` (same keywords),
        while the module stays itself (its class, attributes and ``state_dict`` keys).

        >>> import fnx
        >>> model = fnx.nn.Linear(2, 1)
        >>> x = fnx.ones(3, 2)
        >>> eager = model(x)
        >>> model.compile(mode="reduce-overhead")
        >>> type(model).__name__, bool((model(x) - eager).abs().max() < 1e-6)
        ('Linear', True)
        """
        self.__dict__["_compiled_call_impl"] = fnx.compile(_CallImpl(self), *args, **kwargs)
        self.__dict__["_compile_settings"] = (args, kwargs)     # a copy compiles afresh

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer (a tensor that is state but not a parameter, e.g. running
        statistics); ``persistent=False`` keeps it out of ``state_dict``."""
        _guards.bump()
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            f"(fnx Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = _plain(tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (``None`` reserves the name, as an absent bias)."""
        _guards.bump()
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter "
                            f"'{name}' (fnx.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Add a child module (``None`` reserves the name)."""
        _guards.bump()
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        _check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        _guards.bump()          # compiled programs recheck the state they read
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(d, name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                f"(fnx.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(d, name, keep="_modules")
            modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module "
                                f"'{name}' (fnx.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer) or (d.get("_buffers") is not None
                                           and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                f"(fnx.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
                _remove_from(d, name, keep="_buffers")
                self.register_buffer(name, value, persistent)
            else:
                d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _guards.bump()
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in _STORES:
            if type(self.__dict__.get(k)) is dict:
                self.__dict__[k] = _Registry(self.__dict__[k])
        for k in HOOK_SETS:
            self.__dict__.setdefault(k, IdSet())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)
        settings = state.get("_compile_settings")
        if settings is not None:
            self.compile(*settings[0], **settings[1])

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)      # programs of this module's tensors
        for k in _STORES:
            if k in state:
                state[k] = dict(state[k])
        for k in HOOK_SETS:        # empty hook sets are remade by __setstate__: a saved
            if not state.get(k, True):      # module's state is then plain data (fnx.save)
                del state[k]
        return state

    # ------------------------------------------------------------------ iteration
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """``(name, module)`` for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """``(name, parameter)`` pairs, in registration order, shared ones once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return p

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> "Module":
        """Set training mode here and in every descendant (dropout, batch norm...)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, as PyTorch)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None   # without reading .grad (see Optimizer.zero_grad)
            elif p.grad is not None:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn) -> "Module":
        """Call ``fn`` on every submodule (children first) and on ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ device and dtype
    def _apply(self, fn, recurse: bool = True) -> "Module":
        """Convert every parameter, buffer and gradient with ``fn``, in place of the tensor
        objects (a parameter stays the same ``Parameter``)."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for store in (self._parameters, self._buffers):
                for key, t in store.items():
                    if t is None:
                        continue
                    new = fn(t)
                    if new is not t:
                        _assign_into(t, new)
                    g = t.grad
                    if g is not None:
                        new_g = fn(g)
                        if new_g is not g:
                            _assign_into(g, new_g)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, with ``non_blocking=``. Only floating point
        (and complex) tensors change dtype; ``memory_format=`` (``fnx.channels_last``) lays
        out the 4-d and 5-d ones."""
        memory_format = kwargs.pop("memory_format", None)
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            dt = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) \
                else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device, dt, non_blocking=non_blocking, memory_format=memory_format)
            return t.to(device, dt, non_blocking=non_blocking)
        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Give every parameter and buffer uninitialized memory on ``device`` (same shapes
        and dtypes): how a model built on the ``meta`` device gets real storage before its
        initialization runs.

        >>> import fnx
        >>> with fnx.device("meta"):
        ...     m = fnx.nn.Linear(3, 2)
        >>> m.weight.device, m.to_empty(device="cpu").weight.device
        (device(type='meta'), device(type='cpu'))
        >>> _ = m.reset_parameters()
        """
        return self._apply(lambda t: fnx.empty_like(t, device=device), recurse=recurse)

    def cuda(self, device=None) -> "Module":
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> "Module":
        return self._apply(lambda t: t.cpu())

    def share_memory(self) -> "Module":
        """Move every parameter, buffer and gradient into shared memory
        (``Tensor.share_memory_``), so processes the module is sent to by
        ``fnx.multiprocessing`` train the same weights (Hogwild!).

        >>> import fnx
        >>> m = fnx.nn.Linear(2, 1).share_memory()
        >>> m.weight.is_shared(), m.bias.is_shared()
        (True, True)
        """
        return self._apply(lambda t: t.share_memory_())

    def type(self, dst_type) -> "Module":
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer, keyed by dotted path
        (this module's own entries, then each child's), as PyTorch's."""
        if args:    # PyTorch's deprecated positional form (destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix,
                                                            keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, {})
            if res is not None:
                if getattr(hook, "_from_public_api", False):
                    raise RuntimeError("state_dict post-hook must return None")
                destination = res
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if not local_metadata.get(_PRE_HOOKS_RAN, False):
            for hook in self._load_state_dict_pre_hooks.values():
                hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                     error_msgs)
        assign = local_metadata.get("assign_to_params_buffers", False)
        check_only = local_metadata.get(_CHECK_ONLY, False)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'fnx.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if check_only:
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = value if isinstance(value, Parameter) else \
                                Parameter(value, requires_grad=param.requires_grad)
                            self._parameters[name] = new
                        else:
                            self._buffers[name] = value
                    else:
                        param.copy_(value)
            except Exception as ex:     # noqa: BLE001 - reported as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f'dimensions in the model are {param.shape} and whose '
                                  f'dimensions in the checkpoint are {value.shape}, an '
                                  f'exception occurred : {ex.args}.')
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", None) is not None:
            if extra_key in state_dict:
                if not check_only:
                    self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` (in place, keeping the tensor
        objects; ``assign=True`` puts the given tensors in instead).  Returns
        ``(missing_keys, unexpected_keys)``; with ``strict`` either raises, and a shape
        mismatch always raises, a RuntimeError listing every problem.  Every key and shape
        is checked before anything is written: a load that raises leaves the module as it
        was (PyTorch copies the tensors that fit before it raises) -- except for missing or
        unexpected keys when a load-state-dict post-hook is registered, since the hook may
        forgive them: then the tensors that fit are copied first, as PyTorch does.  The
        state dict is copied first; load-state-dict pre-hooks may rename its keys.

        >>> import fnx
        >>> m = fnx.nn.Linear(2, 1)
        >>> before = m.weight.clone()
        >>> try:
        ...     m.load_state_dict({"weight": fnx.zeros(1, 2), "bias": fnx.zeros(3)})
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[1].strip()[:26])
        size mismatch for bias: co
        >>> bool((m.weight == before).all())
        True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        # a copy: pre-hooks may rename keys (weight_norm's old checkpoints)
        state_dict = OrderedDict(state_dict)
        missing, unexpected, errors = [], [], []
        metadata = {"assign_to_params_buffers": assign} if assign else {}

        def load(module, meta, prefix="", lists=(missing, unexpected), post_hooks=True):
            module._load_from_state_dict(state_dict, prefix, dict(meta), True, *lists, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, meta, prefix + name + ".", lists, post_hooks)
            if post_hooks:
                keys = _IncompatibleKeys(missing, unexpected)
                for hook in module._load_state_dict_post_hooks.values():
                    if hook(module, keys) is not None:
                        raise AssertionError(
                            "Hooks registered with ``register_load_state_dict_post_hook`` are "
                            "not expected to return new values, if incompatible_keys need to "
                            "be modified, it should be done inplace.")

        # First every key and shape is checked (and the pre-hooks run), writing nothing;
        # then the copy, which finds the same keys, and the post-hooks.  Post-hooks may
        # forgive missing or unexpected keys, so with any, a strict load copies first and
        # judges after them, as PyTorch's.
        load(self, {**metadata, _CHECK_ONLY: True}, post_hooks=False)
        post = any(m._load_state_dict_post_hooks for m in self.modules())
        if not errors and (post or not (strict and (missing or unexpected))):
            load(self, {**metadata, _PRE_HOOKS_RAN: True}, lists=([], []))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ repr
    def extra_repr(self) -> str:
        """The layer's own settings shown inside its ``repr`` (override in subclasses)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


_guards.register_module_class(Module)


class _CallImpl:
    """What ``Module.compile`` compiles: the module's hooks and forward, without going back
    through ``__call__`` (which would find the compiled version again)."""

    def __init__(self, module):
        self.module = module
        self.__qualname__ = type(module).__qualname__     # the name compile warnings give

    def __call__(self, *args, **kwargs):
        return self.module._call_impl(*args, **kwargs)

    def modules(self):      # the modules it runs (fnx.compile guards their state)
        return self.module.modules()


def _remove_from(d, name, keep=None):
    """Drop ``name`` from every store but ``keep``, the one it is assigned to: a name
    reassigned there keeps its place in the order of ``children()``/``parameters()``/
    ``state_dict()`` (``model.conv1 = nn.Conv2d(...)`` must not move ``conv1`` last)."""
    for store in ("__dict__", "_parameters", "_buffers", "_modules"):
        s = d if store == "__dict__" else d.get(store)
        if store != keep and s is not None and name in s:
            del s[name]
    nps = d.get("_non_persistent_buffers_set")
    if nps is not None:
        nps.discard(name)


def _plain(t: Tensor) -> Tensor:
    """A plain ``Tensor`` sharing ``t``'s data (buffers are stored as plain tensors)."""
    out = object.__new__(Tensor)
    out._data, out._dtype, out._device, out._ks = shared_data(t), t._dtype, t._device, t._ks
    out._vc = t._shared_version_counter()
    return out


def _parse_to(args, kwargs):
    """``(device, dtype, non_blocking)`` from the arguments of ``Module.to``."""
    args = list(args)
    device = dtype = None
    if args:
        a = args.pop(0)
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool) or a is None:
            device = a
            if args and (args[0] is None or isinstance(args[0], D.dtype)):
                dtype = args.pop(0)
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}, ...)")
    non_blocking = args.pop(0) if args else False
    if args:
        raise TypeError("to() received too many positional arguments")
    for k, v in kwargs.items():
        if k == "device":
            device = v
        elif k == "dtype":
            dtype = v
        elif k == "non_blocking":
            non_blocking = v
        elif k != "memory_format":
            raise TypeError(f"to() got an unexpected keyword argument '{k}'")
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    if device is not None:
        device = _device_cls(device) if not isinstance(device, _device_cls) else device
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"to() argument 'dtype' must be fnx.dtype, not {type(dtype).__name__}")
    return device, dtype, non_blocking
