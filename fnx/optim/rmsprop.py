"""``RMSprop``, as ``torch.optim.RMSprop`` (momentum, centered, weight decay)."""
from __future__ import annotations

from .. import api as fnx
from .. import compiler
from ._functional import add_scaled_, addcmul_, check, check_lr, lerp_
from .optimizer import Optimizer, _use_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of recent gradients (``centered``: by their
    running standard deviation).

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.RMSprop([p], lr=0.01, alpha=0.0, eps=0.0)
    >>> p.grad = fnx.tensor([4.0])
    >>> opt.step()
    >>> round(p.item(), 4)      # 1 - 0.01 * 4 / sqrt(4 ** 2)
    0.99
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        check("epsilon value", 0.0 <= eps, eps)
        check("momentum value", 0.0 <= momentum, momentum)
        check("weight_decay value", 0.0 <= weight_decay, weight_decay)
        check("alpha value", 0.0 <= alpha, alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            momentum, wd = group["momentum"], group["weight_decay"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if "square_avg" not in state:
                    with compiler.suspend_tracing():    # state outlives a trace
                        state["step"] = fnx.zeros((), dtype=fnx.float32, device=p.device)
                        state["square_avg"] = fnx.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = fnx.zeros_like(p)
                        if group["centered"]:
                            state["grad_avg"] = fnx.zeros_like(p)
                self._step_tensor(state, p)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                square_avg = addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
                if group["centered"]:
                    grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = (square_avg - grad_avg * grad_avg).sqrt()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).add_(grad / avg)
                    add_scaled_(p, buf, -lr)
                else:
                    add_scaled_(p, grad / avg, -lr)
        self._run_step_hooks((), {})
        return loss
