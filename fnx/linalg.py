"""``fnx.linalg``: PyTorch's ``torch.linalg`` (names, signatures, batching, dtypes and errors).

Every function takes batches of matrices (leading dims are batch dims, broadcast where
PyTorch broadcasts) of float32, float64, complex64 or complex128, and maps onto an ATen
op (``fnx.ops.aten.linalg_*``) that decomposes to the factorization prims, so it runs
eagerly, under ``fnx.compile`` and on cuda alike, and differentiates.

A singular or non-positive-definite input raises ``fnx.linalg.LinAlgError`` (a
``RuntimeError``) with PyTorch's message; the ``*_ex`` functions return an ``info`` tensor
instead (``check_errors=True`` raises).  Under ``fnx.compile`` and on cuda the check is
computed inside the program and raised before anything is written back
(``options={"value_checks": False}`` turns it off: NaN/inf then, as the ``*_ex`` results).

>>> import fnx
>>> A = fnx.tensor([[4., 1.], [1., 3.]])
>>> round(fnx.linalg.det(A).item(), 4), fnx.linalg.solve(A, fnx.tensor([1., 2.])).tolist()
(11.0, [0.09090909361839294, 0.6363636255264282])

``out=`` is taken by the functions with one result (a tensor of exactly the result's
dtype, resized as needed; PyTorch's rule), not yet by those returning named tuples.
``matmul`` is ``fnx.matmul``.  ``driver=`` of ``lstsq`` is checked, but every driver
computes the SVD's minimum-norm solution (equal to gelsy's for full-rank inputs).
"""
from __future__ import annotations

from .api.linalg import matmul
from .api.out_results import castable, write_results
from .api.reduction import dim_list, return_types
from .core.tensor import Tensor
from .ir.aten.factorizations import LinAlgError
from .ir.variants import VARIANTS
from .ops import aten

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "inv", "inv_ex", "det", "slogdet", "solve",
           "solve_ex", "solve_triangular", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "qr",
           "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "pinv", "matrix_rank", "lstsq",
           "vector_norm", "matrix_norm", "norm", "cond", "matrix_power", "matrix_exp",
           "multi_dot", "cross", "vecdot", "householder_product", "tensorinv", "tensorsolve",
           "diagonal", "vander", "matmul", "ldl_factor", "ldl_factor_ex", "ldl_solve"]

for _name, _fields in [("linalg_cholesky_ex", "L info"), ("linalg_inv_ex", "inverse info"),
                       ("linalg_solve_ex", "result info"), ("linalg_lu_factor", "LU pivots"),
                       ("linalg_lu_factor_ex", "LU pivots info"), ("linalg_lu", "P L U"),
                       ("linalg_qr", "Q R"), ("linalg_eig", "eigenvalues eigenvectors"),
                       ("linalg_svd", "U S Vh"), ("linalg_slogdet", "sign logabsdet"),
                       ("linalg_lstsq", "solution residuals rank singular_values"),
                       ("linalg_ldl_factor", "LD pivots"),
                       ("linalg_ldl_factor_ex", "LD pivots info")]:
    if not hasattr(return_types, _name):
        return_types.make(_name, _fields.split())


# ----------------------------------------------------------------------------- factorizations

def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L of a Hermitian positive-definite A = L L^H (``upper=True``:
    U with A = U^H U); only that triangle of A is read.

    >>> import fnx
    >>> fnx.linalg.cholesky(fnx.tensor([[4., 2.], [2., 5.]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return _call(aten.linalg_cholesky.default, out, A, upper=upper)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``cholesky`` that returns ``(L, info)``: info is 0, or the order of the leading minor
    that is not positive-definite.

    >>> import fnx
    >>> fnx.linalg.cholesky_ex(fnx.tensor([[1., 2.], [2., 1.]])).info.item()
    2
    """
    return _results(return_types.linalg_cholesky_ex, "linalg_cholesky_ex",
                    aten.linalg_cholesky_ex.default(A, upper=upper, check_errors=check_errors),
                    out, (A,))


def inv(A, *, out=None):
    """The inverse of a square matrix (LU with partial pivoting).

    >>> import fnx
    >>> fnx.linalg.inv(fnx.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _call(aten.linalg_inv.default, out, A)


def inv_ex(A, *, check_errors=False, out=None):
    """``inv`` that returns ``(inverse, info)``: info is 0, or the 1-based index of the
    first zero pivot of U.

    >>> import fnx
    >>> fnx.linalg.inv_ex(fnx.tensor([[1., 2.], [2., 4.]])).info.item()
    2
    """
    return _results(return_types.linalg_inv_ex, "linalg_inv_ex",
                    aten.linalg_inv_ex.default(A, check_errors=check_errors), out, (A,))


def det(A, *, out=None):
    """The determinant (through LU).

    >>> import fnx
    >>> round(fnx.linalg.det(fnx.tensor([[1., 2.], [3., 4.]])).item(), 5)
    -2.0
    """
    return _call(aten.linalg_det.default, out, A)


def slogdet(A, *, out=None):
    """``(sign, logabsdet)``: the sign (a unit complex number for complex A; 0 when A is
    singular) and log of the absolute value of the determinant.

    >>> import fnx
    >>> s = fnx.linalg.slogdet(fnx.tensor([[1., 2.], [3., 4.]]))
    >>> s.sign.item(), round(s.logabsdet.item(), 4)
    (-1.0, 0.6931)
    """
    return _results(return_types.linalg_slogdet, "linalg_slogdet",
                    aten.linalg_slogdet.default(A), out, (A,))


def solve(A, B, *, left=True, out=None):
    """X with A X = B (``left=False``: X A = B); B is a (batch of) vector(s) when it is
    1-D or has A's batch shape.

    >>> import fnx
    >>> fnx.linalg.solve(fnx.tensor([[2., 0.], [0., 4.]]), fnx.tensor([2., 2.])).tolist()
    [1.0, 0.5]
    """
    return _call(aten.linalg_solve.default, out, A, B, left=left)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``solve`` that returns ``(result, info)`` instead of raising on a singular A.

    >>> import fnx
    >>> fnx.linalg.solve_ex(fnx.eye(2), fnx.ones(2)).info.item()
    0
    """
    return _results(return_types.linalg_solve_ex, "linalg_solve_ex", aten.linalg_solve_ex.default(
        A, B, left=left, check_errors=check_errors), out, (A, B))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B for a triangular A (only that triangle is read; ``unitriangular``:
    its diagonal is taken as ones).

    >>> import fnx
    >>> A = fnx.tensor([[2., 1.], [0., 4.]])
    >>> fnx.linalg.solve_triangular(A, fnx.tensor([[3.], [4.]]), upper=True).tolist()
    [[1.0], [1.0]]
    """
    return _call(aten.linalg_solve_triangular.default, out, A, B, upper=upper, left=left,
                 unitriangular=unitriangular)


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)``: LAPACK's packed LU factorization with partial pivoting (pivots are
    1-based int32 row swaps).

    >>> import fnx
    >>> fnx.linalg.lu_factor(fnx.tensor([[1., 2.], [3., 4.]])).pivots.tolist()
    [2, 2]
    """
    return _results(return_types.linalg_lu_factor, "linalg_lu_factor",
                    aten.linalg_lu_factor.default(A, pivot=pivot), out, (A,))


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``lu_factor`` that also returns ``info`` (the first zero pivot of U, 1-based).

    >>> import fnx
    >>> fnx.linalg.lu_factor_ex(fnx.tensor([[1., 2.], [2., 4.]])).info.item()
    2
    """
    return _results(return_types.linalg_lu_factor_ex, "linalg_lu_factor_ex",
                    aten.linalg_lu_factor_ex.default(A, pivot=pivot, check_errors=check_errors),
                    out, (A,))


def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with A = P L U.

    >>> import fnx
    >>> P, L, U = fnx.linalg.lu(fnx.tensor([[1., 2.], [3., 4.]]))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _results(return_types.linalg_lu, "linalg_lu", aten.linalg_lu.default(A, pivot=pivot),
                    out, (A,))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve with a factorization from ``lu_factor`` (``adjoint``: with A^H).

    >>> import fnx
    >>> A = fnx.tensor([[1., 2.], [3., 4.]])
    >>> fnx.linalg.lu_solve(*fnx.linalg.lu_factor(A), fnx.tensor([[5.], [11.]])).tolist()
    [[1.0], [2.0]]
    """
    return _call(aten.linalg_lu_solve.default, out, LU, pivots, B, left=left, adjoint=adjoint)


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)``: the Bunch-Kaufman factorization A = P L D L^T P^T (L D L^H for
    ``hermitian``) in LAPACK's compact form (sytrf/hetrf, lower triangle), as PyTorch: L's
    strict lower triangle and D's blocks in ``LD``, 1-based int32 ``pivots`` (a negative
    pair marks a 2x2 block of D).  Not differentiable; under ``fnx.compile`` and on cuda
    it runs LAPACK on the host.

    >>> import fnx
    >>> A = fnx.tensor([[1., 2.], [2., 1.]])
    >>> LD, pivots = fnx.linalg.ldl_factor(A)
    >>> fnx.linalg.ldl_solve(LD, pivots, fnx.tensor([[3.], [3.]])).tolist()
    [[1.0], [1.0]]
    """
    return _results(return_types.linalg_ldl_factor, "linalg_ldl_factor",
                    aten.linalg_ldl_factor.default(A, hermitian=hermitian), out, (A,))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``ldl_factor`` that also returns ``info`` (LAPACK's: i > 0 when D[i-1, i-1] is
    exactly zero) instead of raising.

    >>> import fnx
    >>> fnx.linalg.ldl_factor_ex(fnx.zeros(2, 2)).info.item()
    1
    """
    return _results(return_types.linalg_ldl_factor_ex, "linalg_ldl_factor_ex",
                    aten.linalg_ldl_factor_ex.default(A, hermitian=hermitian,
                                                      check_errors=check_errors), out, (A,))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ``ldl_factor``'s ``(LD, pivots)`` (batch dims broadcast).

    >>> import fnx
    >>> A = fnx.tensor([[0., 1.], [1., 0.]])
    >>> fnx.linalg.ldl_solve(*fnx.linalg.ldl_factor(A), fnx.tensor([[2.], [5.]])).tolist()
    [[5.0], [2.0]]
    """
    return _call(aten.linalg_ldl_solve.default, out, LD, pivots, B, hermitian=hermitian)


def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with A = Q R; ``mode`` is 'reduced', 'complete' or 'r' (Q empty).  R's
    diagonal is real and non-negative.

    >>> import fnx
    >>> Q, R = fnx.linalg.qr(fnx.tensor([[3., 1.], [4., 2.]]))
    >>> R[0].tolist()
    [5.0, 2.200000047683716]
    """
    return _results(return_types.linalg_qr, "linalg_qr", aten.linalg_qr.default(A, mode), out,
                    (A,))


def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of a Hermitian matrix, eigenvalues ascending (real);
    only the triangle ``UPLO`` names is read.

    >>> import fnx
    >>> fnx.linalg.eigh(fnx.tensor([[2., 1.], [1., 2.]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    return _results(return_types.linalg_eigh, "linalg_eigh", aten.linalg_eigh.default(A, UPLO),
                    out, (A,))


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of a Hermitian matrix, ascending.

    >>> import fnx
    >>> fnx.linalg.eigvalsh(fnx.tensor([[2., 1.], [1., 2.]])).tolist()
    [1.0, 3.0]
    """
    return _call(aten.linalg_eigvalsh.default, out, A, UPLO)


def eig(A, *, out=None):
    """``(eigenvalues, eigenvectors)`` of a general square matrix (complex; eigenvectors
    of unit norm, largest entry real and positive).

    >>> import fnx
    >>> fnx.linalg.eig(fnx.tensor([[2., 0.], [0., 3.]])).eigenvalues.tolist()
    [(2+0j), (3+0j)]
    """
    return _results(return_types.linalg_eig, "linalg_eig", aten.linalg_eig.default(A), out, (A,),
                    [castable("eigenvalues", "torch.linalg.eig"),
                     castable("eigenvectors", "torch.linalg.eig")])


def eigvals(A, *, out=None):
    """The eigenvalues of a general square matrix (complex).

    >>> import fnx
    >>> fnx.linalg.eigvals(fnx.tensor([[0., 1.], [-1., 0.]])).tolist()
    [1j, -1j]
    """
    r = aten.linalg_eigvals.default(A)
    if out is None:
        return r
    if not isinstance(out, Tensor):
        raise TypeError(f"linalg_eigvals(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    # as eig's eigenvalues: any complex dtype the result casts to safely
    return write_results("linalg_eigvals", (r,), (out,), (A,),
                         [castable("eigenvalues", "torch.linalg.eigvals")])[0]


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending.

    >>> import fnx
    >>> fnx.linalg.svd(fnx.tensor([[3., 0.], [0., -4.]])).S.tolist()
    [4.0, 3.0]
    """
    return _results(return_types.linalg_svd, "linalg_svd",
                    aten.linalg_svd.default(A, full_matrices, driver=driver), out, (A,))


def svdvals(A, *, driver=None, out=None):
    """The singular values, descending.

    >>> import fnx
    >>> fnx.linalg.svdvals(fnx.tensor([[3., 0.], [0., -4.]])).tolist()
    [4.0, 3.0]
    """
    return _call(aten.linalg_svdvals.default, out, A, driver=driver)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse; singular values at or below
    ``max(atol, rtol * largest)`` are dropped (rtol defaults to eps * max(m, n)).

    >>> import fnx
    >>> fnx.linalg.pinv(fnx.tensor([[2., 0.], [0., 0.]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return _call(aten.linalg_pinv.atol_rtol_float, out, A, atol=_float(atol),
                 rtol=_float(rtol), hermitian=hermitian)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The number of singular values above ``max(atol, rtol * largest)``.

    >>> import fnx
    >>> fnx.linalg.matrix_rank(fnx.ones(3, 3)).item()
    1
    """
    if tol is not None:
        atol, rtol = tol, 0.0
    return _call(aten.linalg_matrix_rank.atol_rtol_float, out, A, atol=_float(atol),
                 rtol=_float(rtol), hermitian=hermitian)


def _call(op, out, *args, **kwargs):
    """``op(*args, **kwargs)``, or its ``out=`` form (fnx/ir/aten/out_variants.py) writing
    into ``out`` (exactly the result's dtype, resized, as PyTorch's)."""
    if out is None:
        return op(*args, **kwargs)
    return VARIANTS[op]["out"](*args, out=out, **kwargs)


def _results(kind, name, r, out, inputs, rules=None):
    """``kind(r)``, or (``out=``) ``r`` written into ``out``'s tensors, PyTorch's rules
    (fnx/api/out_results.py)."""
    return kind(r if out is None else write_results(name, r, out, inputs, rules))


def _float(x):
    if x is None:
        return None
    return x.item() if hasattr(x, "_ks") else float(x)


def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of min ||A X - B||, with PyTorch's
    driver rules (default 'gelsy'): rank for every driver but 'gels', singular values for
    'gelsd'/'gelss', residuals when A has more rows than columns, from 'gels' always and
    from 'gelsd'/'gelss' at full rank (empty tensors otherwise).

    >>> import fnx
    >>> A = fnx.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> r = fnx.linalg.lstsq(A, fnx.tensor([[1.], [2.], [3.]]), driver="gelsd")
    >>> r.solution.tolist(), r.residuals.tolist(), r.rank.item()
    ([[1.0], [2.0]], [9.0], 2)
    """
    return return_types.linalg_lstsq(aten.linalg_lstsq.default(A, B, rcond, driver=driver))


# ----------------------------------------------------------------------------- norms

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm over ``dim`` (all elements when None).

    >>> import fnx
    >>> fnx.linalg.vector_norm(fnx.tensor([3., -4.])).item()
    5.0
    """
    return _call(aten.linalg_vector_norm.default, out, x, ord, dim_list(dim), keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """A matrix norm over the two dims ``dim``: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2.

    >>> import fnx
    >>> A = fnx.tensor([[1., -2.], [3., 4.]])
    >>> fnx.linalg.matrix_norm(A, 1).item(), fnx.linalg.matrix_norm(A, float('inf')).item()
    (6.0, 7.0)
    """
    if isinstance(ord, str):
        return _call(aten.linalg_matrix_norm.str_ord, out, A, ord, list(dim), keepdim, dtype=dtype)
    return _call(aten.linalg_matrix_norm.default, out, A, ord, list(dim), keepdim, dtype=dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (``dim`` of length 1, or a 1-D input) or matrix norm (``dim`` of
    length 2, a 2-D input, or a string ``ord``); with neither ``ord`` nor ``dim``, the
    2-norm of all elements.

    >>> import fnx
    >>> fnx.linalg.norm(fnx.tensor([[3., 4.]])).item(), fnx.linalg.norm(fnx.eye(2), 'nuc').item()
    (5.0, 2.0)
    """
    if isinstance(ord, str):
        return _call(aten.linalg_norm.ord_str, out, A, ord, dim_list(dim), keepdim, dtype=dtype)
    return _call(aten.linalg_norm.default, out, A, ord, dim_list(dim), keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    """The condition number in norm ``p`` (None: the 2-norm, through singular values).

    >>> import fnx
    >>> fnx.linalg.cond(fnx.tensor([[2., 0.], [0., 0.5]])).item()
    4.0
    """
    if isinstance(p, str):
        return _call(aten.linalg_cond.p_str, out, A, p)
    return _call(aten.linalg_cond.default, out, A, p)


# ----------------------------------------------------------------------------- products

def matrix_power(A, n, *, out=None):
    """A to the integer power ``n`` (``n < 0`` inverts first, ``n == 0`` gives I).

    >>> import fnx
    >>> fnx.linalg.matrix_power(fnx.tensor([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    return _call(aten.linalg_matrix_power.default, out, A, n)


def matrix_exp(A):
    """The matrix exponential.

    >>> import fnx
    >>> fnx.linalg.matrix_exp(fnx.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return aten.linalg_matrix_exp.default(A)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, in the cheapest order (the first / last may be
    1-D).

    >>> import fnx
    >>> fnx.linalg.multi_dot([fnx.ones(2), fnx.ones(2, 3), fnx.ones(3)]).item()
    6.0
    """
    return _call(aten.linalg_multi_dot.default, out, list(tensors))


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (broadcast).

    >>> import fnx
    >>> fnx.linalg.cross(fnx.tensor([1., 0., 0.]), fnx.tensor([0., 1., 0.])).tolist()
    [0.0, 0.0, 1.0]
    """
    return _call(aten.linalg_cross.default, out, input, other, dim=dim)


def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)`` (broadcast).

    >>> import fnx
    >>> fnx.linalg.vecdot(fnx.tensor([1., 2.]), fnx.tensor([3., 4.])).item()
    11.0
    """
    return _call(aten.linalg_vecdot.default, out, x, y, dim=dim)


def householder_product(A, tau, *, out=None):
    """The first n columns of the product of Householder reflections I - tau_i v_i v_i^H
    (LAPACK's orgqr / ungqr).

    >>> import fnx
    >>> fnx.linalg.householder_product(fnx.zeros(2, 2), fnx.zeros(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _call(aten.linalg_householder_product.default, out, A, tau)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A read as a matrix of its first ``ind`` dims by the others.

    >>> import fnx
    >>> fnx.linalg.tensorinv(fnx.eye(4).reshape(4, 2, 2), ind=1).shape
    fnx.Size([2, 2, 4])
    """
    return _call(aten.linalg_tensorinv.default, out, A, ind)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) == B`` (``dims`` of A move to the end first).

    >>> import fnx
    >>> fnx.linalg.tensorsolve(fnx.eye(6).reshape(2, 3, 6), fnx.ones(2, 3)).shape
    fnx.Size([6])
    """
    return _call(aten.linalg_tensorsolve.default, out, A, B, None if dims is None else list(dims))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the matrices of A (a view), as ``torch.linalg.diagonal``.

    >>> import fnx
    >>> fnx.linalg.diagonal(fnx.arange(8.).reshape(2, 2, 2)).tolist()
    [[0.0, 3.0], [4.0, 7.0]]
    """
    return aten.diagonal.default(A, offset, dim1, dim2)


def vander(x, N=None):
    """The Vandermonde matrix of powers x^0, x^1, ..., x^(N-1) (increasing).

    >>> import fnx
    >>> fnx.linalg.vander(fnx.tensor([2, 3])).tolist()
    [[1, 2], [1, 3]]
    """
    return aten.linalg_vander.default(x, N=N)
