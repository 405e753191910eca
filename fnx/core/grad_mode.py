"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Grad mode is the thread-local exclude set: with grad disabled every Autograd key is
excluded, so calls skip the autograd kernels entirely and results do not require grad.
Each guard saves and restores the mask, so nesting works both ways.
"""
from __future__ import annotations

import functools

from . import tls
from .dispatch_key import AUTOGRAD_BITS

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


def is_grad_enabled() -> bool:
    """True unless inside ``no_grad()`` (or ``set_grad_enabled(False)``).

    >>> import fnx
    >>> with fnx.no_grad():
    ...     fnx.is_grad_enabled()
    False
    """
    return tls.state.mask & AUTOGRAD_BITS == AUTOGRAD_BITS


class _GradModeGuard:
    """Sets grad mode on enter, restores on exit; also usable as a decorator."""
    enabled = True

    def __enter__(self):
        self._saved = tls.state.mask
        if self.enabled:
            tls.state.mask = self._saved | AUTOGRAD_BITS
        else:
            tls.state.mask = self._saved & ~AUTOGRAD_BITS
        return self

    def __exit__(self, *exc):
        tls.state.mask = self._saved
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)._fresh(self):
                return fn(*args, **kwargs)
        return wrapper

    @staticmethod
    def _fresh(guard):
        g = object.__new__(type(guard))
        g.__dict__.update(guard.__dict__)
        return g


class no_grad(_GradModeGuard):
    """Disable gradient recording: results of ops do not require grad.

    >>> import fnx
    >>> x = fnx.ones(2, requires_grad=True)
    >>> with fnx.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """
    enabled = False


class enable_grad(_GradModeGuard):
    """Enable gradient recording inside a ``no_grad`` block.

    >>> import fnx
    >>> x = fnx.ones(2, requires_grad=True)
    >>> with fnx.no_grad(), fnx.enable_grad():
    ...     (x * 2).requires_grad
    True
    """
    enabled = True


class set_grad_enabled(_GradModeGuard):
    """Set grad mode to ``mode``; takes effect at once (like PyTorch) and as a context manager.

    >>> import fnx
    >>> with fnx.set_grad_enabled(False):
    ...     fnx.is_grad_enabled()
    False
    >>> fnx.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        self.enabled = bool(mode)
        self._prev = tls.state.mask
        # Called as a plain function it sets the mode for the rest of the thread.
        tls.state.mask = (self._prev | AUTOGRAD_BITS) if self.enabled else \
            (self._prev & ~AUTOGRAD_BITS)

    def __enter__(self):
        self._saved = self._prev
        return self


class inference_mode(_GradModeGuard):
    """``no_grad`` for inference (``inference_mode(False)`` leaves grad mode as it is).

    fnx has no separate inference tensors: results made here are ordinary tensors that do
    not require grad.

    >>> import fnx
    >>> with fnx.inference_mode():
    ...     (fnx.ones(2, requires_grad=True) + 1).requires_grad
    False
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self._saved = tls.state.mask
        if self.mode:
            tls.state.mask = self._saved & ~AUTOGRAD_BITS
            tls.state.inference_depth += 1
        return self

    def __exit__(self, *exc):
        tls.state.mask = self._saved
        if self.mode:
            tls.state.inference_depth -= 1
        return False


def is_inference_mode_enabled() -> bool:
    return tls.state.inference_depth > 0
