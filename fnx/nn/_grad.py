"""Grad-mode helpers the nn and optim packages share."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad  # noqa: F401
