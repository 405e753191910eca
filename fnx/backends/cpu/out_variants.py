"""CPU kernels of the ``out=`` ops of ``fnx/ir/aten/out_variants.py``: the out op's meta
(PyTorch's dtype rule), the functional op below this key, then ``write_out`` (resize,
copy)."""
from __future__ import annotations

from ...ir.aten.out_variants import OUT_OPS
from ._core import register
from .elementwise import write_out


def _out_kernel(out_op, functional):
    def kernel(ks, *args, out, **kwargs):
        out_op.meta(*args, out=out, **kwargs)
        r = functional.redispatch(ks, *args, **kwargs)
        write_out(out_op.name, out, r)
        return out
    return kernel


for _out_op, _functional in OUT_OPS.items():
    register(_out_op, _out_kernel(_out_op, _functional))
