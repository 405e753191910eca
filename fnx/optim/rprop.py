"""``Rprop``, as ``torch.optim.Rprop``: resilient backpropagation (sign-based steps)."""
from __future__ import annotations

from .. import api as fnx
from ._functional import check_lr, make_state
from .optimizer import Optimizer, _use_grad

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Each coordinate has its own step size: multiplied by ``etaplus`` when the gradient
    kept its sign, by ``etaminus`` when it flipped (then that coordinate does not move and
    its gradient is remembered as 0), clamped to ``step_sizes``; ``p -= sign(g) * step``.

    >>> import fnx
    >>> p = fnx.nn.Parameter(fnx.tensor([1.0, 1.0]))
    >>> opt = fnx.optim.Rprop([p], lr=0.1)
    >>> p.grad = fnx.tensor([3.0, -0.5])
    >>> opt.step()
    >>> p.tolist()
    [0.8999999761581421, 1.100000023841858]
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            (etaminus, etaplus), (lo, hi) = group["etas"], group["step_sizes"]
            for p, grad in self._grads(group):
                lr0 = dict.__getitem__(group, "lr")
                state = make_state(self.state[p], p, prev=lambda: fnx.zeros_like(p),
                                   step_size=lambda: fnx.full_like(p, float(lr0)))
                state["step"].add_(1)
                prev, step_size = state["prev"], state["step_size"]
                agree = grad.mul(prev).sign()
                factor = fnx.ones_like(p).masked_fill(agree > 0, etaplus) \
                    .masked_fill(agree < 0, etaminus)
                step_size.mul_(factor).clamp_(lo, hi)
                grad = grad.masked_fill(agree < 0, 0)
                p.sub_(grad.sign() * step_size)
                prev.copy_(grad)
        self._run_step_hooks((), {})
        return loss
