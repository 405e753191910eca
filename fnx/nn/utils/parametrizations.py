"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``
(``original0`` = g, ``original1`` = v), ``spectral_norm`` (power iteration state in the
buffers ``_u``/``_v`` of the parametrization) and ``orthogonal`` (matrix exponential,
Cayley map or Householder reflections of the lower triangle)."""
from __future__ import annotations

import numpy as np

from ... import api as fnx
from ...core.grad_mode import no_grad
from ...core.tensor import Tensor
from ...ops import aten
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ----------------------------------------------------------------------------- weight norm

def norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (``dim=-1``: the norm of the whole tensor, a 0-dim tensor), as PyTorch's
    ``norm_except_dim``."""
    if dim == -1:
        return aten.linalg_vector_norm.default(v, 2, None, False)
    dims = [d for d in range(v.ndim) if d != dim]
    return aten.linalg_vector_norm.default(v, 2, dims, True)


def _weight_norm(v, g, dim):
    return v * (g / norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (the norm over every dimension
    but ``dim``; ``dim=None``: over the whole tensor), ``g`` and ``v`` stored as
    ``parametrizations.<name>.original0`` and ``original1``. Returns ``module``. A state
    dict of the older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) loads into it.

    >>> import fnx
    >>> m = fnx.nn.utils.parametrizations.weight_norm(fnx.nn.Linear(3, 2))
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> m.parametrizations.weight.original0.shape
    fnx.Size([2, 1])
    """
    def _old_keys(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        # a checkpoint of the older nn.utils.weight_norm: ``<name>_g``/``<name>_v`` are g, v
        g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g in state_dict and v in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)

    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module._register_load_state_dict_pre_hook(_old_keys)
    return module


# ----------------------------------------------------------------------------- spectral norm

def _to_matrix(weight, dim):
    """``weight`` as a matrix whose rows run along ``dim``."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.flatten(1)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = _to_matrix(weight, self.dim)
            h, w = mat.shape
            u = F.normalize(fnx.randn(h, dtype=mat.dtype, device=mat.device), dim=0, eps=eps)
            v = F.normalize(fnx.randn(w, dtype=mat.dtype, device=mat.device), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(mat, 15)

    def _power_method(self, mat, n):
        # u and v are updated in place: they are state (buffers), not part of the graph
        with no_grad():
            mat = mat.detach()
            for _ in range(n):
                self._u.copy_(F.normalize(fnx.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(fnx.mv(mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = _to_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u.conj() * fnx.mv(mat, v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power
    iteration (one step per training-mode access; the vectors are the buffers
    ``parametrizations.<name>.0._u``/``_v``). Returns ``module``.

    >>> import fnx
    >>> m = fnx.nn.utils.parametrizations.spectral_norm(fnx.nn.Linear(4, 3))
    >>> for key in m.state_dict():
    ...     print(key)
    bias
    parametrizations.weight.original
    parametrizations.weight.0._u
    parametrizations.weight.0._v
    >>> bool(abs(fnx.linalg.matrix_norm(m.eval().weight, 2) - 1) < 1e-4)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) \
            else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ----------------------------------------------------------------------------- orthogonal

_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _eye_like(x, n):
    return fnx.eye(n, dtype=x.dtype, device=x.device)


def _q_of_qr(a):
    """The Q of A = QR with diag(R) >= 0 (the unique one for full-rank A)."""
    q, r = fnx.qr(a)
    d = r.diagonal(0, -2, -1)
    signs = fnx.where(d == 0, fnx.ones_like(d), d.sgn())
    return q * signs.unsqueeze(-2)


def _householder_qr(a):
    """LAPACK's geqrf on one tall real matrix (NumPy): R on and above the diagonal, the
    reflectors below it (unit first entries implied), and their tau."""
    a = a.copy()
    n, k = a.shape
    tau = np.zeros(k, a.dtype)
    for j in range(k):
        x = a[j:, j]
        below = np.linalg.norm(x[1:])
        if below == 0.0:
            continue                       # no reflection: tau = 0
        alpha = x[0]
        beta = -np.copysign(np.hypot(alpha, below), alpha)
        v = x / (alpha - beta)
        v[0] = 1.0
        tau[j] = (beta - alpha) / beta
        a[j:, j:] -= tau[j] * np.outer(v, v @ a[j:, j:])
        a[j, j] = beta
        a[j + 1:, j] = v[1:]
    return a, tau


def _householder_inverse(q, transposed):
    """The Householder parametrization's original for value ``q`` (tall, maybe batched):
    the reflectors of its QR, the diagonal holding the signs that make R's positive (so
    the forward gives back the orthogonal factor of ``q``)."""
    mats = q.detach().cpu().numpy().astype(np.float64)
    flat = mats.reshape(-1, *mats.shape[-2:])
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        a, tau = _householder_qr(m)
        d = np.sign(np.diagonal(a)).copy()
        d[d == 0] = 1.0
        d[tau == 0.0] *= -1.0    # the forward's tau is 2 there: a sign flip to undo
        np.fill_diagonal(a, d)
        out[i] = a
    res = fnx.tensor(out.reshape(mats.shape), dtype=q.dtype, device=q.device)
    return res.mT if transposed else res


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        # now tall: n >= k
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:      # embed in a square matrix
                pad = fnx.zeros(*x.shape[:-2], n, n - k, dtype=x.dtype, device=x.device)
                x = fnx.cat([x, pad], -1)
            a = x - x.mH                              # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == "matrix_exp":
                q = fnx.matrix_exp(a)
            else:                                     # (I + A/2)(I - A/2)^-1
                eye = _eye_like(a, n)
                q = aten.linalg_solve.default(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = fnx.orgqr(a, tau)
            # the diagonal of x holds the signs (+-1) of the columns; not differentiated
            q = q * x.diagonal(0, -2, -1).detach().int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q):
        if tuple(q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(q.shape)}.")
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            if n < k:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                return _householder_inverse(q, q_init.shape[-2] < q_init.shape[-1])
            if n == k:
                eye = _eye_like(q, k)
                eps = 10.0 * n * float(np.finfo(q.dtype.numpy).eps)
                q = q.clone() if bool(fnx.allclose(q.mH @ q, eye, atol=eps)) else _q_of_qr(q)
            else:           # complete q to a square orthogonal matrix
                extra = fnx.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _q_of_qr(fnx.cat([q, extra], -1))
            self.base = q
            # -I: with the Householder map, householder(-I's strictly lower part) with the
            # diagonal's signs gives back I, so the parametrized value is base itself
            neg_eye = fnx.zeros_like(q_init)
            neg_eye.diagonal(0, -2, -1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or a batch of them) to be orthogonal (unitary):
    the map of its lower triangle by ``"matrix_exp"``, ``"cayley"`` or ``"householder"``
    (default: ``"matrix_exp"`` for square or complex matrices, else ``"householder"``),
    times the value it had when registered (``use_trivialization``). Returns ``module``.

    >>> import fnx
    >>> m = fnx.nn.utils.parametrizations.orthogonal(fnx.nn.Linear(4, 3))
    >>> w = m.weight
    >>> bool(fnx.allclose(w @ w.T, fnx.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
