"""The classes and functions a checkpoint may name: what ``fnx.load`` rebuilds beyond
tensors and plain containers, as ``torch.serialization``'s safe globals.

Nothing is allowed by default (PyTorch's ``weights_only=True`` rule): a checkpoint holding
a whole module, or any object of a class, loads only after the user allowed that class.
A name is matched as a string (``module.qualname``) against the allowed objects; nothing
is imported to look it up, so a name in a file never runs code.
"""
from __future__ import annotations

import contextlib
import threading

from .errors import CheckpointError

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "allowed", "refuse", "path_of"]

# Never allowed, even when a user lists something from them (as PyTorch).
BLOCKED_MODULES = ("sys", "os", "posix", "nt", "subprocess", "importlib")

_lock = threading.Lock()
_allowed: list = []         # objects, or (object, "dotted.path") pairs


def path_of(obj) -> str:
    """``module.qualname`` of a class or function: the name a checkpoint stores."""
    return f"{obj.__module__}.{obj.__qualname__}"


def _entry(g):
    if isinstance(g, tuple):
        if len(g) != 2 or not isinstance(g[1], str):
            raise TypeError(f"safe globals: expected a class/function or a (class/function, "
                            f"'dotted.path') pair, got {g!r}")
        return g
    if not hasattr(g, "__qualname__") or not hasattr(g, "__module__"):
        raise TypeError(f"safe globals: expected a class or function, got "
                        f"{type(g).__name__}")
    return g


def add_safe_globals(globals_) -> None:
    """Allow ``fnx.load`` to rebuild objects of these classes (and to call these
    functions) from a checkpoint, as ``torch.serialization.add_safe_globals``.  An entry is
    a class/function, or a ``(class_or_function, "dotted.path")`` pair to accept it under
    another name (a PyTorch checkpoint's ``"torch.nn.modules.linear.Linear"``, say).

    >>> import fnx, io
    >>> m = fnx.nn.Linear(2, 1)
    >>> buf = io.BytesIO()
    >>> fnx.save(m, buf)
    >>> fnx.serialization.add_safe_globals([fnx.nn.Linear])
    >>> _ = buf.seek(0)
    >>> fnx.load(buf)
    Linear(in_features=2, out_features=1, bias=True)
    >>> fnx.serialization.clear_safe_globals()
    """
    entries = [_entry(g) for g in globals_]
    with _lock:
        for e in entries:
            if e not in _allowed:
                _allowed.append(e)


def get_safe_globals() -> list:
    """The classes and functions allowed so far (``add_safe_globals``)."""
    with _lock:
        return list(_allowed)


def clear_safe_globals() -> None:
    """Forget every class and function ``add_safe_globals`` allowed."""
    with _lock:
        _allowed.clear()


@contextlib.contextmanager
def safe_globals(globals_):
    """Allow these classes and functions inside the ``with`` block only.

    >>> import fnx, io
    >>> buf = io.BytesIO()
    >>> fnx.save(fnx.nn.ReLU(), buf)
    >>> _ = buf.seek(0)
    >>> with fnx.serialization.safe_globals([fnx.nn.ReLU]):
    ...     fnx.load(buf)
    ReLU()
    """
    entries = [_entry(g) for g in globals_]
    with _lock:
        added = [e for e in entries if e not in _allowed]
        _allowed.extend(added)
    try:
        yield
    finally:
        with _lock:
            for e in added:
                if e in _allowed:
                    _allowed.remove(e)


def blocked(path: str) -> bool:
    return any(path.startswith(m + ".") for m in BLOCKED_MODULES)


def allowed() -> dict:
    """``{dotted path: object}`` of what the user allowed (never from a blocked module)."""
    with _lock:
        entries = list(_allowed)
    out = {}
    for e in entries:
        if isinstance(e, tuple):
            out[e[1]] = e[0]
        else:
            out[path_of(e)] = e
    return {k: v for k, v in out.items() if not blocked(k)}


def refuse(path: str, where: str, what: str = "global") -> CheckpointError:
    """The error for a name the checkpoint uses that is not allowed."""
    if blocked(path):
        return CheckpointError(f"fnx.load: {where} uses the {what} {path}, from a module "
                               f"whose names are never allowed")
    return CheckpointError(
        f"fnx.load: {where} uses the {what} {path}, which is not allowed by default: fnx.load "
        f"rebuilds only tensors and plain containers unless told otherwise. If you trust "
        f"it, allow it with fnx.serialization.add_safe_globals([{path}]) or inside "
        f"`with fnx.serialization.safe_globals([{path}]):`.")
