"""Weight averaging, as ``torch.optim.swa_utils``: ``AveragedModel`` keeps a running
average of a model's weights, equal-weighted (stochastic weight averaging, SWA: Izmailov
et al. 2018) or exponential (EMA); ``SWALR`` anneals the learning rate to a constant for
the averaging phase; ``update_bn`` recomputes BatchNorm statistics for averaged weights.

>>> import fnx
>>> from fnx.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
>>> model = fnx.nn.Linear(1, 1, bias=False)
>>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
>>> for w in (2.0, 4.0):     # the first update copies, then 0.5 * ema + 0.5 * model
...     with fnx.no_grad():
...         _ = model.weight.fill_(w)
...     ema.update_parameters(model)
>>> ema.module.weight.item()
3.0
"""
from __future__ import annotations

import copy
import itertools
import math

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..api.creation import tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..core import dtype as D
from .lr_scheduler import LRScheduler, _format_param, _value

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def _inexact(t: Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def get_ema_multi_avg_fn(decay=0.999):
    """The in-place EMA update of lists of parameters:
    ``ema = decay * ema + (1 - decay) * model`` (the first update copies instead)."""
    _check_decay(decay)

    def ema_update(ema_params, current_params, _num_averaged) -> None:
        with no_grad():
            if _inexact(ema_params[0]):
                for e, c in zip(ema_params, current_params):
                    e.lerp_(c, 1 - decay)
            else:
                for e, c in zip(ema_params, current_params):
                    e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The in-place equal-weighted update of lists of parameters: after ``n`` averaged
    models, ``avg += (model - avg) / (n + 1)``."""
    def swa_update(averaged_params, current_params, num_averaged) -> None:
        with no_grad():
            for a, c in zip(averaged_params, current_params):
                a.copy_(a + (c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one parameter: returns ``decay * ema + (1 - decay) * model``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, _num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The equal-weighted average of one parameter after ``n`` averaged models:
    returns ``avg + (model - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (on ``device`` when given) whose parameters
    ``update_parameters(model)`` averages with ``model``'s: equal-weighted by default,
    else by ``avg_fn(averaged, current, n_averaged)`` (one tensor, returns the new value)
    or ``multi_avg_fn(averaged_list, current_list, n_averaged)`` (in place, called per
    device and dtype). The first update copies. With ``use_buffers`` the buffers are
    averaged too; else they are copied from ``model`` at each update. Calling it runs
    the averaged copy.

    >>> import fnx
    >>> from fnx.optim.swa_utils import AveragedModel
    >>> model = fnx.nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(model)
    >>> for w in (1.0, 2.0, 6.0):
    ...     with fnx.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged.item()
    (3.0, 3)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        """Average ``model``'s parameters (and buffers, with ``use_buffers``) into this
        copy's."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        pairs = [(a.detach(), m.detach().to(a.device)) for a, m in zip(mine, theirs)]
        first = int(self.n_averaged.item()) == 0
        with no_grad():
            if first:
                for a, m in pairs:
                    a.copy_(m)
            elif self.avg_fn is not None:
                for a, m in pairs:
                    a.copy_(self.avg_fn(a, m, self.n_averaged.to(a.device)))
            else:
                # (PyTorch groups by device and dtype for its fused multi-tensor kernels)
                groups: dict = {}
                for a, m in pairs:
                    groups.setdefault((a.device, a.dtype), []).append((a, m))
                update = self.multi_avg_fn or get_swa_multi_avg_fn()
                for (dev, _), group in groups.items():
                    update([a for a, _ in group], [m for _, m in group],
                           self.n_averaged.to(dev))
            if not self.use_buffers:
                for b, m in zip(self.module.buffers(), model.buffers()):
                    b.detach().copy_(m.detach().to(b.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers by one pass over
    ``loader`` (each batch a tensor, or a list/tuple whose first item is the input), as
    a cumulative average; the model's training mode and momenta are restored after.

    >>> import fnx
    >>> from fnx.optim.swa_utils import update_bn
    >>> bn = fnx.nn.BatchNorm1d(1)
    >>> update_bn([fnx.tensor([[1.0], [3.0]]), fnx.tensor([[5.0], [7.0]])], bn)
    >>> bn.running_mean.item()
    4.0
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    try:
        with no_grad():
            for batch in loader:
                if isinstance(batch, (list, tuple)):
                    batch = batch[0]
                if device is not None:
                    batch = batch.to(device)
                model(batch)
    finally:
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` (one value, or one per group) over
    ``anneal_epochs`` steps, by a cosine (``"cos"``) or a straight line (``"linear"``),
    then hold it there.

    >>> import fnx
    >>> from fnx.optim.swa_utils import SWALR
    >>> opt = fnx.optim.SGD([fnx.nn.Parameter(fnx.zeros(1))], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.75, 0.5, 0.5, 0.5]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr),
                             optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead "
                             f"got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # the learning rate the annealing started from, given where it is now
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(_value(g["lr"]), g["swa_lr"], prev_alpha)
                  for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, starts)]

    def state_dict(self):
        """Everything but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
