"""``PairwiseDistance`` and ``CosineSimilarity``: distances between matching rows."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (``F.pairwise_distance``).

    >>> import fnx
    >>> fnx.nn.PairwiseDistance(eps=0.0)(fnx.tensor([[0., 0.]]), fnx.tensor([[3., 4.]]))
    tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

    def extra_repr(self):
        return f"p={self.norm}, eps={self.eps}, keepdim={self.keepdim}"


class CosineSimilarity(Module):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (``F.cosine_similarity``).

    >>> import fnx
    >>> fnx.nn.CosineSimilarity(dim=0)(fnx.tensor([1., 0.]), fnx.tensor([1., 1.]))
    tensor(0.7071)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
