"""``RAdam``, as ``torch.optim.RAdam``: Adam whose adaptive step is rectified while the
variance estimate is unreliable (L2 or decoupled weight decay)."""
from __future__ import annotations

from .. import api as fnx
from ._functional import addcmul_, as_float64, check_adam_args, lerp_, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """With ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2^t /
    (1 - beta2^t)``: while ``rho_t <= 5`` the step is ``lr * m_hat`` (SGD with momentum);
    after, ``lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)`` with the rectifier
    ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    The choice is a ``where`` on tensors, so a compiled step does not bake in ``t``.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.RAdam([p], lr=0.1)
    >>> p.grad = fnx.tensor([2.0])
    >>> opt.step()
    >>> round(p.item(), 4)      # the first steps are momentum SGD: 1 - 0.1 * 2
    0.8
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), lr = group["betas"], group["lr"]
            eps, wd = group["eps"], group["weight_decay"]
            for p, grad in self._grads(group):
                state = make_state(self.state[p], p, exp_avg=lambda: fnx.zeros_like(p),
                                   exp_avg_sq=lambda: fnx.zeros_like(p))
                t = as_float64(state["step"].add_(1))
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                bc1 = 1 - beta1 ** t
                bc2 = 1 - beta2 ** t
                m_hat = exp_avg / bc1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * t * beta2 ** t / bc2
                rectified = rho_t > 5.0
                # the rectifier's radicand is negative while rho_t < 4: clamp it for the
                # branch ``where`` drops
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf /
                        ((rho_inf - 4) * (rho_inf - 2) * rho_t)).clamp(min=0).sqrt()
                adaptive = bc2.sqrt() / exp_avg_sq.sqrt().add_(eps)
                scale = fnx.where(rectified, adaptive * rect, fnx.ones_like(adaptive))
                p.sub_(m_hat * lr * scale)
        self._run_step_hooks((), {})
        return loss
