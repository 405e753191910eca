"""``AdamW``: Adam with decoupled weight decay, as ``torch.optim.AdamW``."""
from __future__ import annotations

from ._functional import check_adam_args
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameters directly (``p *= 1 - lr * wd``)
    instead of adding ``wd * p`` to the gradient.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.AdamW([p], lr=0.1, weight_decay=0.5)
    >>> p.grad = fnx.tensor([0.0])
    >>> opt.step()
    >>> round(p.item(), 4)
    0.95
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)
