"""``Adamax``, as ``torch.optim.Adamax``: Adam with the infinity norm."""
from __future__ import annotations

from .. import api as fnx
from ._functional import as_float64, check_adam_args, lerp_, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """``m = beta1 m + (1 - beta1) g``, ``u = max(beta2 u, |g| + eps)``,
    ``p -= lr / (1 - beta1^t) * m / u``.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.Adamax([p], lr=0.1, eps=0.0)
    >>> p.grad = fnx.tensor([-3.0])
    >>> opt.step()
    >>> round(p.item(), 4)      # the first step moves by lr
    1.1
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), lr = group["betas"], group["lr"]
            eps, wd = group["eps"], group["weight_decay"]
            for p, grad in self._grads(group):
                state = make_state(self.state[p], p, exp_avg=lambda: fnx.zeros_like(p),
                                   exp_inf=lambda: fnx.zeros_like(p))
                step = state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                lerp_(exp_avg, grad, 1 - beta1)
                exp_inf.copy_(fnx.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                clr = (1 - beta1 ** as_float64(step)).reciprocal().mul(lr)
                p.sub_(exp_avg / exp_inf * clr)
        self._run_step_hooks((), {})
        return loss
