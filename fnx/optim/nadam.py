"""``NAdam``, as ``torch.optim.NAdam``: Adam with Nesterov momentum and a momentum decay
schedule (``momentum_decay``), L2 or decoupled weight decay."""
from __future__ import annotations

from .. import api as fnx
from ._functional import addcmul_, as_float64, check, check_adam_args, lerp_, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """With ``mu_t = beta1 (1 - 0.5 * 0.96^(t psi))`` (``psi = momentum_decay``) and their
    running product ``P_t``: ``p -= lr (1 - mu_t) / (1 - P_t) * g / d
    + lr mu_{t+1} / (1 - P_t mu_{t+1}) * m / d``, ``d = sqrt(v / (1 - beta2^t)) + eps``.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.NAdam([p], lr=0.1)
    >>> p.grad = fnx.tensor([2.0])
    >>> opt.step()
    >>> sorted(opt.state[p])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, betas, eps, weight_decay)
        check("momentum_decay value", 0.0 <= momentum_decay, momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (beta1, beta2), lr = group["betas"], group["lr"]
            eps, wd, psi = group["eps"], group["weight_decay"], group["momentum_decay"]
            for p, grad in self._grads(group):
                state = make_state(
                    self.state[p], p,
                    mu_product=lambda: fnx.ones((), dtype=fnx.float32, device=p.device),
                    exp_avg=lambda: fnx.zeros_like(p), exp_avg_sq=lambda: fnx.zeros_like(p))
                t = as_float64(state["step"].add_(1))
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                mu = (1 - 0.5 * 0.96 ** (t * psi)) * beta1
                mu_next = (1 - 0.5 * 0.96 ** ((t + 1) * psi)) * beta1
                # (the product is kept in float32, as PyTorch's state)
                mu_product = as_float64(state["mu_product"].mul_(mu))
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
                denom = (exp_avg_sq / (1 - beta2 ** t)).sqrt().add_(eps)
                p.sub_(grad / denom * ((1 - mu) / (1 - mu_product) * lr))
                p.sub_(exp_avg / denom * (mu_next / (1 - mu_product * mu_next) * lr))
        self._run_step_hooks((), {})
        return loss
