"""``Adadelta``, as ``torch.optim.Adadelta``."""
from __future__ import annotations

from .. import api as fnx
from ._functional import addcmul_, check, check_lr, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Steps scaled by the ratio of running RMS values of past updates and of gradients:
    ``v = rho v + (1 - rho) g^2``, ``delta = sqrt(u + eps) / sqrt(v + eps) * g``,
    ``u = rho u + (1 - rho) delta^2``, ``p -= lr * delta``.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.Adadelta([p], lr=1.0, rho=0.0, eps=1e-6)
    >>> p.grad = fnx.tensor([2.0])
    >>> opt.step()
    >>> round(p.item(), 6)      # 1 - sqrt(1e-6) / sqrt(4 + 1e-6) * 2
    0.999
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        check("rho value", 0.0 <= rho <= 1.0, rho)
        check("epsilon value", 0.0 <= eps, eps)
        check("weight_decay value", 0.0 <= weight_decay, weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
            for p, grad in self._grads(group):
                state = make_state(self.state[p], p, square_avg=lambda: fnx.zeros_like(p),
                                   acc_delta=lambda: fnx.zeros_like(p))
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
                p.sub_(delta * lr)
        self._run_step_hooks((), {})
        return loss
