"""``out=`` forms of ops defined without one: ``define_out(op)`` defines ``name.out`` with
``op``'s arguments and ``*, Tensor(a!) out``, recorded in ``VARIANTS`` so the in-place and
``out=`` machinery (functionalization on cuda and in traces, autograd's refusal, the
derived OpInfo entries) finds it.  ``out`` is resized to the result's shape (a warning when
it had elements), as PyTorch's.

The dtype rule is PyTorch's per family: ``torch.linalg`` wants exactly the result's dtype
("Expected out tensor to have dtype float, but got double instead"); ``torch.fft`` wants
the result's category (complex, or floating point for the real-output transforms) and
casts within it.
"""
from __future__ import annotations

from ...core import dtype as D
from ...core.meta_array import MetaArray, meta_tensor
from ...core.tensor import Tensor
from ...ops import aten
from ..registry import defop
from ..variants import VARIANTS
from . import factorizations, index_ops, linalg, matrix_functions, shape  # noqa: F401  (given out=)
from .fft import TRANSFORMS

__all__ = ["define_out", "cpp_name", "OUT_OPS", "OUT_RULE", "OUT_DTYPE_ERROR"]

# out op -> its functional op; out op -> its dtype rule ("exact" or "category")
OUT_OPS: dict = {}
OUT_RULE: dict = {}
# the start of the error a rule gives for an integer ``out`` of a floating result
OUT_DTYPE_ERROR = {"exact": "Expected out tensor to have dtype",
                   "category": "expects a (complex|floating point) output tensor",
                   "take": r"take\(\): self and out expected to have the same dtype",
                   "histc": "input tensor and hist tensor should have the same dtype",
                   "search": "output tensor's dtype is wrong",
                   "ormqr": "torch.ormqr: Expected input and result to have the same dtype"}

def cpp_name(dtype) -> str:
    """PyTorch's C++ name of ``dtype``, as its out= dtype errors print it."""
    return dtype.cpp_type


def _exact(name, r, out):
    if r.dtype is not out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_name(r.dtype)}, but got "
                           f"{cpp_name(out.dtype)} instead")


def _same_category(name, r, out):
    short = name.removeprefix("fft_")
    if r.dtype.is_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{short} expects a complex output tensor, but got "
                           f"{out.dtype.scalar_type}")
    if not r.dtype.is_complex and not out.dtype.is_floating_point:
        raise RuntimeError(f"{short} expects a floating point output tensor, but got "
                           f"{out.dtype.scalar_type}")


def _take(name, r, out):
    if r.dtype is not out.dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {r.dtype.scalar_type} and out.dtype = "
                           f"{out.dtype.scalar_type}")


def _histc(name, r, out):
    if r.dtype is not out.dtype:
        raise RuntimeError(f"torch.histogram: input tensor and hist tensor should have the "
                           f"same dtype, but got input {cpp_name(r.dtype)} and hist "
                           f"{cpp_name(out.dtype)}")


def _search(name, r, out):
    if r.dtype is not out.dtype:
        raise RuntimeError(f"torch.{name}(): output tensor's dtype is wrong, it can only be "
                           f"Int(int32) or Long(int64) depending on whether out_int32 flag is "
                           f"True, but we got output tensor's dtype {out.dtype.scalar_type} "
                           f"and out_int32 flag is {r.dtype is D.int32}")


def _ormqr(name, r, out):
    if r.dtype is not out.dtype:
        raise RuntimeError(f"torch.ormqr: Expected input and result to have the same dtype, "
                           f"but input has dtype{r.dtype.scalar_type} and result has dtype "
                           f"{out.dtype.scalar_type}")


RULES = {"exact": _exact, "category": _same_category, "take": _take, "histc": _histc,
         "search": _search, "ormqr": _ormqr}


def _as_meta(v):
    if isinstance(v, Tensor):
        return meta_tensor(tuple(v.shape), v.dtype)
    if isinstance(v, (list, tuple)):
        return type(v)(_as_meta(x) for x in v)
    return v


def result_meta(op, args, kwargs):
    """The shape and dtype ``op(*args, **kwargs)`` gives: its meta function, or (an op
    defined by its decomposition alone) the op run on meta tensors."""
    if op.meta is not None:
        return op.meta(*args, **kwargs)
    return op(*_as_meta(args), **{k: _as_meta(v) for k, v in kwargs.items()})


def define_out(op, rule="exact"):
    """Define and return ``<op name>.out`` (see the module documentation)."""
    text = str(op.schema)
    head, args = text[:text.index("(")], text[text.index("(") + 1:text.rindex(") ->")]
    overload = head.split(".")[1] if "." in head else "default"
    out_name = "out" if overload == "default" else f"{overload}_out"
    sep = ", *" if "*" not in args else ""
    check = RULES[rule]

    def meta(*a, out, **kw):
        r = result_meta(op, a, kw)
        check(op.name, r, out)
        if isinstance(out._data, MetaArray) and tuple(out.shape) != tuple(r.shape):
            out._data = MetaArray(r.shape, out._data.dtype)     # out= resizes
        return out
    meta.__name__ = f"_{op.name}_out_meta"
    out_op = defop(f"{op.name}.{out_name}({args}{sep}, Tensor(a!) out) -> Tensor(a!)",
                   tags=("out",), meta=meta)
    VARIANTS[op] = {"functional": op, "out": out_op}
    OUT_OPS[out_op] = op
    OUT_RULE[out_op] = rule
    return out_op




def _define_all():
    for name in ("linalg_inv", "linalg_det", "linalg_solve", "linalg_cholesky",
                 "linalg_vector_norm", "linalg_matrix_norm", "linalg_cross", "linalg_vecdot",
                 "linalg_svdvals", "linalg_eigvalsh", "linalg_eigvals", "linalg_pinv",
                 "linalg_solve_triangular", "linalg_lu_solve", "linalg_ldl_solve",
                 "linalg_matrix_power", "linalg_householder_product", "linalg_matrix_exp",
                 "linalg_multi_dot", "linalg_matrix_rank", "linalg_cond", "linalg_norm",
                 "linalg_tensorinv", "linalg_tensorsolve"):
        packet = getattr(aten, name)
        for ov in packet.overloads():
            define_out(getattr(packet, ov), "exact")
    for op in TRANSFORMS.values():
        define_out(op, "category")
    for op in (aten.index_add.default, aten.index_copy.default, aten.index_reduce.default):
        define_out(op, "exact")
    define_out(aten.take.default, "take")
    define_out(aten.histc.default, "histc")
    define_out(aten.ormqr.default, "ormqr")
    define_out(aten.searchsorted.Tensor, "search")
    define_out(aten.bucketize.Tensor, "search")
    # the out= of the view-copy functions (``t_copy(x, out=o)``): the view, then this
    define_out(aten.clone.default, "exact")


_define_all()
