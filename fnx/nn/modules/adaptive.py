"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. 2017 ("Efficient
softmax approximation for GPUs"), as ``torch.nn.AdaptiveLogSoftmaxWithLoss``.

The classes, sorted by frequency, are split by ``cutoffs`` into a shortlist and clusters.
The head scores the shortlist plus one entry per cluster; a class in cluster ``i`` has
log-probability ``head[cluster i] + log_softmax(tail_i(x))[class]``, where ``tail_i``
projects ``x`` to ``in_features // div_value ** (i + 1)`` features first. Only the rows
whose target falls in a cluster run that cluster's tail.
"""
from __future__ import annotations

from collections import namedtuple

from ... import api as fnx
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` classes split at ``cutoffs``; ``forward(input,
    target)`` returns ``(output, loss)``: each row's target log-probability and their
    negated mean. ``log_prob(input)`` gives every class's, ``predict(input)`` the most
    likely class.

    >>> import fnx
    >>> _ = fnx.manual_seed(0)
    >>> asm = fnx.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7], div_value=2.0)
    >>> x = fnx.randn(3, 8)
    >>> out, loss = asm(x, fnx.tensor([1, 5, 9]))
    >>> out.shape, bool(loss == -out.mean())
    (fnx.Size([3]), True)
    >>> bool(fnx.allclose(asm.log_prob(x).exp().sum(1), fnx.ones(3)))
    True
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 "
                             "and n_classes-1")
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = input.new_zeros(n)
        # the head entry each row reads: its class (shortlist) or its cluster's entry
        head_index = target.new_empty(n)
        bounds = [0] + self.cutoffs
        covered = 0
        for i, (low, high) in enumerate(zip(bounds[:-1], bounds[1:])):
            in_range = (target >= low) & (target < high)
            rows = in_range.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            if i == 0:
                head_index.index_copy_(0, rows, target[in_range])
                continue
            logp = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = logp.gather(1, (target[in_range] - low).unsqueeze(1)).squeeze(1)
            output.index_copy_(0, rows, local)
            head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
        if covered != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logp = F.log_softmax(self.head(input), dim=1)
        output = output + head_logp.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logp = F.log_softmax(head_output, dim=1)
        parts = [head_logp[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = F.log_softmax(projection(input), dim=1)
            parts.append(cluster + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return fnx.cat(parts, dim=1)

    def log_prob(self, input):
        """The log-probability of every class, ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (``log_prob(input).argmax(1)``, computing the
        clusters only for rows whose best head entry is a cluster)."""
        head_output = self.head(input)
        best = fnx.argmax(head_output, dim=1)
        outside = best >= self.shortlist_size
        if not outside.any():
            return best
        if outside.all():
            return fnx.argmax(self._full_log_prob(input, head_output), dim=1)
        best[outside] = fnx.argmax(self._full_log_prob(input[outside], head_output[outside]),
                                   dim=1)
        return best
