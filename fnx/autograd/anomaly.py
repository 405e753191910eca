"""``detect_anomaly`` and ``set_detect_anomaly``: context managers (and decorators) that
switch anomaly mode (``fnx.core.anomaly_mode``) for a block; the engine then raises on the
first NaN gradient, naming the node that returned it."""
from __future__ import annotations

import functools
import warnings

from ..core import anomaly_mode

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class set_detect_anomaly:
    """Anomaly mode on or off (``mode``) inside the block, restored after.

    >>> import fnx
    >>> with fnx.autograd.set_detect_anomaly(True):
    ...     fnx.is_anomaly_enabled()
    True
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (anomaly_mode.is_anomaly_enabled(), anomaly_mode.is_anomaly_check_nan_enabled())
        self.mode, self.check_nan = bool(mode), bool(check_nan)
        anomaly_mode.set_anomaly_enabled(self.mode, self.check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        anomaly_mode.set_anomaly_enabled(*self.prev)
        return False


class detect_anomaly:
    """Anomaly mode on inside the block (or the decorated function): a NaN gradient stops
    the backward pass with an error naming the node.

    >>> import fnx
    >>> x = fnx.tensor([0.0], requires_grad=True)
    >>> with fnx.autograd.detect_anomaly():
    ...     (x.sqrt() * 0).sum().backward()
    Traceback (most recent call last):
        ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.prev = None
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (anomaly_mode.is_anomaly_enabled(), anomaly_mode.is_anomaly_check_nan_enabled())
        anomaly_mode.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        anomaly_mode.set_anomaly_enabled(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper
