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
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Adagrad", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "SparseAdam", "lr_scheduler",
           "swa_utils"]
