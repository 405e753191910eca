"""The dispatcher: keys, keysets, thread-local guards and per-operator tables."""
from ..core.dispatch_key import AliasKey, DispatchKey, DispatchKeySet, below
from ..core.tls import (ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard, local_exclude_set,
                        local_include_set)
from .dispatcher import (FALLTHROUGH, OpOverload, OpOverloadPacket, all_ops, define, get_op, ops,
                         register_fallback)

__all__ = ["DispatchKey", "DispatchKeySet", "AliasKey", "below", "OpOverload",
           "OpOverloadPacket", "FALLTHROUGH", "register_fallback", "define", "get_op",
           "all_ops", "ops", "IncludeDispatchKeyGuard", "ExcludeDispatchKeyGuard",
           "local_include_set", "local_exclude_set"]
