"""The ``torch.*`` spellings of the matrix functions (``fnx.det``, ``fnx.inverse``,
``fnx.svd``, ...) and their Tensor methods; ``fnx.linalg`` holds the ``torch.linalg`` ones.

They differ from their ``linalg`` twins where PyTorch's do: ``svd`` returns V (not Vh)
and reduced factors by default (``some=True``), ``qr`` takes ``some``,
``triangular_solve`` takes B first and returns the coefficient matrix too.
"""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ir.variants import VARIANTS
from ..ops import aten
from .out_results import write_results
from .reduction import return_types

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
           "cholesky_inverse", "triangular_solve", "pinverse", "matrix_exp", "matrix_power",
           "svd", "qr", "lu", "lu_unpack", "lu_solve", "orgqr", "geqrf",
           "ormqr"]

for _name, _fields in [("triangular_solve", "solution cloned_coefficient"),
                       ("lu_unpack", "P L U"), ("geqrf", "a tau")]:
    return_types.make(_name, _fields.split())


@tensor_method()
def det(input):
    """The determinant, as ``torch.det`` (``fnx.linalg.det``).

    >>> import fnx
    >>> fnx.det(fnx.tensor([[2., 0.], [0., 3.]])).item()
    6.0
    """
    return aten.det.default(input)


@tensor_method()
def logdet(input):
    """The log of the determinant (nan for a negative one), as ``torch.logdet``.

    >>> import fnx
    >>> fnx.logdet(fnx.eye(2)).item()
    0.0
    """
    return aten.logdet.default(input)


@tensor_method()
def slogdet(input, *, out=None):
    """``(sign, logabsdet)`` of the determinant, as ``torch.slogdet``.

    >>> import fnx
    >>> fnx.slogdet(fnx.tensor([[0., 1.], [1., 0.]])).sign.item()
    -1.0
    """
    r = aten.slogdet.default(input)
    return return_types.slogdet(r if out is None else write_results("slogdet", r, out, (input,)))


@tensor_method()
def inverse(input):
    """The inverse of a square matrix, as ``torch.inverse`` (``fnx.linalg.inv``).

    >>> import fnx
    >>> fnx.inverse(fnx.tensor([[4.]])).item()
    0.25
    """
    return aten.inverse.default(input)


@tensor_method()
def cholesky(input, upper=False):
    """The Cholesky factor, as ``torch.cholesky`` (``upper`` is positional here).

    >>> import fnx
    >>> fnx.cholesky(fnx.tensor([[4.]])).item()
    2.0
    """
    return aten.cholesky.default(input, upper)


@tensor_method()
def cholesky_solve(input, input2, upper=False):
    """X with A X = B, given B (``input``) and A's Cholesky factor (``input2``), as
    ``torch.cholesky_solve``.

    >>> import fnx
    >>> fnx.cholesky_solve(fnx.tensor([[8.]]), fnx.tensor([[2.]])).item()
    2.0
    """
    return aten.cholesky_solve.default(input, input2, upper)


@tensor_method()
def cholesky_inverse(input, upper=False):
    """The inverse of A from its Cholesky factor, as ``torch.cholesky_inverse``.

    >>> import fnx
    >>> fnx.cholesky_inverse(fnx.tensor([[2.]])).item()
    0.25
    """
    return aten.cholesky_inverse.default(input, upper)


@tensor_method()
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``(solution, cloned_coefficient)`` of A X = b for a triangular A, as
    ``torch.triangular_solve``.

    >>> import fnx
    >>> fnx.triangular_solve(fnx.tensor([[2.]]), fnx.tensor([[4.]])).solution.item()
    0.5
    """
    return return_types.triangular_solve(
        aten.triangular_solve.default(b, A, upper, transpose, unitriangular))


@tensor_method()
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, as ``torch.pinverse``.

    >>> import fnx
    >>> fnx.pinverse(fnx.tensor([[2., 0.]])).tolist()
    [[0.5], [0.0]]
    """
    return aten.pinverse.default(input, rcond)


@tensor_method()
def matrix_exp(input):
    """The matrix exponential, as ``torch.matrix_exp``.

    >>> import fnx
    >>> round(fnx.matrix_exp(fnx.tensor([[1.]])).item(), 5)
    2.71828
    """
    return aten.matrix_exp.default(input)


@tensor_method()
def matrix_power(input, n):
    """A to the integer power ``n``, as ``torch.matrix_power``.

    >>> import fnx
    >>> fnx.matrix_power(fnx.tensor([[2, 0], [0, 3]]), 2).tolist()
    [[4, 0], [0, 9]]
    """
    return aten.matrix_power.default(input, n)


@tensor_method()
def svd(input, some=True, compute_uv=True, *, out=None):
    """``(U, S, V)`` with A = U diag(S) V^H, as ``torch.svd`` (V, not Vh; reduced when
    ``some``; zero-filled U and V without ``compute_uv``).

    >>> import fnx
    >>> fnx.svd(fnx.tensor([[0., 2.], [1., 0.]])).S.tolist()
    [2.0, 1.0]
    """
    r = aten.svd.default(input, some, compute_uv)
    return return_types.svd(r if out is None else write_results("svd", r, out, (input,)))


@tensor_method()
def qr(input, some=True, *, out=None):
    """``(Q, R)``, reduced when ``some``, as ``torch.qr``.

    >>> import fnx
    >>> fnx.qr(fnx.tensor([[3.], [4.]])).R.tolist()
    [[5.0]]
    """
    r = aten.qr.default(input, some)
    return return_types.qr(r if out is None else write_results("qr", r, out, (input,)))


@tensor_method()
def lu(input, pivot=True, get_infos=False):
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``), as ``torch.lu``.

    >>> import fnx
    >>> fnx.lu(fnx.tensor([[1., 2.], [3., 4.]]))[1].tolist()
    [2, 2]
    """
    LU, pivots, info = aten.linalg_lu_factor_ex.default(input, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from ``lu_factor``'s packed result, as ``torch.lu_unpack``.

    >>> import fnx
    >>> P, L, U = fnx.lu_unpack(*fnx.linalg.lu_factor(fnx.tensor([[1., 2.], [3., 4.]])))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return return_types.lu_unpack(aten.lu_unpack.default(LU_data, LU_pivots, unpack_data,
                                                         unpack_pivots))


@tensor_method()
def lu_solve(b, LU_data, LU_pivots):
    """X with A X = b from ``lu``'s factorization, as ``torch.lu_solve``.

    >>> import fnx
    >>> fnx.lu_solve(fnx.tensor([[4.]]), *fnx.lu(fnx.tensor([[2.]]))).item()
    2.0
    """
    return aten.linalg_lu_solve.default(LU_data, LU_pivots, b)


@tensor_method()
def orgqr(input, tau):
    """The Householder product, as ``torch.orgqr`` (``fnx.linalg.householder_product``).

    >>> import fnx
    >>> fnx.orgqr(fnx.zeros(2, 1), fnx.zeros(1)).tolist()
    [[1.0], [0.0]]
    """
    return aten.linalg_householder_product.default(input, tau)


@tensor_method()
def geqrf(input, *, out=None):
    """LAPACK's compact QR ``(a, tau)``, as ``torch.geqrf``: R on and above the diagonal of
    ``a``, the Householder vectors below it; ``ormqr``/``orgqr`` apply or form Q.  No
    derivative (as PyTorch's).

    >>> import fnx
    >>> a, tau = fnx.geqrf(fnx.tensor([[3.], [4.]]))
    >>> a.tolist(), round(tau.item(), 4)
    ([[-5.0], [0.5]], 1.6)
    """
    r = aten.geqrf.default(input)
    if out is not None:     # PyTorch casts into out's dtype here
        r = write_results("geqrf", r, out, (input,), [_any_dtype, _any_dtype])
    return return_types.geqrf(r)


def _any_dtype(r, o):
    return None


@tensor_method()
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """``op(Q) @ other`` (``left``) or ``other @ op(Q)``, Q from ``geqrf``'s ``(input,
    tau=input2)`` and ``other=input3``, ``op(Q) = Q^H`` when ``transpose``, as
    ``torch.ormqr`` (Q is never formed).

    >>> import fnx
    >>> a, tau = fnx.geqrf(fnx.tensor([[3.], [4.]]))
    >>> fnx.ormqr(a, tau, fnx.eye(2)).tolist()
    [[-0.6000000238418579, -0.800000011920929], [-0.800000011920929, 0.6000000238418579]]
    """
    if out is None:
        return aten.ormqr.default(input, input2, input3, left, transpose)
    return VARIANTS[aten.ormqr.default]["out"](input, input2, input3, left, transpose, out=out)
