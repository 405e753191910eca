"""Autograd anomaly mode's switches (``torch.set_anomaly_enabled``,
``torch.autograd.detect_anomaly``): when on with its NaN check, the backward pass raises
as soon as a node returns a NaN gradient, naming the node (``fnx/autograd/engine.py``).
Process-wide, as PyTorch's."""
from __future__ import annotations

__all__ = ["set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_state = {"enabled": False, "check_nan": True}


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly mode and its NaN check.

    >>> import fnx
    >>> fnx.set_anomaly_enabled(True, check_nan=False)
    >>> fnx.is_anomaly_enabled(), fnx.is_anomaly_check_nan_enabled()
    (True, False)
    >>> fnx.set_anomaly_enabled(False)
    """
    _state["enabled"], _state["check_nan"] = bool(enabled), bool(check_nan)


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on.

    >>> import fnx
    >>> fnx.is_anomaly_enabled()
    False
    """
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks gradients for NaN (True unless turned off).

    >>> import fnx
    >>> fnx.is_anomaly_check_nan_enabled()
    True
    """
    return _state["check_nan"]
