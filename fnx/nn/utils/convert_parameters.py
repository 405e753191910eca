"""A model's parameters as one flat vector, and back."""
from __future__ import annotations

from ... import api as fnx
from ...core.grad_mode import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Every parameter flattened and concatenated.

    >>> import fnx
    >>> fnx.nn.utils.parameters_to_vector(fnx.nn.Linear(3, 2).parameters()).shape
    fnx.Size([8])
    """
    return fnx.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters, in place."""
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view_as(p))
            offset += n
