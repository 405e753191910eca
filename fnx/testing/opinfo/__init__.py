"""OpInfo entries, one module per op family; importing this package registers them all.

A family module builds ``OpInfo``s and passes them to ``fnx.testing.register``::

    from fnx.testing import OpInfo, SampleInput, make_tensor, register
    from fnx.testing.reference_dtypes import pointwise

    def _samples(info, device, dtype):
        yield SampleInput(make_tensor((3, 4), dtype, device))

    register(OpInfo(fnx.ops.aten.exp.default, pointwise(np.exp, "int_to_float", n=1),
                    sample_inputs=_samples))

``entries()`` lists every registered entry followed by the in-place (``op_``) and
``out=`` entries derived from each functional one (``fnx.testing.variant_entries``).
"""
from __future__ import annotations

from ...ir.variants import variants_of
from ..database import by_name, op_db, op_name
from ..variant_entries import inplace_entry, out_entry
from . import (amp, arrange, combine, complex_ops, conversion, elementwise, elementwise_ternary,
               factorizations, factory, fft, index_ops, indexing, linalg, matrix_functions, nn,
               order_statistics, pointwise_math, prims, random, reduction, shape, sorting,
               special, statistics)
from . import bessel, histogram, polynomials, quantization

__all__ = ["entries", "entry_for", "amp", "arrange", "combine", "complex_ops", "conversion",
           "elementwise", "elementwise_ternary", "factorizations", "factory", "fft", "index_ops",
           "indexing", "linalg", "matrix_functions", "nn", "order_statistics", "pointwise_math",
           "prims", "random", "reduction", "shape", "sorting", "special", "statistics",
           "histogram", "bessel", "polynomials", "quantization"]

_derived: dict = {}      # id(functional entry) -> its derived entries


def _derive(info) -> list:
    if not info.variants or info.variant != "functional":
        return []
    derived = []
    for kind, vop in variants_of(info.op).items():
        if op_name(vop) in by_name:      # written by hand: that entry wins
            continue
        make = inplace_entry if kind == "inplace" else out_entry
        derived.append(make(info, vop, info.variant_known.get(kind, ())))
    return derived


def entries(variants=True) -> list:
    """Every entry: the registered ones and (``variants=True``) their derived variants.
    Entries registered later (an out-of-tree backend's) are included as they come."""
    if not variants:
        return list(op_db)
    out = []
    for info in list(op_db):
        out.append(info)
        derived = _derived.get(id(info))
        if derived is None:
            derived = _derived[id(info)] = _derive(info)
        out.extend(derived)
    return out


def entry_for(op):
    """The entry of ``op`` (an OpOverload or an entry name), or None."""
    name = op if isinstance(op, str) else op_name(op)
    for info in entries():
        if info.name == name:
            return info
    return None
