"""``fnx.optim``: optimizers and learning-rate schedules, as ``torch.optim``.

>>> import fnx
>>> from fnx import nn, optim
>>> model = nn.Linear(3, 1)
>>> opt = optim.AdamW(model.parameters(), lr=1e-2)
>>> opt.zero_grad()
>>> model(fnx.ones(4, 3)).sum().backward()
>>> opt.step()
>>> len(opt.state)
2
"""
from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
