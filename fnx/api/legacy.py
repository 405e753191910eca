"""Legacy names of PyTorch's namespace: the norms ``frobenius_norm``, ``nuclear_norm``,
``native_norm`` and ``norm_except_dim`` (old weight_norm's; all on ``linalg``'s ops), and
the functions PyTorch removed in 1.9 (``solve``, ``eig``,
``lstsq``, ``symeig``, ``matrix_rank``), which still exist there to raise an error that
names their replacement; fnx raises the same, naming fnx's replacement.

>>> import fnx
>>> fnx.frobenius_norm(fnx.ones(2, 2), (0, 1)).item()
2.0
>>> fnx.solve(fnx.eye(2), fnx.eye(2))
Traceback (most recent call last):
  ...
RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
"""
from __future__ import annotations

from ..core.tensor import tensor_method
from ..ir.dims import wrap_dim
from ..ops import aten

__all__ = ["frobenius_norm", "nuclear_norm", "native_norm", "norm_except_dim", "solve", "eig",
           "lstsq", "symeig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def frobenius_norm(input, dim, keepdim=False):
    """The Frobenius norm over ``dim`` (``linalg.vector_norm`` with ord 2).

    >>> import fnx
    >>> fnx.frobenius_norm(fnx.tensor([[3., 4.]]), (1,)).tolist()
    [5.0]
    """
    dims = [dim] if isinstance(dim, int) else list(dim)
    return aten.linalg_vector_norm.default(input, 2, dims, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The nuclear norm (the sum of singular values) of the matrices in ``dim`` (the last
    two by default, as ``linalg.matrix_norm``); ``nuclear_norm(input, keepdim)`` with a
    bool is PyTorch's other form.

    >>> import fnx
    >>> fnx.nuclear_norm(fnx.eye(3)).item()
    3.0
    """
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    return aten.linalg_matrix_norm.str_ord(input, "nuc", list(dim), keepdim)


def _floating(name, x):
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"{name}(): input dtype should be either floating point or "
                           f"complex. Got {x.dtype.scalar_type} instead.")


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The vector ``p``-norm of ``input``'s entries over ``dim`` (all by default), in
    ``dtype`` when given: ``linalg.vector_norm``.  PyTorch keeps this name for sparse
    tensors (full reductions only); fnx's tensors are dense, so every ``dim`` works.

    >>> import fnx
    >>> fnx.native_norm(fnx.tensor([[3., 4.], [0., 0.]])).item()
    5.0
    >>> fnx.native_norm(fnx.tensor([[3., -4.]]), 1, [1], True, None).tolist()
    [[7.0]]
    """
    _floating("norm", input)
    p = 2 if p is None else p
    dims = [dim] if isinstance(dim, int) else (None if dim is None else list(dim))
    return aten.linalg_vector_norm.default(input, p, dims or None, keepdim, dtype=dtype)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of each slice ``v.select(dim, i)``, shaped as ``v`` with every other
    dim of size 1 (weight_norm's ``g``); ``dim=-1`` is the norm of the whole tensor (a
    0-dim result).

    >>> import fnx
    >>> fnx.norm_except_dim(fnx.tensor([[3., 0.], [4., 1.]])).tolist()
    [[3.0], [4.123105525970459]]
    >>> fnx.norm_except_dim(fnx.tensor([[3., 0.], [4., 0.]]), 2, -1).item()
    5.0
    """
    _floating("norm", v)
    if dim == -1:
        return aten.linalg_vector_norm.default(v, pow)
    d = wrap_dim(dim, v.ndim)
    size = v.shape[d]
    rows = aten.reshape.default(aten.movedim.int(v, d, 0), [size, -1])
    shape = [1] * v.ndim
    shape[d] = size
    return aten.reshape.default(aten.linalg_vector_norm.default(rows, pow, [1]), shape)


@tensor_method()
def solve(input, A, *, out=None):
    """Removed: raises, naming ``fnx.linalg.solve``.

    >>> import fnx
    >>> fnx.solve(fnx.eye(2), fnx.eye(2))
    Traceback (most recent call last):
      ...
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        _REMOVED + "`fnx.solve` is deprecated in favor of `fnx.linalg.solve`. "
        "`fnx.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `fnx.lu`, which can be used "
        "with `fnx.lu_solve` or `fnx.lu_unpack`.\nX = fnx.solve(B, A).solution should be "
        "replaced with:\nX = fnx.linalg.solve(A, B)")


@tensor_method()
def eig(input, eigenvectors=False, *, e=None, v=None):
    """Removed: raises, naming ``fnx.linalg.eig``/``eigvals``.

    >>> import fnx
    >>> fnx.eig(fnx.eye(2))
    Traceback (most recent call last):
      ...
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        _REMOVED + "`fnx.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = fnx.eig(A) should "
        "be replaced with:\nL_complex = fnx.linalg.eigvals(A)\n\nand\n\nL, V = "
        "fnx.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "fnx.linalg.eig(A)")


@tensor_method()
def lstsq(input, A, *, out=None):
    """Removed: raises, naming ``fnx.linalg.lstsq``.

    >>> import fnx
    >>> fnx.lstsq(fnx.eye(2), fnx.eye(2))
    Traceback (most recent call last):
      ...
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        _REMOVED + "`fnx.lstsq` is deprecated in favor of `fnx.linalg.lstsq`.\n"
        "`fnx.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem)."
        "\n\nTo get the QR decomposition consider using `fnx.linalg.qr`.\n\nThe returned "
        "solution in `fnx.lstsq` stored the residuals of the solution in the last m - n "
        "columns of the returned value whenever m > n. In fnx.linalg.lstsq, the residuals "
        "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = fnx.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
        "with:\nX = fnx.linalg.lstsq(A, B).solution")


@tensor_method()
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed: raises, naming ``fnx.linalg.eigh``/``eigvalsh``.

    >>> import fnx
    >>> fnx.symeig(fnx.eye(2))
    Traceback (most recent call last):
      ...
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        "fnx.symeig(A, upper=upper) should be replaced with:\nL = fnx.linalg.eigvalsh(A, "
        "UPLO='U' if upper else 'L')\n\nand\n\nL, V = fnx.symeig(A, eigenvectors=True) "
        "should be replaced with:\nL, V = fnx.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed: raises, naming ``fnx.linalg.matrix_rank``.

    >>> import fnx
    >>> fnx.matrix_rank(fnx.eye(2))
    Traceback (most recent call last):
      ...
    RuntimeError: This function was deprecated since version 1.9 and is now removed. ...
    """
    raise RuntimeError(
        _REMOVED + "\nPlease use the `fnx.linalg.matrix_rank` function instead. The "
        "parameter 'symmetric' was renamed in `fnx.linalg.matrix_rank()` to 'hermitian'.")
