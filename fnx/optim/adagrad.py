"""``Adagrad``, as ``torch.optim.Adagrad`` (``lr_decay``, ``initial_accumulator_value``)."""
from __future__ import annotations

from .. import api as fnx
from ._functional import addcmul_, as_float64, check, check_lr, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Each coordinate's step divided by the root of its summed squared gradients:
    ``s += g^2``, ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``.

    The state is made with the optimizer (as PyTorch's: ``sum`` starts at
    ``initial_accumulator_value``).

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.Adagrad([p], lr=0.5)
    >>> p.grad = fnx.tensor([4.0])
    >>> opt.step()
    >>> round(p.item(), 4)      # 1 - 0.5 * 4 / sqrt(16)
    0.5
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        check("lr_decay value", 0.0 <= lr_decay, lr_decay)
        check("weight_decay value", 0.0 <= weight_decay, weight_decay)
        check("initial_accumulator_value value", 0.0 <= initial_accumulator_value,
              initial_accumulator_value)
        check("epsilon value", 0.0 <= eps, eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self._make_state(p, group)

    def _make_state(self, p, group):
        init = dict.__getitem__(group, "initial_accumulator_value")
        return make_state(self.state[p], p, sum=lambda: fnx.full_like(p, init))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            wd = group["weight_decay"]
            for p, grad in self._grads(group):
                state = self._make_state(p, group)
                step = state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                clr = ((as_float64(step) - 1) * lr_decay + 1).reciprocal().mul(lr)
                s = addcmul_(state["sum"], grad, grad, 1)
                p.sub_(grad / s.sqrt().add_(eps) * clr)
        self._run_step_hooks((), {})
        return loss
