"""The JAX rules of the factorization prims (fnx/ir/prims/linalg.py): ``jax.lax.linalg``
and ``jnp.linalg``, with the phases fixed as the prims define them.

``info`` is LAPACK's: for ``cholesky`` the order of the first leading minor that is not
positive-definite (XLA fills a failed factor with NaN, so that order is found, only when a
matrix failed, by an unblocked factorization that stops nowhere: ``_cholesky_info``); for
``lu`` the first zero on U's diagonal, as getrf.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax import lax

from ..backends.cpu.factorizations import ldl_factor_arrays, ldl_solve_arrays
from ..ir import prims as P
from .jax import JAX_TARGET

__all__ = []

rule = JAX_TARGET.rule


def _mH(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _phase(x):
    ax = jnp.abs(x)
    return jnp.where(ax == 0, jnp.ones((), x.dtype), x / jnp.where(ax == 0, 1, ax).astype(x.dtype))


def _column_phases(v):
    if v.shape[-2] == 0:
        return jnp.ones(v.shape[:-2] + v.shape[-1:], v.dtype)
    idx = jnp.argmax(jnp.abs(v), axis=-2)[..., None, :]
    return _phase(jnp.take_along_axis(v, idx, axis=-2)[..., 0, :])


def _first_index(bad):
    """1 + the index of the first True along the last dim, 0 when there is none."""
    if bad.shape[-1] == 0:
        return jnp.zeros(bad.shape[:-1], np.int32)
    return jnp.where(bad.any(-1), jnp.argmax(bad, -1) + 1, 0).astype(np.int32)


def _cholesky_info(a):
    """LAPACK potrf's ``info`` of each ``[..., n, n]`` matrix (reading its lower triangle):
    a right-looking Cholesky of n steps, each step's pivot ``a[k, k]`` minus the updates so
    far; the first that is not positive (or NaN) is the failing minor's order."""
    n = a.shape[-1]
    tri = jnp.tril(a)
    a = tri + jnp.conj(jnp.swapaxes(jnp.tril(a, -1), -1, -2))
    idx = jnp.arange(n)

    def step(k, carry):
        a, info = carry
        piv = jnp.real(a[..., k, k])
        bad = ~(piv > 0)
        info = jnp.where((info == 0) & bad, k + 1, info)
        root = jnp.sqrt(jnp.where(bad, 1, piv)).astype(a.dtype)
        col = jnp.where(idx > k, a[..., :, k] / root[..., None], 0)
        a = a - col[..., :, None] * jnp.conj(col)[..., None, :]
        return a, info

    info = jnp.zeros(a.shape[:-2], np.int32)
    return lax.fori_loop(0, n, step, (a, info))[1]


@rule(P.cholesky)
def _(x, upper):
    a = _mH(x) if upper else x
    low = lax.linalg.cholesky(a, symmetrize_input=False)
    d = jnp.diagonal(low, axis1=-2, axis2=-1)
    failed = ~jnp.isfinite(d).all(-1)
    if a.shape[-1] == 0 or a.size == 0:
        info = jnp.zeros(a.shape[:-2], np.int32)
    else:       # the exact order costs n more steps, paid only when a matrix failed
        info = lax.cond(failed.any(), _cholesky_info,
                        lambda a: jnp.zeros(a.shape[:-2], np.int32), a)
    return (_mH(low) if upper else low), info


@rule(P.lu)
def _(x):
    lu, piv, perm = lax.linalg.lu(x)
    k = min(x.shape[-2:])
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)[..., :k]
    return lu, (piv + 1).astype(np.int32), perm.astype(np.int64), _first_index(d == 0)


@rule(P.triangular_solve)
def _(a, b, left, lower, unit_diagonal):
    return lax.linalg.triangular_solve(a, b, left_side=left, lower=lower,
                                       unit_diagonal=unit_diagonal)


@rule(P.qr)
def _(x, full_matrices):
    m, n = x.shape[-2:]
    k = min(m, n)
    q, r = jnp.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    ph = _phase(jnp.diagonal(r, axis1=-2, axis2=-1))
    r = r.at[..., :k, :].multiply(jnp.conj(ph)[..., :, None])
    q = q.at[..., :, :k].multiply(ph[..., None, :])
    return q, r


@rule(P.eigh)
def _(x, lower):
    v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=False)
    v = v * jnp.conj(_column_phases(v))[..., None, :]
    return w, v


@rule(P.svd)
def _(x, full_matrices):
    k = min(x.shape[-2:])
    u, s, vh = jnp.linalg.svd(x, full_matrices=full_matrices)
    ph = _column_phases(u[..., :, :k])
    u = u.at[..., :, :k].multiply(jnp.conj(ph)[..., None, :])
    vh = vh.at[..., :k, :].multiply(ph[..., :, None])
    if full_matrices:
        u = u.at[..., :, k:].multiply(jnp.conj(_column_phases(u[..., :, k:]))[..., None, :])
        vh = vh.at[..., k:, :].multiply(
            jnp.conj(_column_phases(jnp.swapaxes(vh[..., k:, :], -1, -2)))[..., :, None])
    return u, s, vh


@rule(P.eig)
def _(x):
    w, v = lax.linalg.eig(x, compute_left_eigenvectors=False)
    v = v * jnp.conj(_column_phases(v))[..., None, :]
    return w, v


@rule(P.matrix_exp)
def _(x):
    return jsl.expm(x)


# ldl_factor / ldl_solve: XLA has no Bunch-Kaufman factorization, so the program calls
# LAPACK's sytrf/sytrs on the host (the CPU kernels' functions; a round-trip on a GPU)
def _host(fn, shapes):
    def call(*arrays, hermitian):
        return jax.pure_callback(lambda *a: fn(*(np.asarray(x) for x in a), hermitian),
                                 shapes, *arrays, vmap_method="sequential")
    return call


@rule(P.ldl_factor)
def _(x, hermitian):
    batch, n = x.shape[:-2], x.shape[-1]
    shapes = (jax.ShapeDtypeStruct(x.shape, x.dtype),
              jax.ShapeDtypeStruct(batch + (n,), np.int32),
              jax.ShapeDtypeStruct(batch, np.int32))
    return tuple(_host(ldl_factor_arrays, shapes)(x, hermitian=hermitian))


@rule(P.ldl_solve)
def _(ld, pivots, b, hermitian):
    shape = jax.ShapeDtypeStruct(b.shape, b.dtype)
    return _host(ldl_solve_arrays, shape)(ld, pivots, b, hermitian=hermitian)


@rule(P.geqrf)
def _(x):
    if x.size == 0:
        return x, jnp.zeros(x.shape[:-2] + (min(x.shape[-2:]),), x.dtype)
    h, tau = jnp.linalg.qr(x, mode="raw")      # geqrf's output, transposed (NumPy's raw)
    return jnp.swapaxes(h, -1, -2), tau
