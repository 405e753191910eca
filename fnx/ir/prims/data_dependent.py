"""Data-dependent prims: nonzero, whose output shape depends on the values (no meta
function can give it: the meta raises, and traced code runs it eagerly)."""
from __future__ import annotations

from ..registry import nondifferentiable
from ._common import prim
from .checks import check_tensor

__all__ = ["nonzero", "nonzero_check"]


def _nonzero_meta(self):
    raise NotImplementedError("prims.nonzero: output shape depends on data")


def nonzero_check(self):
    check_tensor("nonzero", "self", self)


nonzero = prim("nonzero(Tensor self) -> Tensor", _nonzero_meta)
nondifferentiable(nonzero)
