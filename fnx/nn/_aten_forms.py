"""The ``torch.*`` forms of functions that ``fnx.nn.functional`` also offers: PyTorch's
top-level losses take ``reduction`` as an integer (0 none, 1 mean, 2 sum) and no
``size_average``/``reduce``; ``conv_tbc`` (F's) at the top level;
``embedding_renorm_`` rescales embedding rows in place.  ``fnx/__init__.py`` offers them as
``fnx.<name>``; each calls the functional form.

>>> import fnx
>>> fnx.margin_ranking_loss(fnx.tensor([1.0, 2.0]), fnx.tensor([2.0, 0.0]),
...                         fnx.tensor([1.0, 1.0]), 0.0, 2)
tensor(1.)
"""
from __future__ import annotations

from . import functional as F
from ._functional_conv_tbc import conv_tbc

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "poisson_nll_loss", "triplet_margin_loss", "ctc_loss", "bilinear", "conv_tbc",
           "embedding_renorm_"]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(name, reduction):
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: {reduction} is not a valid value for reduction "
                         f"(0 none, 1 mean, 2 sum)")
    return _REDUCTIONS[reduction]


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``max(0, -target * (input1 - input2) + margin)``, reduced (``reduction`` an int)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, reduced."""
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``1 - cos`` for similar pairs, ``max(0, cos - margin)`` for dissimilar ones, reduced."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """Poisson negative log likelihood; every argument is required, as in ``torch``."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=1):
    """``max(d(a, p) - d(a, n) + margin, 0)``, reduced."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):
    """Connectionist temporal classification loss, reduced (``reduction`` an int)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction), zero_infinity)


def bilinear(input1, input2, weight, bias=None):
    """``x1^T W x2 + b`` per output feature, as ``torch.bilinear``."""
    return F.bilinear(input1, input2, weight, bias)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale, in place, the rows of ``input`` that ``indices`` picks whose ``norm_type``
    norm exceeds ``max_norm`` to norm ``max_norm`` (PyTorch's ``1e-7`` guard included).

    >>> import fnx
    >>> w = fnx.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> fnx.embedding_renorm_(w, fnx.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_: expected a 2-D weight, but got {input.ndim}-D")
    F._embedding_renorm_(input, indices, max_norm, norm_type)
    return input
