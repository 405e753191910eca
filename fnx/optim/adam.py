"""``Adam``, as ``torch.optim.Adam`` (with ``amsgrad``, ``maximize``, L2 weight decay)."""
from __future__ import annotations

from .. import api as fnx
from .. import compiler
from ._functional import addcmul_, check_adam_args, lerp_
from .optimizer import Optimizer, _use_grad

__all__ = ["Adam"]



def adam_update(p, grad, state, *, lr, beta1, beta2, eps, amsgrad, step):
    """One Adam step on ``p`` from ``grad`` (weight decay already folded in), with the
    bias corrections computed from the ``step`` tensor."""
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    lerp_(exp_avg, grad, 1 - beta1)
    addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
    # in float64: 1 - beta2 ** step loses digits in float32 (beta2 ~ 0.999), and the
    # corrections are 0-dim, so they do not change the parameters' dtype
    step = step.to(fnx.float64)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    if amsgrad:
        m = state["max_exp_avg_sq"]
        m.copy_(m.maximum(exp_avg_sq))
        second = m
    else:
        second = exp_avg_sq
    denom = second.sqrt() / bias_correction2.sqrt() + eps
    # lr * (1 / bc1), not lr / bc1: a reflected division rounds the Python float to float32
    p.sub_(exp_avg / denom * bias_correction1.reciprocal().mul(lr))


class Adam(Optimizer):
    """Adam: running means of the gradient and its square, bias-corrected.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.Adam([p], lr=0.1)
    >>> p.grad = fnx.tensor([3.0])
    >>> opt.step()
    >>> round(p.item(), 4)      # the first step moves by lr whatever the gradient's scale
    0.9
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None):
        check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))

    _decoupled = False

    def _init_state(self, p, group):
        state = self.state[p]
        if "exp_avg" not in state:
            # state outlives a compiled step's trace: made outside it, on real tensors
            with compiler.suspend_tracing():
                state["step"] = fnx.zeros((), dtype=fnx.float32, device=p.device)
                state["exp_avg"] = fnx.zeros_like(p)
                state["exp_avg_sq"] = fnx.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = fnx.zeros_like(p)
        return state

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd = group["lr"], group["weight_decay"]
            for p, grad in self._grads(group):
                state = self._init_state(p, group)
                step = self._step_tensor(state, p)
                if wd != 0:
                    if self._decoupled:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                adam_update(p, grad, state, lr=lr, beta1=beta1, beta2=beta2,
                            eps=group["eps"], amsgrad=group["amsgrad"], step=step)
        self._run_step_hooks((), {})
        return loss
