"""Pointwise operators: unary math, binary arithmetic, comparisons, logic, where, clamp.

Each op is one row: its schema and its type-promotion kind.  From the row come the
op, its in-place variant ``name_`` and its ``name.out`` variant, each with a meta
function derived from the promotion kind.  Decompositions to prims and derivative
formulas attach to these same objects (fnx/ir/ops/*_decomp.py, fnx/autograd).
"""
from __future__ import annotations

from ..promotion import (ALWAYS_BOOL, COMPLEX_TO_FLOAT, DEFAULT, INT_TO_FLOAT)
from ...dispatch.dispatcher import get_op
from ..registry import defop
from ._common import inplace_meta, out_meta, pointwise_meta

CORE = ("core", "pointwise")
ATEN = ("pointwise",)

# name, promotion kind, is core
UNARY = [
    ("abs", COMPLEX_TO_FLOAT, True), ("neg", DEFAULT, True), ("sign", DEFAULT, True),
    ("acos", INT_TO_FLOAT, True), ("acosh", INT_TO_FLOAT, True), ("asin", INT_TO_FLOAT, True),
    ("asinh", INT_TO_FLOAT, True), ("atan", INT_TO_FLOAT, True), ("atanh", INT_TO_FLOAT, True),
    ("cos", INT_TO_FLOAT, True), ("cosh", INT_TO_FLOAT, True), ("sin", INT_TO_FLOAT, True),
    ("sinh", INT_TO_FLOAT, True), ("tan", INT_TO_FLOAT, True), ("tanh", INT_TO_FLOAT, True),
    ("erf", INT_TO_FLOAT, True), ("exp", INT_TO_FLOAT, True), ("expm1", INT_TO_FLOAT, True),
    ("log", INT_TO_FLOAT, True), ("log10", INT_TO_FLOAT, True), ("log1p", INT_TO_FLOAT, True),
    ("log2", INT_TO_FLOAT, True), ("reciprocal", INT_TO_FLOAT, True),
    ("rsqrt", INT_TO_FLOAT, True), ("sqrt", INT_TO_FLOAT, True),
    ("sigmoid", INT_TO_FLOAT, True), ("exp2", INT_TO_FLOAT, False),
    ("erfinv", INT_TO_FLOAT, False), ("ceil", DEFAULT, True), ("floor", DEFAULT, True),
    ("round", DEFAULT, True), ("trunc", DEFAULT, True), ("frac", DEFAULT, False),
    ("relu", DEFAULT, True), ("bitwise_not", DEFAULT, True),
    ("isnan", ALWAYS_BOOL, True), ("isinf", ALWAYS_BOOL, True), ("isfinite", ALWAYS_BOOL, False),
    ("logical_not", ALWAYS_BOOL, True), ("signbit", ALWAYS_BOOL, False),
    ("square", DEFAULT, False),
]
_NO_INPLACE = {"isnan", "isinf", "isfinite", "signbit"}

# name, overload, schema arguments after ``self``, promotion kind, is core
BINARY = [
    ("add", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, True),
    ("add", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, True),
    ("sub", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, True),
    ("sub", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, True),
    ("rsub", "Tensor", "Tensor other, *, Scalar alpha=1", DEFAULT, False),
    ("rsub", "Scalar", "Scalar other, Scalar alpha=1", DEFAULT, False),
    ("mul", "Tensor", "Tensor other", DEFAULT, True),
    ("mul", "Scalar", "Scalar other", DEFAULT, True),
    ("div", "Tensor", "Tensor other", INT_TO_FLOAT, True),
    ("div", "Scalar", "Scalar other", INT_TO_FLOAT, True),
    ("div", "Tensor_mode", "Tensor other, *, str? rounding_mode", DEFAULT, True),
    ("div", "Scalar_mode", "Scalar other, *, str? rounding_mode", DEFAULT, True),
    ("floor_divide", "default", "Tensor other", DEFAULT, False),
    ("floor_divide", "Scalar", "Scalar other", DEFAULT, False),
    ("remainder", "Tensor", "Tensor other", DEFAULT, True),
    ("remainder", "Scalar", "Scalar other", DEFAULT, True),
    ("fmod", "Tensor", "Tensor other", DEFAULT, True),
    ("fmod", "Scalar", "Scalar other", DEFAULT, True),
    ("pow", "Tensor_Tensor", "Tensor exponent", DEFAULT, True),
    ("pow", "Tensor_Scalar", "Scalar exponent", DEFAULT, True),
    ("atan2", "default", "Tensor other", INT_TO_FLOAT, True),
    ("maximum", "default", "Tensor other", DEFAULT, True),
    ("minimum", "default", "Tensor other", DEFAULT, True),
    ("bitwise_and", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_and", "Scalar", "Scalar other", DEFAULT, True),
    ("bitwise_or", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_or", "Scalar", "Scalar other", DEFAULT, True),
    ("bitwise_xor", "Tensor", "Tensor other", DEFAULT, True),
    ("bitwise_xor", "Scalar", "Scalar other", DEFAULT, True),
    ("logical_and", "default", "Tensor other", ALWAYS_BOOL, True),
    ("logical_or", "default", "Tensor other", ALWAYS_BOOL, True),
    ("logical_xor", "default", "Tensor other", ALWAYS_BOOL, True),
]
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    BINARY.append((_cmp, "Tensor", "Tensor other", ALWAYS_BOOL, True))
    BINARY.append((_cmp, "Scalar", "Scalar other", ALWAYS_BOOL, True))


def _define_family(name, overload, args, kind, core, n_tensors):
    """Define ``name.overload``, ``name_.overload`` and ``name.out`` from one row."""
    ov = "" if overload == "default" else f".{overload}"
    tags = CORE if core else ATEN
    meta = pointwise_meta(kind, n_tensors)
    sep = ", " if args else ""
    op = defop(f"{name}{ov}(Tensor self{sep}{args}) -> Tensor", tags=tags, promotion=kind,
               meta=meta)
    ops = {"functional": op}
    if name not in _NO_INPLACE:
        ops["inplace"] = defop(f"{name}_{ov}(Tensor(a!) self{sep}{args}) -> Tensor(a!)",
                               tags=("inplace", "pointwise"), promotion=kind,
                               meta=inplace_meta(meta, f"{name}_"))
    out_ov = "out" if overload in ("default", "Tensor") else f"{overload}_out"
    kw = ", *" if "*" not in args else ""
    ops["out"] = defop(f"{name}.{out_ov}(Tensor self{sep}{args}{kw}, Tensor(a!) out) "
                       f"-> Tensor(a!)", tags=("out", "pointwise"), promotion=kind,
                       meta=out_meta(meta, name))
    return ops


# ``VARIANTS[functional op] = {"functional", "inplace", "out"}``: backends use this to
# derive in-place and out= kernels from the functional one.
VARIANTS = {}
for _name, _kind, _core in UNARY:
    _fam = _define_family(_name, "default", "", _kind, _core, 1)
    VARIANTS[_fam["functional"]] = _fam
for _name, _ov, _args, _kind, _core in BINARY:
    _fam = _define_family(_name, _ov, _args, _kind, _core, 2)
    VARIANTS[_fam["functional"]] = _fam

round_decimals = defop("round.decimals(Tensor self, *, int decimals) -> Tensor", tags=ATEN,
                       promotion=DEFAULT, meta=pointwise_meta(DEFAULT, 1))
pow_Scalar = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", tags=CORE,
                   promotion=DEFAULT, meta=pointwise_meta(DEFAULT, 2))
where_self = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
                   tags=CORE, promotion=DEFAULT)
clamp = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", tags=CORE,
              promotion=DEFAULT)
clamp_Tensor = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                     tags=CORE, promotion=DEFAULT)


def _where_meta(condition, self, other):
    from ... import _dtype as D
    from ..promotion import elementwise_dtypes
    from ..registry import TensorMeta
    from ..shapes import broadcast_shapes
    from ._common import shape_of
    if hasattr(condition, "_ks") and condition.dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {condition.dtype.name}")
    shape = broadcast_shapes(shape_of(condition), shape_of(self), shape_of(other))
    return TensorMeta(shape, elementwise_dtypes(DEFAULT, self, other)[1])


def _clamp_tensor_meta(self, min=None, max=None):
    from ..promotion import elementwise_dtypes
    from ..registry import TensorMeta
    from ..shapes import broadcast_shapes
    from ._common import shape_of
    present = [x for x in (self, min, max) if x is not None]
    if len(present) == 1:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return TensorMeta(broadcast_shapes(*(shape_of(x) for x in present)),
                      elementwise_dtypes(DEFAULT, *present)[1])


where_self.meta = _where_meta
clamp_Tensor.meta = _clamp_tensor_meta
clamp.meta = _clamp_tensor_meta
clamp_ = defop("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
               tags=("inplace", "pointwise"), promotion=DEFAULT,
               meta=inplace_meta(clamp.meta, "clamp_"))
VARIANTS[clamp] = {"functional": clamp, "inplace": clamp_}


def _square_meta(self):
    # PyTorch's square is pow(x, 2): a bool tensor squares to int64.
    from ..promotion import elementwise_dtypes
    from ..registry import TensorMeta
    return TensorMeta(tuple(self.shape), elementwise_dtypes(DEFAULT, self, 2)[1])


get_op("aten::square").meta = _square_meta
