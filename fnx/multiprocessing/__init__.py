"""``torch.multiprocessing``: Python's ``multiprocessing`` with tensors shared by memory.

Everything ``multiprocessing`` offers is here (``Process``, ``Queue``, ``Pool``,
``set_start_method``, ``get_context``, ...). Importing this package registers the
tensor reductions (``reductions``): a CPU tensor sent to another process, as a
``Process`` argument or a ``Queue`` item, moves into shared memory and is received as
a tensor over the same memory, so ``model.share_memory()`` and Hogwild! training work
with every start method (forked children share it as it is). ``spawn`` starts
``fn(i, *args)`` in ``nprocs`` processes.

Both of PyTorch's sharing strategy names are accepted; either way fnx shares by named
POSIX shared memory (as ``file_system``): a segment sent to another process stays linked
until the process that made it exits.

>>> import fnx, fnx.multiprocessing as mp
>>> q = mp.Queue()
>>> x = fnx.zeros(2)
>>> q.put(x); y = q.get()
>>> _ = y.add_(1); x, x.is_shared()
(tensor([1., 1.]), True)
"""
from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403 (the namespace re-exported, as PyTorch does)

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, spawn, start_processes)

__all__ = list(_mp.__all__) + [
    "set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
    "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException"]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how tensors are shared: ``"file_descriptor"`` or ``"file_system"`` (fnx
    shares by named shared memory with either); another name is an AssertionError, as
    PyTorch's assert.

    >>> import fnx.multiprocessing as mp
    >>> mp.set_sharing_strategy("file_system"); mp.get_sharing_strategy()
    'file_system'
    >>> mp.set_sharing_strategy("file_descriptor")
    """
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; expected "
                         f"one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current sharing strategy's name.

    >>> import fnx.multiprocessing as mp
    >>> mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    True
    """
    return _strategy


def get_all_sharing_strategies() -> set:
    """The sharing strategies' names.

    >>> import fnx.multiprocessing as mp
    >>> sorted(mp.get_all_sharing_strategies())
    ['file_descriptor', 'file_system']
    """
    return set(_STRATEGIES)


init_reductions()
