"""The fallbacks fnx installs at import: the keys an op passes through unless it says otherwise.

- BackendSelect: only factories (no tensor argument) have a kernel there.
- Autocast*: only ops with a cast policy have kernels.
- Autograd*: fnx.autograd installs the real fallback (differentiate through the op's
  decomposition, or record a node that refuses backward); fallthrough until then.
- ADInplaceOrView: only ops that write or alias need bookkeeping.
- Tracer: one boxed fallback hands every call to the active interpreter mode
  (fnx.dispatch.modes: the tracer, the decomposer).
"""
from ..core.dispatch_key import AUTOCAST_KEYS, AUTOGRAD_KEYS, DispatchKey
from . import modes
from .dispatcher import FALLTHROUGH, register_fallback


def install() -> None:
    for key in (DispatchKey.BackendSelect, DispatchKey.ADInplaceOrView, *AUTOCAST_KEYS,
                *AUTOGRAD_KEYS):
        register_fallback(key, FALLTHROUGH)
    modes.install()
