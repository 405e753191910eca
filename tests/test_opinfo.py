"""The OpInfo database drives the op tests: every entry x dtype x check.

Ids read ``<op>.<overload>-<dtype>-<check>`` (``add.Tensor-float32-reference``); known
failures (``fnx.testing.Known``, stored with the entries) run as strict xfails.
``FNX_OPINFO_DTYPES=float32,int64,bool`` limits the dtypes for a quicker run.
"""
import importlib.util
import pathlib

import numpy as np
import pytest

import fnx
import fnx.testing as ft
from fnx.core import device as _device
from fnx.ir.aten import elementwise as E
from fnx.library import Library
from fnx.testing import reference_dtypes as refs


@pytest.mark.parametrize("case", ft.params())
def test_op(case):
    case.run()


# Lowered vs eager: every functional entry through the reference interpreter (trace,
# decompose to prims, run the graph) and through the JAX target (all of an entry's samples
# in one jitted program per dtype, so each entry compiles once).
LOWERING = ft.params(["lowering"], targets=("interpreter", "jax"),
                     dtypes=(fnx.float32, fnx.int64))


@pytest.mark.parametrize("case", LOWERING)
def test_lowered(case):
    case.run()


# The other dtypes through the JAX target only: XLA evaluates 16-bit math in 16 bits and
# rewrites products of converted booleans, where eager does neither
LOWERING_MORE = ft.params(["lowering"], targets=("jax",),
                          dtypes=(fnx.float16, fnx.bfloat16, fnx.bool, fnx.uint8))


@pytest.mark.parametrize("case", LOWERING_MORE)
def test_lowered_other_dtypes(case):
    case.run()


# ----------------------------------------------------------------------- the framework itself

def test_ids_and_checks():
    ids = {c.id for c in ft.cases()}
    for expected in ("add.Tensor-float32-reference", "add.Tensor-int64-meta",
                     "add_.Tensor-float32-reference", "add.out-bfloat16-reference",
                     "sin.default-float16-decomp_prims", "add.Tensor-errors"):
        assert expected in ids
    # core ops are already core: no decomp_core case; derived in-place entries have no
    # sin_ samples for integer dtypes (the float result cannot be written back)
    assert "add.Tensor-float32-decomp_core" not in ids
    assert "sin_.default-int64-reference" not in ids
    assert "sin_.default-float32-reference" in ids


def test_every_elementwise_op_has_an_entry():
    names = {i.name for i in ft.entries()}
    for op, family in E.VARIANTS.items():
        for v in family.values():
            assert ft.op_name(v) in names, v
    for op in (E.round_decimals, E.pow_Scalar, E.where_self, E.clamp, E.clamp_Tensor):
        assert ft.op_name(op) in names


def test_variants_are_derived():
    add = ft.entry_for(fnx.ops.aten.add.Tensor)
    assert ft.variants_of(add.op) == {"inplace": fnx.ops.aten.add_.Tensor,
                                      "out": fnx.ops.aten.add.out}
    inplace = ft.entry_for("add_.Tensor")
    assert inplace.base is add and inplace.variant == "inplace"
    # every derived in-place sample keeps self's shape
    for s in inplace.sample_inputs("cpu", fnx.float32):
        assert tuple(np.broadcast_shapes(s.input.shape, *(np.shape(a) for a in s.args))) \
            == tuple(s.input.shape)
    assert any("out" in s.kwargs for s in ft.entry_for("add.out").sample_inputs())


def test_samples_cover_the_shapes_that_matter():
    info = ft.entry_for(fnx.ops.aten.mul.Tensor)
    samples = info.sample_inputs("cpu", fnx.float32)
    shapes = [tuple(s.input.shape) for s in samples]
    assert () in shapes and any(0 in sh for sh in shapes)
    assert any(not s.input.is_contiguous() for s in samples)
    assert any(isinstance(a, (int, float)) for s in samples for a in s.args)
    assert any(fnx.ops.aten.mul.Tensor(*s.all_args()).shape != s.input.shape
               for s in samples)                               # broadcasting
    # deterministic: the same samples on every call
    again = info.sample_inputs("cpu", fnx.float32)
    assert np.array_equal(samples[0].input.numpy(), again[0].input.numpy())


def test_make_tensor():
    t = ft.make_tensor((4, 5), fnx.uint8, low=2, high=4)
    assert t.dtype is fnx.uint8 and set(np.unique(t.numpy())) <= {2, 3}
    z = ft.make_tensor((50,), fnx.int32, low=-1, high=2, exclude_zero=True)
    assert not (z.numpy() == 0).any()
    f = ft.make_tensor((3, 2), fnx.bfloat16, noncontiguous=True)
    assert f.dtype is fnx.bfloat16 and f.shape == (3, 2) and not f.is_contiguous()
    assert ft.make_tensor((), fnx.bool).shape == ()


def test_reference_dtypes_follow_pytorch_not_numpy():
    assert refs.result_dtype(np.ones(2, np.int64), np.ones(2, np.float32)) == np.float32
    assert refs.result_dtype(np.ones(2, np.int64), np.ones(2, np.float16)) == np.float16
    assert refs.result_dtype(np.ones(2, np.int32), np.asarray(2.0)) == np.float64
    assert refs.result_dtype(np.ones(2, np.bool_), 3) == np.int64
    assert refs.result_dtype(np.ones(2, np.uint8), np.ones(2, np.int8)) == np.int16
    assert refs.result_dtype(np.ones(2, np.float16), np.ones(2, refs.BF16)) == np.float32
    assert refs.result_dtype(np.ones(2, np.float32), 1j) == np.complex64
    assert refs.pointwise(np.true_divide, refs.INT_TO_FLOAT)(np.arange(3), 2).dtype \
        == np.float32


def test_check_reference_catches_a_wrong_kernel():
    info = ft.entry_for(fnx.ops.aten.add.Tensor)
    wrong = ft.OpInfo(fnx.ops.aten.sub.Tensor, info.ref, sample_inputs=info.sample_inputs_fn,
                      name="add-as-sub")
    s = info.sample_inputs("cpu", fnx.float32)[0]
    with pytest.raises(AssertionError, match="values differ"):
        ft.check_reference(wrong, s)


def test_check_reference_catches_a_wrong_dtype():
    info = ft.OpInfo(fnx.ops.aten.add.Tensor, lambda a, b: (a + b).astype(np.float64),
                     sample_inputs=lambda i, d, t: iter(()), name="wrong-dtype")
    x = fnx.tensor([1.0, 2.0])
    with pytest.raises(AssertionError, match="dtype: got fnx.float32, expected fnx.float64"):
        ft.check_reference(info, ft.SampleInput(x, x))


def test_nan_positions_must_match():
    with pytest.raises(AssertionError, match="values differ"):
        ft.assert_close(fnx.tensor([1.0, float("nan")]), np.array([1.0, 2.0], np.float32))
    ft.assert_close(fnx.tensor([float("inf"), float("nan")]),
                    np.array([np.inf, np.nan], np.float32))
    with pytest.raises(AssertionError, match="values differ"):
        ft.assert_close(fnx.tensor([float("inf")]), np.array([-np.inf], np.float32))


def test_check_meta_catches_a_wrong_meta():
    op = fnx.ops.aten.mul.Tensor
    info = ft.entry_for(op)
    s = ft.SampleInput(fnx.ones(2, 3), fnx.ones(3))
    saved = op.meta
    op.meta = lambda a, b: saved(a, b)._replace(shape=(3, 2))
    try:
        with pytest.raises(AssertionError, match=r"meta gives float32\[3, 2\]"):
            ft.check_meta(info, s)
    finally:
        op.meta = saved
    ft.check_meta(info, s)


def test_check_decomposition_rejects_ops_outside_the_target():
    # a core op with no decomposition left in a "prims" program is reported by name
    info = ft.OpInfo(fnx.ops.aten.add.Tensor, None, sample_inputs=lambda i, d, t: iter(()),
                     name="add-undecomposed")
    saved = info.op.decomposition
    info.op.decomposition = None
    try:
        with pytest.raises(AssertionError, match="ops outside prims ran: aten::add.Tensor"):
            ft.check_decomposition(info, ft.SampleInput(fnx.ones(2), fnx.ones(2)), "prims")
    finally:
        info.op.decomposition = saved


def test_check_errors():
    info = ft.entry_for(fnx.ops.aten.add.Tensor)
    ok = ft.ErrorInput(ft.SampleInput(fnx.ones(2, 3), fnx.ones(3, 2)), RuntimeError,
                       "must match")
    ft.check_errors(info, ok)
    wrong = ft.ErrorInput(ft.SampleInput(fnx.ones(2), fnx.ones(2)), RuntimeError)
    with pytest.raises(AssertionError, match="did not raise"):
        ft.check_errors(info, wrong)


def test_known_failures_are_data():
    with pytest.raises(ValueError, match="unknown check"):
        ft.Known("nonsense", reason="x")
    with pytest.raises(ValueError, match="reason"):
        ft.Known("reference")
    k = ft.Known("reference", [fnx.float16], "half")
    assert k.matches("reference", fnx.float16) and not k.matches("reference", fnx.float32)
    assert not k.matches("meta", fnx.float16)
    marked = [p for p in ft.params() if p.marks]
    assert marked and all(m.name == "xfail" and m.kwargs["strict"]
                          for p in marked for m in p.marks)


def test_register_rejects_duplicates():
    info = ft.entry_for(fnx.ops.aten.add.Tensor)
    with pytest.raises(ValueError, match="registered twice"):
        ft.register(ft.OpInfo(info.op, info.ref, sample_inputs=info.sample_inputs_fn))


# ----------------------------------------------------------------------- a backend's view

def _example_backend():
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "custom_backend.py"
    spec = importlib.util.spec_from_file_location("fnx_example_custom_backend_opinfo", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def mydev():
    old = _device.privateuse1_name()
    lib = _example_backend().register()
    yield
    lib._destroy()
    fnx.utils.rename_privateuse1_backend(old)


# What a backend author writes: the database's checks, run on their device.
BACKEND = ft.backend_params("mydev", checks=("reference",), ops=["add.Tensor", "mul.Tensor"],
                            dtypes=(fnx.float32, fnx.int64, fnx.bool))


@pytest.mark.parametrize("case", BACKEND)
def test_backend_author_checks(mydev, case):
    assert case.id.endswith("-mydev")
    case.run()


def test_backend_checks_skip_ops_the_backend_lacks(mydev):
    (case,) = ft.cases(["reference"], device="mydev", ops=["exp.default"],
                       dtypes=(fnx.float32,))
    with pytest.raises(pytest.skip.Exception, match="unsupported on mydev.*aten::exp"):
        case.run()
    strict = ft.cases(["reference"], device="mydev", ops=["exp.default"],
                      dtypes=(fnx.float32,), skip_unsupported=False)[0]
    with pytest.raises(NotImplementedError, match="PrivateUse1"):
        strict.run()


def test_backend_checks_catch_a_wrong_kernel(mydev):
    lib = Library("aten", "IMPL")
    # a sub kernel that forgets to subtract (mydev has no sub of its own)
    lib.impl("sub.Tensor", lambda self, other, *, alpha=1: self, "PrivateUse1")
    try:
        (case,) = ft.cases(["reference"], device="mydev", ops=["sub.Tensor"],
                           dtypes=(fnx.float32,))
        with pytest.raises(AssertionError, match="values differ"):
            case.run()
    finally:
        lib._destroy()
