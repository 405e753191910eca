"""The collective watchdog: a collective that does not complete within the process
group's ``timeout`` (a rank never joined it, or died inside it) ends this process with a
message naming the op, as PyTorch's NCCL watchdog does. A hang would otherwise last
forever: XLA's collectives cannot be cancelled, and the launcher only acts on an exit."""
from __future__ import annotations

import json
import os
import sys
import threading
import time

from .process_group import _STATE, ERROR_FILE_ENV

__all__ = ["watch", "done"]

_pending = {}           # id(work) -> (work, op name, deadline)
_lock = threading.Lock()
_thread = None


def watch(work, op: str) -> None:
    """Start timing ``work`` (a collective in flight) against the group's timeout."""
    global _thread
    timeout = _STATE.get("timeout")
    if not _STATE.get("distributed") or timeout is None:
        return
    with _lock:
        _pending[id(work)] = (work, op, time.monotonic() + timeout)
        if _thread is None:
            _thread = threading.Thread(target=_loop, name="fnx-distributed-watchdog",
                                       daemon=True)
            _thread.start()


def done(work) -> None:
    with _lock:
        _pending.pop(id(work), None)


def _loop():
    while True:
        timeout = _STATE.get("timeout") or 1.0
        time.sleep(min(1.0, timeout / 4))
        now = time.monotonic()
        with _lock:
            items = list(_pending.items())
        for key, (work, op, deadline) in items:
            if work.is_completed():
                done(work)
            elif now > deadline:
                _abort(op, timeout)


def _abort(op, timeout):
    msg = (f"fnx.distributed: {op} on rank {_STATE['rank']} did not complete within the "
           f"process group's timeout ({timeout:g} s): a rank did not join it or died in it")
    print(msg, file=sys.stderr, flush=True)
    path = os.environ.get(ERROR_FILE_ENV)
    if path:
        with open(path, "w") as f:
            json.dump({"time": time.time(), "error": f"RuntimeError: {msg}"}, f)
    sys.stdout.flush()
    os._exit(1)
