"""fnx.testing: the OpInfo database and the checks it drives.

One entry (``OpInfo``) per operator overload: sample inputs across dtypes and shapes
(0-dim, empty, broadcasting, non-contiguous, Python scalars), an independent NumPy/SciPy
reference, per-dtype tolerances and known failures as data.  The same entries drive
eager vs reference, meta vs eager, decomposed (core, prims) vs eager, and, on any device,
a backend's kernels (``backend_params``).  Family modules in ``fnx/testing/opinfo/``
register their entries; in-place and ``out=`` variants are derived from functional ones.
``fnx.testing.decomp`` checks a decomposition against eager on any samples
(``assert_decomposes``, ``assert_same_error``, ``assert_graph_decomposes``).

>>> import fnx, fnx.testing as ft
>>> info = ft.entry_for(fnx.ops.aten.add.Tensor)
>>> info.name, fnx.float32 in info.dtypes
('add.Tensor', True)
>>> for s in info.sample_inputs("cpu", fnx.float32)[:3]:
...     ft.check_reference(info, s)
>>> ft.entry_for("add_.Tensor").variant
'inplace'
"""
from ..ir.variants import variants_of
from .cases import Case, backend_params, cases, params, run_check
from .checks import (check_decomposition, check_errors, check_lowering, check_meta, check_reference,
                     lowering_targets)
from .compare import assert_close, assert_equal, to_numpy
from .database import (ALL_DTYPES, CHECKS, DEFAULT_TOLS, FLOATS, INTS, ErrorInput, Known, OpInfo,
                       SampleInput, make_tensor, op_db, op_name, register)
from .decomp import (REDUCTION_TOLS, assert_decomposes, assert_graph_decomposes, assert_ran_only,
                     assert_same, assert_same_error, functional_aten_ops, outside_target,
                     sample_params, seeded_tensor)
from .opinfo import entries, entry_for

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "Known", "make_tensor", "register",
           "entries", "entry_for", "op_db", "op_name", "variants_of", "CHECKS",
           "DEFAULT_TOLS", "FLOATS", "INTS", "ALL_DTYPES", "Case", "cases", "params",
           "backend_params", "run_check", "check_reference", "check_meta",
           "check_decomposition", "check_errors", "check_lowering", "lowering_targets",
           "assert_close", "assert_equal", "to_numpy", "assert_same", "assert_decomposes",
           "assert_same_error",
           "assert_graph_decomposes", "assert_ran_only", "outside_target",
           "functional_aten_ops", "sample_params", "seeded_tensor", "REDUCTION_TOLS"]
