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
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
                         AbsTransform,
                         AffineTransform,
                         CatTransform,
                         ComposeTransform,
                         CorrCholeskyTransform,
                         CumulativeDistributionTransform,
                         ExpTransform,
                         IndependentTransform,
                         LowerCholeskyTransform,
                         PositiveDefiniteTransform,
                         PowerTransform,
                         ReshapeTransform,
                         SigmoidTransform,
                         SoftmaxTransform,
                         SoftplusTransform,
                         StackTransform,
                         StickBreakingTransform,
                         TanhTransform,
                         Transform,
                         identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "FisherSnedecor", "GeneralizedPareto", "InverseGamma", "Kumaraswamy",
           "CorrCholeskyTransform", "LKJCholesky", "LogisticNormal", "Pareto", "VonMises",
           "Weibull", "Wishart",
           "CumulativeDistributionTransform", "Dirichlet", "Distribution",
           "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily",
           "Gamma", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform",
           "Laplace", "LogNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson", "PositiveDefiniteTransform",
           "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "StudentT", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "biject_to", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transform_to",
           "transforms"]
