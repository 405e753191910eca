"""``SparseAdam``, as ``torch.optim.SparseAdam``.

fnx has no sparse tensors, so no parameter can have the sparse gradient this optimizer is
for (``nn.Embedding(sparse=True)`` gives dense ones): ``step`` raises PyTorch's error for a
dense gradient. It is here so programs that build one import and construct.
"""
from __future__ import annotations

from ._functional import check, check_lr
from .optimizer import Optimizer, _use_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients; fnx's gradients are dense, so ``step`` raises.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.ones(2))
    >>> opt = fnx.optim.SparseAdam([p])
    >>> p.grad = fnx.ones(2)
    >>> opt.step()
    Traceback (most recent call last):
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_lr(lr)
        check("epsilon value", 0.0 < eps, eps)
        check("beta parameter at index 0", 0.0 <= betas[0] < 1.0, betas[0])
        check("beta parameter at index 1", 0.0 <= betas[1] < 1.0, betas[1])
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        self._run_step_hooks((), {})
        return loss
