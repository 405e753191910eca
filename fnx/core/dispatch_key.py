"""Dispatch keys and keysets.

A key's value is its bit in a keyset; a higher value is a higher priority, so the
key that handles a call is ``keyset.bit_length() - 1``.  The order (lowest first):

- ``Meta, CPU, CUDA, PrivateUse1``: backends, the keys that own data.
- ``SparseCPU, SparseCsrCPU``: sparse tensors (COO; compressed rows/columns) on the CPU:
  above the dense backends, so a call mixing sparse and dense operands runs the sparse
  kernel; only their registered kernels apply (no composite kernel), else their fallback
  raises PyTorch's NotImplementedError (``fnx.backends.sparse``).
- ``BackendSelect``: factories with no tensor argument pick a backend from ``device=``.
- ``Tracer``: records the IR; below autograd so a traced training step records backward too.
- ``Functionalize``: in-place and view ops become functional ops for immutable backends.
- ``ADInplaceOrView``: version counters and view bookkeeping, before any backend runs.
- ``Autograd<Backend>``: records ``grad_fn``.
- ``Autocast<Backend>``: casts first, so autograd sees the casts.
"""
from __future__ import annotations

import enum

__all__ = ["DispatchKey", "DispatchKeySet"]


class DispatchKey(enum.IntEnum):
    """Runtime dispatch keys, by priority (a larger value wins)."""
    Meta = 0
    CPU = 1
    CUDA = 2
    PrivateUse1 = 3
    SparseCPU = 4
    SparseCsrCPU = 5
    BackendSelect = 6
    Tracer = 7
    Functionalize = 8
    ADInplaceOrView = 9
    AutogradOther = 10
    AutogradMeta = 11
    AutogradCPU = 12
    AutogradCUDA = 13
    AutogradPrivateUse1 = 14
    AutocastCPU = 15
    AutocastCUDA = 16
    AutocastPrivateUse1 = 17

    @property
    def bit(self) -> int:
        return 1 << self.value


class AliasKey(enum.Enum):
    """Keys that name a group of runtime keys at registration time only.

    ``CompositeExplicitAutograd``: one kernel for every backend key.
    ``CompositeImplicitAutograd``: the op's decomposition, used by every key
    (autograd then differentiates through the ops it calls).
    ``Autograd``: every ``Autograd<Backend>`` key.
    """
    CompositeExplicitAutograd = "CompositeExplicitAutograd"
    CompositeImplicitAutograd = "CompositeImplicitAutograd"
    Autograd = "Autograd"
    Autocast = "Autocast"


NUM_KEYS = len(DispatchKey)
KEYS = tuple(DispatchKey)
BACKEND_KEYS = (DispatchKey.Meta, DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.PrivateUse1)
# sparse layouts' keys: they own data (a tensor's backend key) but take no composite kernel
SPARSE_KEYS = (DispatchKey.SparseCPU, DispatchKey.SparseCsrCPU)
AUTOGRAD_KEYS = (DispatchKey.AutogradOther, DispatchKey.AutogradMeta, DispatchKey.AutogradCPU,
                 DispatchKey.AutogradCUDA, DispatchKey.AutogradPrivateUse1)
AUTOCAST_KEYS = (DispatchKey.AutocastCPU, DispatchKey.AutocastCUDA,
                 DispatchKey.AutocastPrivateUse1)
AUTOGRAD_FOR_BACKEND = {
    DispatchKey.Meta: DispatchKey.AutogradMeta, DispatchKey.CPU: DispatchKey.AutogradCPU,
    DispatchKey.CUDA: DispatchKey.AutogradCUDA,
    DispatchKey.PrivateUse1: DispatchKey.AutogradPrivateUse1,
}
# a sparse CPU tensor's autograd key is AutogradCPU's, as in PyTorch
AUTOGRAD_FOR_SPARSE = {DispatchKey.SparseCPU: DispatchKey.AutogradCPU,
                       DispatchKey.SparseCsrCPU: DispatchKey.AutogradCPU}
AUTOCAST_FOR_BACKEND = {
    DispatchKey.CPU: DispatchKey.AutocastCPU, DispatchKey.CUDA: DispatchKey.AutocastCUDA,
    DispatchKey.PrivateUse1: DispatchKey.AutocastPrivateUse1,
}


def _bits(keys) -> int:
    r = 0
    for k in keys:
        r |= 1 << k
    return r


BACKEND_BITS = _bits(BACKEND_KEYS + SPARSE_KEYS)   # the keys that own a tensor's data
AUTOGRAD_BITS = _bits(AUTOGRAD_KEYS)
SPARSE_BITS = _bits(SPARSE_KEYS)
AUTOCAST_BITS = _bits(AUTOCAST_KEYS)
FULL = (1 << NUM_KEYS) - 1
# The keysets of a new tensor of the built-in data-owning backends (CUDA, a functional
# backend, adds Functionalize: fnx.backends.cuda).
CPU_KS = (1 << DispatchKey.CPU) | (1 << DispatchKey.ADInplaceOrView)
META_KS = (1 << DispatchKey.Meta) | (1 << DispatchKey.ADInplaceOrView)
SPARSE_KS = (1 << DispatchKey.SparseCPU) | (1 << DispatchKey.ADInplaceOrView)
SPARSE_CSR_KS = (1 << DispatchKey.SparseCsrCPU) | (1 << DispatchKey.ADInplaceOrView)


def below(key: DispatchKey) -> int:
    """The mask of keys strictly below ``key`` (what a kernel at ``key`` redispatches to)."""
    return (1 << int(key)) - 1


def _as_bits(x) -> int:
    return 1 << x if isinstance(x, DispatchKey) else int(x)


class DispatchKeySet(int):
    """An immutable set of dispatch keys stored as an int bitset.

    >>> from fnx.dispatch import DispatchKey as K, DispatchKeySet
    >>> ks = DispatchKeySet(K.CPU, K.AutogradCPU)
    >>> ks.highest_priority_key(), K.CPU in ks
    (<DispatchKey.AutogradCPU: 12>, True)
    """

    def __new__(cls, *keys):
        if len(keys) == 1 and not isinstance(keys[0], DispatchKey):
            arg = keys[0]
            bits = int(arg) if isinstance(arg, int) else _bits(arg)
        else:
            bits = _bits(keys)
        return super().__new__(cls, bits)

    def __contains__(self, key) -> bool:
        return bool(int(self) >> int(key) & 1)

    def add(self, key) -> "DispatchKeySet":
        return DispatchKeySet(int(self) | 1 << int(key))

    def remove(self, key) -> "DispatchKeySet":
        return DispatchKeySet(int(self) & ~(1 << int(key)))

    # A DispatchKey operand means its bit, not its value (``ks | DispatchKey.CPU``).
    def __or__(self, other):
        return DispatchKeySet(int(self) | _as_bits(other))

    __ror__ = __or__

    def __and__(self, other):
        return DispatchKeySet(int(self) & _as_bits(other))

    __rand__ = __and__

    def __sub__(self, other):
        return DispatchKeySet(int(self) & ~_as_bits(other))

    def highest_priority_key(self):
        """The key a call with this keyset dispatches to (None when empty)."""
        n = int(self).bit_length()
        return KEYS[n - 1] if n else None

    def __iter__(self):
        """Keys from highest to lowest priority."""
        return (k for k in reversed(KEYS) if int(self) >> k & 1)

    def __len__(self):
        return bin(int(self)).count("1")

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(k.name for k in self) + ")"
