"""CPU tensor storage in POSIX shared memory: what ``Tensor.share_memory_`` moves a
tensor's data into and what ``fnx.multiprocessing`` hands to other processes by name.

A segment is mapped by an ``mmap`` that only NumPy arrays hold (``np.frombuffer``), so the
mapping lives exactly as long as some array over it does; a process that attached a
segment by name (``attach``) writes into the same physical memory as the one that made
it. The process that made a segment unlinks its name when its last array over it dies,
unless the name was handed to another process (``mark_sent``): the receiver may not have
attached it yet, so such a name is unlinked when the maker exits (or by Python's resource
tracker, where the maker is killed). Until then it holds its memory: a process that keeps
sending new tensors (a DataLoader worker, with fnx.multiprocessing imported) keeps all of
them until it exits (PyTorch counts the receivers instead).
"""
from __future__ import annotations

import mmap
import os
import threading
import weakref
from multiprocessing import shared_memory, util

import numpy as np

try:    # the POSIX shm_open that SharedMemory itself uses (attach without tracking)
    import _posixshmem
except ImportError:     # pragma: no cover - Windows
    _posixshmem = None

__all__ = ["share", "attach", "segment_of", "mark_sent", "array_in"]

_lock = threading.Lock()
_owned = {}                 # name -> (SharedMemory, pid of its maker), not unlinked yet
_sent = set()               # names handed to another process: unlinked at exit
_maps = {}                  # id(uint8 array over a segment) -> (name, weakref to the array)


def _map(name, fd, nbytes) -> np.ndarray:
    """A writable uint8 array over an ``mmap`` of ``fd`` (the fd may be closed after),
    known to ``segment_of`` while it lives."""
    raw = np.frombuffer(mmap.mmap(fd, nbytes), np.uint8, nbytes)
    key = id(raw)
    _maps[key] = (name, weakref.ref(raw, lambda _: _maps.pop(key, None)))
    return raw


def share(t) -> None:
    """Copy ``t``'s NumPy storage into a new shared segment and make it ``t``'s storage
    (the same tensor object; the copy is C-contiguous). ``t._data`` must be a NumPy array
    nothing else aliases."""
    # (reshaped back: ascontiguousarray makes a 0-d array 1-d)
    src = np.ascontiguousarray(t._data).reshape(t._data.shape)
    nbytes = max(src.nbytes, 1)
    seg = shared_memory.SharedMemory(create=True, size=nbytes)
    raw = _map(seg.name, seg._fd, nbytes)
    seg.close()         # (its own mapping; ``raw``'s mmap keeps the memory mapped)
    with _lock:
        _owned[seg.name] = (seg, os.getpid())
    weakref.finalize(raw, _release, seg.name)
    arr = raw[:src.nbytes].view(src.dtype).reshape(src.shape)
    arr[...] = src
    t._data = arr


def attach(name: str, nbytes: int) -> np.ndarray:
    """The uint8 array over the segment ``name`` another process made (not tracked here:
    its maker unlinks it)."""
    if _posixshmem is None:     # pragma: no cover - Windows
        raise RuntimeError("fnx.multiprocessing: shared memory needs a POSIX system")
    fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    try:
        return _map(name, fd, max(nbytes, 1))
    finally:
        os.close(fd)


def segment_of(t):
    """``(name, uint8 array, byte offset)`` of the segment ``t``'s data lies in, or None
    (never shared, or the storage was replaced since: ``t.data = ...``, a compiled
    program's result). Found from the NumPy array itself, so every handle on shared data
    (a view, a ``Parameter`` made from it, ``.data``) is shared too."""
    data = t.__dict__.get("_data")
    a = data
    while isinstance(a, np.ndarray):
        hit = _maps.get(id(a))
        if hit is not None and hit[1]() is a:
            return hit[0], a, data.__array_interface__["data"][0] - \
                a.__array_interface__["data"][0]
        a = a.base
    return None


def array_in(raw, shape, dtype, offset, strides) -> np.ndarray:
    """The array of ``shape``, ``dtype`` and byte ``strides`` at byte ``offset`` of ``raw``."""
    return np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=strides)


def mark_sent(name: str) -> None:
    """``name`` was handed to another process: keep it linked until this process exits."""
    with _lock:
        if name in _owned:
            _sent.add(name)


def _release(name):
    with _lock:
        if name in _sent:
            return
        entry = _owned.pop(name, None)
    if entry is not None and entry[1] == os.getpid():   # (not in a forked child)
        _unlink(entry[0])


def _unlink(seg):
    try:
        seg.unlink()
    except FileNotFoundError:
        pass


def _unlink_sent():
    with _lock:
        entries = [_owned.pop(n) for n in list(_sent) if n in _owned]
        _sent.clear()
    for seg, pid in entries:
        if pid == os.getpid():
            _unlink(seg)


# at exit: multiprocessing's exit hook runs in its child processes too (they skip atexit)
util.Finalize(None, _unlink_sent, exitpriority=0)
