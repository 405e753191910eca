"""Sparse tensors on the CPU: the SparseCPU (COO) and SparseCsrCPU (csr/csc/bsr/bsc) keys.

A sparse tensor's ``_data`` is a ``SparseStorage`` (its component tensors) and its keyset
holds one of these keys, which sit above the dense backends: a call with a sparse operand
runs the kernel registered for the key (``kernels.py``), or the key's fallback, which
raises PyTorch's NotImplementedError naming the op. Composite kernels (decompositions) do
not apply to these keys: a dense decomposition reading a sparse operand would be wrong.
"""
from __future__ import annotations

from ...core.dispatch_key import SPARSE_KEYS
from ...dispatch.dispatcher import register_fallback
from . import kernels, storage
from .storage import SparseStorage, make_compressed, make_coo

__all__ = ["SparseStorage", "make_coo", "make_compressed", "kernels", "storage", "install"]


def _not_implemented(op, ks, args, kwargs):
    key = ks.highest_priority_key()
    have = ", ".join(k.name for k in op.registered_keys()) or "none"
    raise NotImplementedError(
        f"Could not run '{op.qualname}' with arguments from the '{key.name}' backend. This "
        f"could be because the operator doesn't exist for this backend. '{op.qualname}' is "
        f"only available for these backends: [{have}].")


def install() -> None:
    for key in SPARSE_KEYS:
        register_fallback(key, _not_implemented)
