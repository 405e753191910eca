"""``biject_to`` and ``transform_to``: from a constraint to a transform onto its set.

``biject_to(c)`` gives a bijection from unconstrained reals onto ``c`` (for HMC-style
reparameterization, where the Jacobian matters); ``transform_to(c)`` may be any map onto
``c`` (for optimizing a constrained parameter through an unconstrained one).

>>> import fnx
>>> from fnx.distributions import biject_to, constraints
>>> t = biject_to(constraints.positive)
>>> t(fnx.tensor(0.0)).item()
1.0
>>> fnx.distributions.transform_to(constraints.simplex)(fnx.zeros(2))
tensor([0.5000, 0.5000])
"""
from __future__ import annotations

import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A map from constraint classes to factories ``factory(constraint) -> Transform``."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Register ``factory`` for ``constraint`` (a Constraint subclass or an instance,
        which stands for its class); usable as a decorator when ``factory`` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      "constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _is_number(x, value):
    return isinstance(x, numbers.Number) and x == value


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    base = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    base = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _to_greater_than(constraint):
    if _is_number(constraint.lower_bound, 0):
        return transforms.ExpTransform()
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@biject_to.register(constraints.open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
@transform_to.register(constraints.open_interval)
def _to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if _is_number(lower, 0) and _is_number(upper, 1):
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq],
                                     constraint.dim)
