"""``Embedding`` and ``EmbeddingBag``."""
from __future__ import annotations

from ... import api as fnx
from ...core.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _check_padding_idx(padding_idx, num_embeddings):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


class Embedding(Module):
    """A lookup table: ``weight[input]``, weights drawn from N(0, 1); the ``padding_idx``
    row starts at zero and gets no gradient.

    >>> import fnx
    >>> emb = fnx.nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(fnx.tensor([[0, 2], [4, 9]])).shape, emb.weight[0].abs().sum().item()
    (fnx.Size([2, 2, 3]), 0.0)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(fnx.empty(num_embeddings, embedding_dim, device=device,
                                              dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An ``Embedding`` over the given 2-D weights (frozen by default)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, without building the intermediate
    ``(bag, n, dim)`` tensor."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(fnx.empty(num_embeddings, embedding_dim, device=device,
                                              dtype=dtype))
            init.normal_(self.weight)
            if self.padding_idx is not None:
                with no_grad():
                    self.weight[self.padding_idx].fill_(0)
        else:
            self.weight = Parameter(_weight)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An ``EmbeddingBag`` over the given 2-D weights (frozen by default).

        >>> import fnx
        >>> bag = fnx.nn.EmbeddingBag.from_pretrained(fnx.eye(3), mode="sum")
        >>> bag(fnx.tensor([[0, 2], [1, 1]]))
        tensor([[1., 0., 1.],
                [0., 2., 0.]])
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
