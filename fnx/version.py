"""``fnx.version``, as ``torch.version``: fnx's version, and the CUDA its GPU support is
built for (the CUDA of the installed ``jax-cuda*-plugin``; None without one).

``__version__`` is a string that also compares with version strings and tuples by number
(``fnx.__version__ >= (0, 1)``), as ``torch.__version__`` does.

>>> import fnx
>>> fnx.__version__ >= "0.1" and fnx.__version__ < (99,)
True
>>> fnx.version.hip is None
True
"""
from __future__ import annotations

import re
from importlib import metadata

__all__ = ["__version__", "cuda", "hip", "debug", "Version"]


class Version(str):
    """A version string compared by its leading numbers (``"0.10" > "0.9"``), with
    another version string or a tuple of ints."""

    def _key(self, other=None):
        return _numbers(str(self) if other is None else other)

    def __lt__(self, other):
        return self._key() < self._key(other)

    def __le__(self, other):
        return self._key() <= self._key(other)

    def __gt__(self, other):
        return self._key() > self._key(other)

    def __ge__(self, other):
        return self._key() >= self._key(other)

    def __eq__(self, other):
        if isinstance(other, tuple):
            return self._key() == _numbers(other)
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _numbers(v) -> tuple:
    if isinstance(v, tuple):
        parts = list(v)
    else:
        release = re.match(r"\d+(\.\d+)*", str(v))
        if release is None:
            raise TypeError(f"cannot compare a version with {v!r}")
        parts = [int(p) for p in release.group(0).split(".")]
    while len(parts) > 1 and parts[-1] == 0:      # 0.1 == 0.1.0
        parts.pop()
    return tuple(parts)


def _installed(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _cuda():
    """major.minor of the CUDA runtime the JAX CUDA plugin brings, if one is installed."""
    for major in ("13", "12"):
        if _installed(f"jax-cuda{major}-plugin") is None:
            continue
        runtime = _installed(f"nvidia-cuda-runtime-cu{major}") or \
            _installed("nvidia-cuda-runtime")
        return ".".join(runtime.split(".")[:2]) if runtime else major
    return None


__version__ = Version(_installed("fnx") or "0.1.0")
cuda = _cuda()
hip = None
debug = False
