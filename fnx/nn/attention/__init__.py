"""``fnx.nn.attention``: choosing the attention backend, as ``torch.nn.attention``.

fnx's one attention kernel (XLA's) serves every backend (``fnx.core.sdp_backends``), so
``sdpa_kernel`` changes which backends count as enabled, and attention raises only when
none is.

>>> import fnx, fnx.nn.functional as F
>>> from fnx.nn.attention import SDPBackend, sdpa_kernel
>>> q = fnx.ones(1, 2, 4)
>>> with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
...     F.scaled_dot_product_attention(q, q, q).shape
fnx.Size([1, 2, 4])
"""
from __future__ import annotations

import contextlib

from ...core import sdp_backends
from ...core.sdp_backends import SDPBackend

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# PyTorch warns when a fused kernel cannot run; fnx's one kernel always can.
WARN_FOR_UNFUSED_KERNELS = False


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Context manager (or decorator): only ``backends`` (one ``SDPBackend`` or a list)
    are enabled inside; the previous set is restored on exit. ``set_priority`` (the list's
    order as a preference) has no effect: there is one kernel.

    >>> import fnx, fnx.nn.functional as F
    >>> from fnx.nn.attention import sdpa_kernel
    >>> with sdpa_kernel([]):
    ...     F.scaled_dot_product_attention(fnx.ones(1, 1, 2), fnx.ones(1, 1, 2),
    ...                                    fnx.ones(1, 1, 2))
    Traceback (most recent call last):
        ...
    RuntimeError: scaled_dot_product_attention: No available kernel. Aborting execution. ...
    """
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError(f"Backend must be an instance of SDPBackend, got "
                                 f"{type(b).__name__}")
    before = sdp_backends.enabled()
    for b in SDPBackend:
        if b is not SDPBackend.ERROR:
            sdp_backends.set_enabled(b, b in backends)
    try:
        yield {}
    finally:
        for b in SDPBackend:
            if b is not SDPBackend.ERROR:
                sdp_backends.set_enabled(b, b in before)
