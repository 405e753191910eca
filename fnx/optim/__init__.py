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
from . import lr_scheduler  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
