"""``ASGD``, as ``torch.optim.ASGD``: SGD with a decaying step size and a running average
of the iterates (``ax``)."""
from __future__ import annotations

from .. import api as fnx
from ._functional import as_float64, check, check_lr, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """``p = p (1 - lambd eta) - eta g``; ``ax += mu (p - ax)``; then
    ``eta = lr / (1 + lambd lr t)^alpha`` and ``mu = 1 / max(1, t - t0)``. ``eta`` and
    ``mu`` are float32 0-dim state tensors (as PyTorch's), so a compiled step reads them.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.ASGD([p], lr=0.1, lambd=0.0)
    >>> p.grad = fnx.tensor([2.0])
    >>> opt.step()
    >>> round(p.item(), 4), round(opt.state[p]["ax"].item(), 4)
    (0.8, 0.8)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check("weight_decay value", 0.0 <= weight_decay, weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha = group["lr"], group["lambd"], group["alpha"]
            t0, wd = group["t0"], group["weight_decay"]
            for p, grad in self._grads(group):
                lr0 = dict.__getitem__(group, "lr")

                def scalar(v, p=p):
                    return lambda: fnx.full((), float(v), dtype=fnx.float32, device=p.device)
                state = make_state(self.state[p], p, eta=scalar(lr0), mu=scalar(1.0),
                                   ax=lambda: fnx.zeros_like(p))
                t = as_float64(state["step"].add_(1))
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                eta, mu, ax = as_float64(state["eta"]), state["mu"], state["ax"]
                p.mul_(1 - lambd * eta).sub_(grad * eta)
                # mu == 1 (before t0): the average is the iterate itself, exactly
                ax.copy_(fnx.where(mu == 1, p, ax + (p - ax) * mu))
                state["eta"].copy_(((1 + lambd * lr * t) ** alpha).reciprocal().mul(lr))
                mu.copy_((t - t0).clamp(min=1).reciprocal())
        self._run_step_hooks((), {})
        return loss
