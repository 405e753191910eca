"""Tensor layouts, as ``torch.layout``: ``fnx.strided`` (dense, the default) and the sparse
layouts ``sparse_coo`` (coordinates and values) and ``sparse_csr/csc/bsr/bsc`` (compressed
rows or columns, of elements or of blocks).

A tensor's layout is its storage's ``layout`` attribute when it has one (the sparse storage
of ``fnx.backends.sparse``), else ``strided``.
"""
from __future__ import annotations

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "COMPRESSED", "by_name", "check_strided", "SparseNotTraceable"]


class layout:
    """One tensor layout; one object per name, compared by identity.

    >>> import fnx
    >>> fnx.zeros(2).layout, fnx.sparse_csr
    (fnx.strided, fnx.sparse_csr)
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"fnx.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
#: the compressed layouts (the SparseCsr dispatch key's)
COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
_BY_NAME = {x.name: x for x in (strided, sparse_coo, *COMPRESSED)}


def by_name(name: str) -> layout:
    """The layout called ``name`` (``"sparse_coo"``)."""
    return _BY_NAME[name]


class SparseNotTraceable(RuntimeError):
    """A trace or a compiled program met a sparse tensor (``check_strided``):
    ``fnx.compile`` then runs the function eagerly (an error with ``fullgraph=True``)."""


def check_strided(t, what: str) -> None:
    """Raise ``SparseNotTraceable`` when ``t`` is sparse: ``what`` (a compiled program, a
    trace) holds dense arrays only, and a sparse tensor read as one would give a wrong
    answer."""
    lay = getattr(t._data, "layout", None)
    if lay is not None and lay is not strided:
        raise SparseNotTraceable(f"{what}: sparse tensors ({lay}) are not supported; run "
                                 f"the function eagerly, or pass the tensor's to_dense()")
