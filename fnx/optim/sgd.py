"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov momentum and
weight decay, as ``torch.optim.SGD``."""
from __future__ import annotations

from .. import compiler
from ..api.creation import zeros_like
from ._functional import add_scaled_, check, check_lr
from .optimizer import Optimizer, _use_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * g`` where ``g`` is the gradient (plus ``weight_decay * p``), or with
    ``momentum`` the buffer ``b = momentum * b + (1 - dampening) * g`` (Nesterov:
    ``g + momentum * b``).

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.SGD([p], lr=0.5, momentum=0.9)
    >>> for _ in range(2):
    ...     p.grad = fnx.tensor([1.0])
    ...     opt.step()
    >>> round(p.item(), 4)      # 1 - 0.5 * 1 - 0.5 * (0.9 + 1)
    -0.45
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_lr(lr)
        check("momentum value", momentum >= 0.0, momentum)
        check("weight_decay value", weight_decay >= 0.0, weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p, d_p in self._grads(group):
                if wd != 0:
                    d_p = d_p.add(p, alpha=wd)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        # the first step's buffer is d_p itself; made outside a compiled
                        # step's trace (state outlives it), then written
                        with compiler.suspend_tracing():
                            buf = state["momentum_buffer"] = zeros_like(p)
                        buf.copy_(d_p)
                    else:
                        buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                    d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                add_scaled_(p, d_p, -lr)
        self._run_step_hooks((), {})
        return loss
