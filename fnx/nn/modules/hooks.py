"""The hook bookkeeping of ``nn.Module``: the handle ``register_*_hook`` returns, the
ordered collections hooks are kept in, and the wrapper that hands a load-state-dict hook
its module.
"""
from __future__ import annotations

import functools
import itertools
import weakref

from ...graph import guards

__all__ = ["RemovableHandle", "IdSet", "WrappedHook", "HOOK_SETS", "insert_hook"]


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods: ``remove()`` unregisters the hook.
    Also a context manager that removes it on exit."""

    _next_id = itertools.count()

    def __init__(self, *hooks_dicts, extra_dict=None):
        self.hooks_dicts_ref = tuple(weakref.ref(d) for d in hooks_dicts)
        self.id = next(RemovableHandle._next_id)
        self.extra_dicts_ref = tuple(weakref.ref(d) for d in
                                     (extra_dict if isinstance(extra_dict, (list, tuple))
                                      else [extra_dict] if extra_dict is not None else []))

    def remove(self) -> None:
        removed = False
        for ref in self.hooks_dicts_ref + self.extra_dicts_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]
                removed = True
        if removed:
            guards.bump()       # (a compiled forward ran the hook: guards.module_state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class IdSet(dict):
    """A weak-referenceable dict used as a set of hook ids."""


# The hook collections every module has (``__init__``).
HOOK_SETS = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
              "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
              "_backward_pre_hooks", "_state_dict_hooks",
              "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
              "_load_state_dict_post_hooks")


class WrappedHook:
    """A load-state-dict pre-hook given the module as its first argument (held weakly,
    so the hook does not keep its module alive) when registered ``with_module``."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.module = weakref.ref(module) if module is not None else None

    def __call__(self, *args, **kwargs):
        if self.module is None:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self):
        return {"hook": self.hook, "module": self.module() if self.module else None,
                "with_module": self.module is not None}

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.module = None
        if state["with_module"]:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def insert_hook(hooks: dict, hid, hook, prepend: bool) -> None:
    """Put ``hook`` under id ``hid`` in ``hooks`` (first with ``prepend``); compiled
    functions that reach the module trace again (``guards.module_state``)."""
    guards.bump()
    hooks[hid] = hook
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks.update([items[-1]] + items[:-1])
