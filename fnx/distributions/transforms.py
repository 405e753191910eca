"""Invertible maps for ``TransformedDistribution``, as ``torch.distributions.transforms``.

>>> import fnx
>>> from fnx.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> t(fnx.tensor(0.0)).item(), t.inv(fnx.tensor(1.0)).item()
(1.0, 0.0)
"""
from __future__ import annotations

import copy
import math
import numbers

from .. import api as fnx
from .. import linalg
from ..core.tensor import Tensor
from ..nn.functional import logsigmoid, pad, softplus
from . import constraints
from .utils import broadcast_shape, eps, sum_rightmost, tiny

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """An invertible map ``y = T(x)`` with ``log_abs_det_jacobian(x, y) = log|dy/dx|``.

    With ``cache_size=1`` the last ``(x, y)`` pair is kept: the inverse of that very ``y``
    returns ``x`` itself, not a recomputation (``log_prob`` of a ``tanh``-squashed sample
    then stays finite where ``atanh(tanh(x))`` would round to ``atanh(1) = inf``).

    >>> import fnx
    >>> from fnx.distributions.transforms import TanhTransform
    >>> t = TanhTransform(cache_size=1)
    >>> x = fnx.tensor([20.0])
    >>> y = t(x)
    >>> y.item(), t.inv(y).item()
    (1.0, 20.0)
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    def with_cache(self, cache_size=1):
        """This transform with ``cache_size`` (a copy unless it already has it)."""
        if self._cache_size == cache_size:
            return self
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        new = copy.copy(self)
        new._cache_size = cache_size
        new._cached_x_y = None, None
        new._inv = None
        return new

    @property
    def event_dim(self):
        return max(self.domain.event_dim, self.codomain.event_dim)

    @property
    def inv(self):
        """The inverse transform."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    # parameterless transforms are equal to any instance of their class
    _stateless = False

    def __eq__(self, other):
        if self._stateless:
            return isinstance(other, type(self))
        return other is self

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    @property
    def event_dim(self):
        return self._inv.event_dim

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"{self._inv!r}.inv"

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)


class ComposeTransform(Transform):
    """Apply ``parts`` in order."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def domain(self):
        return self.parts[0].domain if self.parts else constraints.real

    @property
    def codomain(self):
        return self.parts[-1].codomain if self.parts else constraints.real

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def event_dim(self):
        return max((p.event_dim for p in self.parts), default=0)

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return fnx.zeros_like(x)
        total = 0.0
        event_dim = self.event_dim
        for p in self.parts:
            y_p = p(x)
            total = total + sum_rightmost(p.log_abs_det_jacobian(x, y_p),
                                          event_dim - p.event_dim)
            x = y_p
        return total


class ExpTransform(Transform):
    """``y = exp(x)``."""

    _stateless = True

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``."""

    _stateless = True

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def _call(self, x):
        e = eps(x.dtype)
        return fnx.sigmoid(x).clamp(min=e, max=1 - e)

    def _inverse(self, y):
        e = eps(y.dtype)
        y = y.clamp(min=e, max=1 - e)
        return y.log() - fnx.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class AffineTransform(Transform):
    """``y = loc + scale * x``; ``event_dim`` dims on the right form one event."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, numbers.Real):
            result = fnx.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
            result = result.expand(broadcast_shape(tuple(result.shape), tuple(x.shape)))
        return sum_rightmost(result, self._event_dim)

    def __repr__(self):
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale) and self._event_dim == other._event_dim)

    __hash__ = object.__hash__


identity_transform = ComposeTransform([])


class TanhTransform(Transform):
    """``y = tanh(x)`` onto ``(-1, 1)`` (SAC's squashing of a Gaussian policy)."""

    _stateless = True

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return fnx.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)): finite for every x, where
        # log1p(-y^2) overflows to -inf once tanh(x) rounds to 1
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` onto the positive reals."""

    _stateless = True

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return y + fnx.log(-fnx.expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _as_tensors(exponent)

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shape(tuple(shape), tuple(self.exponent.shape))

    inverse_shape = forward_shape

    def __repr__(self):
        return f"PowerTransform(exponent={self.exponent})"

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = object.__hash__


class AbsTransform(Transform):
    """``y = |x|`` (not injective: the inverse picks the nonnegative root)."""

    _stateless = True

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim onto the simplex (not injective)."""

    _stateless = True

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """A bijection from ``R^(K-1)`` onto the ``K``-simplex by stick breaking: the i-th
    coordinate takes the fraction ``sigmoid(x_i - log(K - 1 - i))`` of what is left."""

    _stateless = True

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _offset(x, n):
        # log(n), log(n - 1), ..., log(n + 1 - k) for the k entries of x's last dim
        return fnx.arange(n, n - x.shape[-1], -1, dtype=x.dtype, device=x.device).log()

    def _call(self, x):
        z = fnx.sigmoid(x - self._offset(x, x.shape[-1]))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=tiny(y.dtype))
        return y_crop.log() - remaining.log() + self._offset(y_crop, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x, x.shape[-1])
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` dims read as one
    event: ``log_abs_det_jacobian`` sums over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def event_dim(self):
        return self.base_transform.event_dim + self.reinterpreted_batch_ndims

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshape the rightmost dims from ``in_shape`` to ``out_shape`` (same number of
    elements); the Jacobian is a permutation, so its log-determinant is 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    @property
    def event_dim(self):
        return max(len(self.in_shape), len(self.out_shape))

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return fnx.zeros(batch, dtype=x.dtype, device=x.device)

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape, old, new):
        shape = tuple(shape)
        cut = len(shape) - len(old)
        if cut < 0:
            raise ValueError("Too few dimensions on input")
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new


class CatTransform(Transform):
    """Apply the i-th transform of ``tseq`` to the i-th piece (``lengths[i]`` long) of the
    input along ``dim`` and concatenate the results."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: lengths and tseq differ in length")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _pieces(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError(f"CatTransform: dim {self.dim} out of range for {x.dim()}-d input")
        if x.shape[self.dim] != sum(self.lengths):
            raise ValueError(f"CatTransform: input has size {x.shape[self.dim]} along dim "
                             f"{self.dim}, the lengths sum to {sum(self.lengths)}")
        start = 0
        for length in self.lengths:
            yield x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return fnx.cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        return fnx.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            part = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                part = sum_rightmost(part, self.event_dim - t.event_dim)
            parts.append(part)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        if dim + self.event_dim < 0:  # dim is a batch dim: the pieces' terms sit side by side
            return fnx.cat(parts, dim + self.event_dim)
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total


class StackTransform(Transform):
    """Apply the i-th transform of ``tseq`` to the i-th slice of the input along ``dim``."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _slices(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError(f"StackTransform: dim {self.dim} out of range for "
                             f"{x.dim()}-d input")
        if x.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: input has size {x.shape[self.dim]} along dim "
                             f"{self.dim}, there are {len(self.transforms)} transforms")
        return [x.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return fnx.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return fnx.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                         self.dim)

    def log_abs_det_jacobian(self, x, y):
        return fnx.stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys
                          in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class LowerCholeskyTransform(Transform):
    """An unconstrained square matrix to a lower-triangular one with a positive diagonal:
    keep the strict lower triangle, exponentiate the diagonal."""

    _stateless = True

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + fnx.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + fnx.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """An unconstrained square matrix to ``L L^T``, ``L`` its ``LowerCholeskyTransform``."""

    _stateless = True

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: the support onto ``[0, 1]``; the inverse is ``icdf``
    and ``log|dy/dx|`` is ``log_prob``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


def _tril_flat_index(n, offset, device=None):
    # positions of the lower triangle (below diagonal ``offset``), row-major, in an n*n row
    rows, cols = fnx.tril_indices(n, n, offset, device=device)
    return rows * n + cols


def vec_to_tril_matrix(vec, diag=-1):
    """The ``(n, n)`` matrix whose lower triangle below ``diag`` holds ``vec`` row by row
    (zeros elsewhere)."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + n diag_shift: solve the quadratic for n
    n = int(round((-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * m)) / 2))
    index = _tril_flat_index(n, diag, vec.device)
    if index.numel() != m:
        raise ValueError(f"vec_to_tril_matrix: {m} entries fill no triangle")
    # a 0/1 placement matrix keeps this a differentiable matmul (no in-place scatter)
    place = (index.unsqueeze(-1) == fnx.arange(n * n, device=vec.device)).to(vec.dtype)
    flat = vec @ place
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))


def tril_matrix_to_vec(mat, diag=-1):
    """The lower triangle of ``mat`` below ``diag``, row by row."""
    n = mat.shape[-1]
    return mat.flatten(-2).index_select(-1, _tril_flat_index(n, diag, mat.device))


class CorrCholeskyTransform(Transform):
    """A vector of ``D (D - 1) / 2`` reals to the Cholesky factor of a ``D x D``
    correlation matrix: ``tanh`` to ``(-1, 1)``, then stick breaking along each row so
    that every row has unit norm (as LKJCholesky's support)."""

    _stateless = True

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        e = eps(x.dtype)
        x = fnx.tanh(x).clamp(min=-1 + e, max=1 - e)
        r = vec_to_tril_matrix(x, diag=-1)
        # each row: y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2), the rest of the unit norm
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)
        n = r.shape[-1]
        r = r + fnx.eye(n, dtype=r.dtype, device=r.device)
        return r * pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (fnx.log1p(t) - fnx.log1p(-t)) / 2

    def log_abs_det_jacobian(self, x, y):
        # stick breaking: prod over rows of the remaining norms (below the subdiagonal)
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        m = shape[-1]
        d = int(round((0.25 + 2 * m) ** 0.5 + 0.5))
        if d * (d - 1) // 2 != m:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        d = shape[-1]
        if shape[-2] != d:
            raise ValueError("Input is not square")
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


def _same(a, b):
    # parameters equal as numbers or as tensors of equal values
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a is b or (a.shape == b.shape and bool((a == b).all()))
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        t, num = (a, b) if isinstance(a, Tensor) else (b, a)
        return isinstance(num, numbers.Number) and bool((t == num).all())
    return False


def _as_tensors(*values):
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else fnx.get_default_dtype()
    return tuple(v if isinstance(v, Tensor) else fnx.tensor(float(v), dtype=dtype)
                 for v in values)
