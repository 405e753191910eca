"""``fnx.library.opcheck``: each named check passes on a correct op and fails, naming
itself, on a deliberately wrong one; and it passes on a representative subset of fnx's own
OpInfo database (one float64 sample per entry, to keep CI fast). References are NumPy."""
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special as scipy_special

import fnx
from fnx.library import OpCheckError, opcheck
from fnx.testing.opinfo import entries

ALL = ("test_schema", "test_faketensor", "test_autograd", "test_compiled", "test_lowering")


@pytest.fixture
def made():
    ops = []
    yield ops
    for op in ops:
        op._destroy()


def cube_op(made, *, fake=None, backward=None, lowering=None, mutate=False, alias=False):
    """``x ** 3`` as a NumPy kernel; each keyword replaces one piece by a wrong one."""
    @fnx.library.custom_op("oc::cube", mutates_args=(), device_types="cpu")
    def cube(x: fnx.Tensor) -> fnx.Tensor:
        a = x.numpy(force=True)
        if alias:
            return x.detach()       # shares x's memory: an alias the schema does not declare
        out = fnx.from_numpy(a ** 3)
        if mutate:
            a[...] = 0
        return out
    made.append(cube)
    cube.register_fake(fake or (lambda x: fnx.empty_like(x)))
    cube.register_autograd(backward or (lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2),
                           setup_context=lambda ctx, inputs, out: ctx.save_for_backward(
                               inputs[0]))
    cube.register_lowering(lowering or (lambda x: x ** 3))
    return cube


def sample():
    return fnx.tensor(np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.3]]), dtype=fnx.float64)


def test_a_correct_custom_op_passes_every_check(made):
    op = cube_op(made)
    x = sample()
    assert opcheck(op, (x,)) == {t: "SUCCESS" for t in ALL}
    np.testing.assert_allclose(op(x).numpy(), x.numpy() ** 3)    # and is what it claims


@pytest.mark.parametrize("wrong, check", [
    ({"fake": lambda x: fnx.empty(x.shape[0])}, "test_faketensor"),
    ({"fake": lambda x: fnx.empty_like(x, dtype=fnx.float32)}, "test_faketensor"),
    ({"backward": lambda ctx, g: g * 2 * ctx.saved_tensors[0]}, "test_autograd"),
    ({"lowering": lambda x: x ** 2}, "test_lowering"),
    ({"mutate": True}, "test_schema"),
    ({"alias": True}, "test_schema"),       # (the message: "shares memory")
])
def test_a_wrong_piece_fails_the_check_that_names_it(made, wrong, check):
    op = cube_op(made, **wrong)
    x = sample()
    before = x.numpy().copy()
    with pytest.raises(OpCheckError, match=f"opcheck {check} failed for oc::cube"):
        opcheck(op, (x,), test_utils=(check,))
    np.testing.assert_array_equal(x.numpy(), before)     # the caller's tensor is untouched
    results = opcheck(op, (x,), raise_exception=False)
    assert isinstance(results[check], OpCheckError)


def test_wrong_lowering_also_fails_the_compiled_check(made):
    op = cube_op(made, lowering=lambda x: x * 3)
    with pytest.raises(OpCheckError, match="test_compiled failed for oc::cube"):
        opcheck(op, (sample(),), test_utils="test_compiled")


def test_missing_gradient_fails_autograd(made):
    @fnx.library.custom_op("oc::nograd", mutates_args=(), device_types="cpu")
    def nograd(x: fnx.Tensor) -> fnx.Tensor:
        return fnx.from_numpy(np.sin(x.numpy(force=True)))
    made.append(nograd)
    nograd.register_fake(lambda x: fnx.empty_like(x))
    with pytest.raises(OpCheckError, match="test_autograd failed for oc::nograd.*not "
                                           "implemented"):
        opcheck(nograd, (sample(),), test_utils="test_autograd")


def test_declared_mutation(made):
    @fnx.library.custom_op("oc::fill_sq", mutates_args=("out",), device_types="cpu")
    def fill_sq(x: fnx.Tensor, out: fnx.Tensor) -> None:
        out.numpy()[...] = x.numpy() ** 2
    made.append(fill_sq)
    x, out = sample(), fnx.zeros(2, 3, dtype=fnx.float64)
    results = opcheck(fill_sq, (x, out))
    assert results["test_schema"] == results["test_compiled"] == "SUCCESS"
    assert not out.numpy().any()                # opcheck ran on copies
    # declared written but never written
    made.append(fnx.library.custom_op("oc::lazy", lambda x, out: None, mutates_args=("out",),
                                      schema="(Tensor x, Tensor(a!) out) -> ()"))
    with pytest.raises(OpCheckError, match=r"test_schema.*declares \['out'\] written"):
        opcheck(fnx.ops.oc.lazy, (x, out), test_utils="test_schema")


def test_unknown_test_name():
    with pytest.raises(ValueError, match="unknown test"):
        opcheck(fnx.ops.aten.exp.default, (sample(),), test_utils=("test_everything",))


def test_skips_say_why():
    r = opcheck(fnx.ops.aten.eq.Tensor, (sample(), sample()))
    assert r["test_autograd"].startswith("SKIP: ") and r["test_compiled"] == "SUCCESS"


# ----------------------------------------------------------------------------- the built-ins

# one entry per family; a float64 sample each (finite differences need float64)
SUBSET = ("add.Tensor", "mul.Tensor", "div.Tensor", "exp.default", "tanh.default",
          "sum.dim_IntList", "mean.dim", "amax.default", "mm.default", "matmul.default",
          "transpose.int", "permute.default", "view.default", "cat.default", "stack.default",
          "where.self", "index_select.default", "gather.default", "_softmax.default",
          "gelu.default", "native_layer_norm.default", "conv2d.default", "clamp.default",
          "cumsum.default", "sort.default", "add_.Tensor", "split.Tensor",
          "max_pool2d.default", "linear.default", "prims.broadcast_in_dim.default")
_BY_NAME = {info.name: info for info in entries()}


@pytest.mark.parametrize("name", SUBSET)
def test_opcheck_on_opinfo_entries(name):
    info = _BY_NAME[name]
    s = info.sample_inputs("cpu", fnx.float64)[0]
    results = opcheck(info.op, s.all_args(), s.kwargs)
    for check in ("test_schema", "test_faketensor", "test_compiled"):
        assert results[check] == "SUCCESS", (check, results[check])
    for check, value in results.items():
        assert value == "SUCCESS" or value.startswith("SKIP: "), (check, value)
    if not info.op.schema.is_mutable:
        assert results["test_lowering"] == "SUCCESS"


def test_lowering_rule_is_a_jax_function(made):
    # the rule gets JAX arrays (so jnp works in it) and the op's non-tensor arguments
    op = cube_op(made, lowering=lambda x: jnp.power(x, 3))
    assert opcheck(op, (sample(),), test_utils="test_lowering") == {"test_lowering": "SUCCESS"}


# ----------------------------------------------------------------------------- PyTorch's exceptions

def _bn_args(training):
    rng = np.random.default_rng(0)
    x = fnx.tensor(rng.standard_normal((4, 3, 2)))
    return (x, None, None, fnx.zeros(3, dtype=fnx.float64), fnx.ones(3, dtype=fnx.float64),
            training)


@pytest.mark.parametrize("name, extra", [("native_batch_norm", (0.1, 1e-5)),
                                         ("batch_norm", (0.1, 1e-5, False)),
                                         ("instance_norm", (0.1, 1e-5, False))])
def test_training_norms_write_running_stats_as_pytorch_schemas_allow(name, extra):
    # PyTorch's schemas say `Tensor? running_mean` (no `!`), and its SchemaInfo treats the
    # running stats as written when `training` / `use_input_stats` is true: so does opcheck
    op = getattr(fnx.ops.aten, name).default
    assert "Tensor? running_mean, Tensor? running_var" in str(op.schema)
    args = _bn_args(True) + extra
    results = opcheck(op, args)
    assert results["test_schema"] == results["test_compiled"] == "SUCCESS"
    assert results["test_lowering"].startswith("SKIP: the op writes")
    assert not args[3].numpy().any()          # opcheck ran on copies
    # the compiled call wrote the running stats as eager does: mean = 0.1 * batch mean
    x = args[0].numpy()
    rm, rv = fnx.zeros(3, dtype=fnx.float64), fnx.ones(3, dtype=fnx.float64)
    fnx.compile(lambda *a: op(*a))(args[0], None, None, rm, rv, True, *extra)
    axes = (0, 2) if name != "instance_norm" else (2,)
    mean = x.mean(axes) if name != "instance_norm" else x.mean(2).mean(0)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean, rtol=1e-12)


def test_undeclared_writes_outside_training_still_fail(made):
    @fnx.library.custom_op("oc::sneaky_bn", mutates_args=(), device_types="cpu")
    def sneaky_bn(x: fnx.Tensor, running_mean: fnx.Tensor, training: bool) -> fnx.Tensor:
        running_mean.numpy(force=True)[...] += 1     # the name alone does not excuse it
        return fnx.from_numpy(x.numpy(force=True) * 2)
    made.append(sneaky_bn)
    with pytest.raises(OpCheckError, match="'running_mean' was mutated"):
        opcheck(sneaky_bn, (sample(), fnx.zeros(3, dtype=fnx.float64), True),
                test_utils="test_schema")


@pytest.mark.parametrize("op, args", [
    (fnx.ops.aten.atleast_1d.default, (sample(),)),          # returns its input
    (fnx.ops.aten.atleast_2d.default, (sample(),)),
    (fnx.ops.aten.dropout.default, (sample(), 0.5, False)),  # train=False: its input
    (fnx.ops.aten._unsafe_view.default, (sample(), [3, 2])),  # aliases by design
])
def test_composite_and_unsafe_aliases_pass_as_in_pytorch(op, args):
    out = op(*args)
    assert np.shares_memory(out.numpy(), args[0].numpy())     # as torch's (checked in 2.13)
    assert opcheck(op, args, test_utils="test_schema") == {"test_schema": "SUCCESS"}


def test_random_and_uninitialized_ops_say_why_they_skip():
    r = opcheck(fnx.ops.aten.bernoulli.p, (sample(), 0.5))
    assert r["test_compiled"].startswith("SKIP: the op draws random numbers")
    assert r["test_autograd"].startswith("SKIP: ")
    r = opcheck(fnx.ops.aten.empty_like.default, (sample(),))
    assert r["test_compiled"] == r["test_lowering"] == "SUCCESS"     # shapes and dtypes
    r = opcheck(fnx.ops.aten.nonzero.default, (sample(),))
    assert r["test_faketensor"].startswith("SKIP: the output shape depends on the data")


@pytest.mark.parametrize("name", ["exp", "add", "special_i1"])
def test_out_of_size_zero_is_resized_under_compile(name):
    op = getattr(fnx.ops.aten, name).out
    x = sample()
    args = (x, x) if name == "add" else (x,)
    assert opcheck(op, args, {"out": fnx.empty(0, dtype=fnx.float64)},
                   test_utils="test_compiled") == {"test_compiled": "SUCCESS"}
    out = fnx.empty(0, dtype=fnx.float64)
    got = fnx.compile(lambda *a, out: op(*a, out=out))(*args, out=out)
    assert out.shape == got.shape == (2, 3)
    np.testing.assert_array_equal(got.numpy(), out.numpy())
    want = {"exp": np.exp(x.numpy()), "add": 2 * x.numpy(),
            "special_i1": scipy_special.i1(x.numpy())}[name]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
