"""Which Python frames are the user's: the line an error or a graph break names
(``user_frame``) and the ``warnings.warn`` stacklevel that points at it
(``user_stacklevel``), skipping fnx's own modules and its ops' generated code.
"""
from __future__ import annotations

import os
import sys
import traceback

__all__ = ["user_frame", "user_stacklevel"]


_FNX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_fnx(filename) -> bool:
    """Whether code from ``filename`` is fnx's (its package, or an op's generated code)."""
    return filename.startswith("<fnx") or os.path.abspath(filename).startswith(_FNX_DIR)


def user_frame() -> str:
    """``file:line: code`` of the innermost caller frame outside the fnx package."""
    for frame in reversed(traceback.extract_stack()):
        if not _in_fnx(frame.filename):
            return f"{frame.filename}:{frame.lineno}: {frame.line}"
    return "<unknown line>"


def user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel, for a warning issued by this function's caller,
    that names the first frame outside fnx: the user's line, not fnx's internals."""
    frame, level = sys._getframe(2), 2      # (_getframe(1): the caller, level 1)
    while frame is not None and _in_fnx(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level
