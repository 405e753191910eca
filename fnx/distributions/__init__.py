"""``fnx.distributions``: probability distributions, as ``torch.distributions``.

Written with fnx's public ops (like ``fnx.nn``), so log-probabilities and ``rsample``
are differentiable and trace under ``fnx.compile``; samples come from fnx's generator
(``fnx.manual_seed`` makes them reproducible).

>>> import fnx
>>> from fnx.distributions import Normal
>>> _ = fnx.manual_seed(0)
>>> d = Normal(fnx.tensor([0.0, 1.0]), fnx.tensor([1.0, 2.0]))
>>> d.sample((5,)).shape, d.entropy().shape
(fnx.Size([5, 2]), fnx.Size([2]))
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, Transform
from .uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform",
           "Dirichlet", "Distribution", "Exponential", "ExpTransform", "Gamma", "Independent",
           "Laplace", "MultivariateNormal", "Normal", "SigmoidTransform", "Transform",
           "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl",
           "transforms"]
