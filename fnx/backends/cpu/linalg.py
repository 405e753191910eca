"""NumPy kernels for the matrix products of ``fnx.ir.aten.linalg``.

The op's meta function checks shapes and dtypes first (products never promote).
float16/bfloat16 multiply in float32 and round once; integer products stay in their
dtype (NumPy's integer matmul wraps around like PyTorch's); bool products are refused
as PyTorch's CPU kernels refuse them.  matmul, linear, outer, baddbmm and tensordot
have no kernel here: they decompose into these.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as D
from ...ir.aten import linalg as L
from ...ir.aten._common import not_implemented
from ._core import data, kernel, wrap

_HALF = (D.float16, D.bfloat16)
_F32 = np.dtype(np.float32)


def _operands(kernel_name, name, *xs):
    d = xs[0]._dtype
    if d is D.bool:
        raise not_implemented(kernel_name, D.bool)
    arrays = [data(x, name) for x in xs]
    if d in _HALF:
        arrays = [a.astype(_F32) for a in arrays]
    return arrays


def _result(r, dtype):
    r = np.asarray(r)
    return wrap(r if r.dtype == dtype.numpy else r.astype(dtype.numpy), dtype)


def _product(op, kernel_name, fn):
    """mm, bmm, dot, mv: the op's meta checks shapes and dtypes, then one NumPy product."""
    def product(ks, self, other):
        out = op.meta(self, other).dtype
        a, b = _operands(kernel_name, op.name, self, other)
        return _result(fn(a, b), out)
    return kernel(op)(product)


_product(L.mm, "addmm_impl_cpu_", np.matmul)
_product(L.bmm, "bmm", np.matmul)
_product(L.dot, "dot", np.dot)
_product(L.mv, "addmv_impl_cpu", np.matmul)


@kernel(L.addmm)
def _addmm(ks, self, mat1, mat2, *, beta=1, alpha=1):
    r = L.addmm.meta(self, mat1, mat2, beta=beta, alpha=alpha)
    bias, a, b = _operands("addmm_impl_cpu_", "addmm", self, mat1, mat2)
    if not (r.dtype.is_floating_point or r.dtype.is_complex):
        # Integer addmm scales by alpha and beta converted to the integer type first.
        alpha, beta = int(alpha), int(beta)
    with np.errstate(all="ignore"):
        prod = np.matmul(a, b)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:      # PyTorch ignores self entirely (nan and inf do not propagate)
            out = prod
        else:
            out = prod + (bias if beta == 1 else bias * beta)
    return _result(out, r.dtype)


@kernel(L.einsum)
def _einsum(ks, equation, tensors, *, path=None):
    out = L.einsum.meta(equation, tensors).dtype
    explicit, shape = L.parse_einsum(equation, [tuple(t.shape) for t in tensors])
    arrays = _operands("einsum", "einsum", *tensors)
    r = np.asarray(np.einsum(explicit, *arrays, optimize=len(arrays) > 2))
    if r.shape != shape or any(np.may_share_memory(r, a) for a in arrays):
        r = np.broadcast_to(r, shape).copy()    # NumPy returns views for pure permutations
    return _result(r, out)
