"""``fnx.library.opcheck``: the checks an operator author needs, each reported by name.

- ``test_schema``: the kernel writes exactly the arguments its schema declares written
  (``Tensor(a!)``; the bytes of every tensor argument are compared before and after), and
  an output shares memory with an input only where the schema declares it (``-> Tensor(a)``).
  The exceptions are PyTorch's own (its ``SchemaCheckMode``/``SchemaInfo``): the batch
  norm family writes its running stats in training mode without declaring them
  (``_TRAINING_WRITES``), ``_unsafe_view``/``unsafe_split`` alias by design, and a
  ``CompositeImplicitAutograd`` op (``atleast_1d``, ``dropout(train=False)``) may return
  its input, since only the ops it calls reach a kernel (their schemas are checked);
- ``test_faketensor``: the trace (the fake / meta function) gives every output the shape,
  dtype and device the real kernel gives it;
- ``test_autograd``: the gradients (``register_autograd``, a derivative formula, or a
  decomposition) agree with finite differences (``fnx.autograd.gradcheck``, in float64),
  and an op with differentiable inputs has gradients at all;
- ``test_compiled``: ``fnx.compile`` of the call gives the eager outputs (and writes);
- ``test_lowering``: the call traced to prims and lowered to one JAX program gives the
  eager kernel's outputs.

A check that does not apply to the call is reported ``"SKIP: <why>"`` (PyTorch has no such
value; fnx says why rather than claiming success): an op that draws random numbers is not
compared between eager and compiled runs (their streams differ) nor differentiated
numerically; the values of ``empty``-like factories (uninitialized memory) are not
compared, only their shapes and dtypes; an op whose output shape depends on the data
(``nonzero``, ``unique``) has no fake (a trace cannot know it; ``fnx.compile`` runs it
eagerly).

>>> import fnx
>>> r = fnx.library.opcheck(fnx.ops.aten.mul.Tensor, (fnx.randn(3), fnx.randn(3)))
>>> sorted(r.items())[:2]
[('test_autograd', 'SUCCESS'), ('test_compiled', 'SUCCESS')]
"""
from __future__ import annotations

import jax
import numpy as np

from ..autograd.gradcheck import GradcheckError, gradcheck
from ..core import dtype as D
from ..core.device import canonical
from ..core.dispatch_key import AliasKey, DispatchKey
from ..core.meta_array import MetaArray
from ..core.tensor import Tensor
from ..dispatch.dispatcher import OpOverload, OpOverloadPacket
from ..graph.tracer import DataDependentError, trace
from ..ir.registry import NONDIFFERENTIABLE
from ..lower.frontend import compile as _compile
from ..lower.jax import JAX_TARGET
from ..ops import aten
from .custom_ops import CustomOpDef

__all__ = ["opcheck", "OpCheckError", "DEFAULT_TESTS"]

DEFAULT_TESTS = ("test_schema", "test_faketensor", "test_autograd", "test_compiled",
                 "test_lowering")

# (rtol, atol) by dtype name, as PyTorch's assert_close
_TOLS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
         "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


class OpCheckError(Exception):
    """An ``opcheck`` test failed; the message names the test and the op."""


class _Skip(Exception):
    pass


def _overload(op) -> OpOverload:
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, OpOverloadPacket):
        return op.default if "default" in op.overloads() else \
            getattr(op, op.overloads()[0])
    if isinstance(op, OpOverload):
        return op
    raise TypeError(f"opcheck: expected a custom op or an OpOverload, got {op!r}")


def _map(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _tensors(value, out=None):
    out = [] if out is None else out
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, out)
    return out


def _clone(args, kwargs):
    def c(t):
        return t.detach().clone().requires_grad_(t.requires_grad)
    return _map(args, c), _map(kwargs, c)


def _host(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(force=True), copy=True)


def _assert_close(what, actual, expected, opname, test, values=True):
    a_list, e_list = _tensors(actual), _tensors(expected)
    if len(a_list) != len(e_list):
        raise OpCheckError(f"opcheck {test} failed for {opname}: {what} gave "
                           f"{len(a_list)} tensor output(s), eager {len(e_list)}")
    for i, (a, e) in enumerate(zip(a_list, e_list)):
        if tuple(a.shape) != tuple(e.shape) or a.dtype != e.dtype:
            raise OpCheckError(f"opcheck {test} failed for {opname}: output {i} of {what} is "
                               f"{a.dtype}{list(a.shape)}, eager gives "
                               f"{e.dtype}{list(e.shape)}")
        if not values:
            continue
        an, en = _host(a), _host(e)
        rtol, atol = _TOLS.get(e.dtype.name, (0, 0))
        try:
            if rtol:
                np.testing.assert_allclose(an, en, rtol=rtol, atol=atol, equal_nan=True)
            else:
                np.testing.assert_array_equal(an, en)
        except AssertionError as err:
            raise OpCheckError(f"opcheck {test} failed for {opname}: output {i} of {what} "
                               f"differs from eager:{err}") from None


def _arg_values(op, args, kwargs):
    """(schema argument, value) for every argument the call passed."""
    pos, kw = op.schema.bind(args, kwargs)
    positional = [a for a in op.schema.arguments if not a.kwarg_only]
    return list(zip(positional, pos)) + [(a, kw[a.name]) for a in op.schema.arguments
                                         if a.kwarg_only and a.name in kw]


# ----------------------------------------------------------------------------- the tests

# Ops whose schemas (PyTorch's too) do not declare the running stats they write when the
# flag argument is true: op name -> (flag, written arguments), as PyTorch's SchemaInfo.
_TRAINING_WRITES = {
    name: (flag, ("running_mean", "running_var"))
    for name, flag in (("batch_norm", "training"), ("native_batch_norm", "training"),
                       ("_batch_norm_impl_index", "training"),
                       ("cudnn_batch_norm", "training"), ("miopen_batch_norm", "training"),
                       ("instance_norm", "use_input_stats"))}
_TRAINING_WRITES["rrelu_with_noise"] = ("training", ("noise",))
# Ops that alias an input without declaring it, by design ("unsafe").
_UNSAFE_ALIAS = ("_unsafe_view", "unsafe_split")
# Ops that declare ``self`` written but change only its autograd metadata.
_METADATA_WRITES = ("detach_",)
# Factories whose values are uninitialized memory: only shapes and dtypes are compared.
_UNINITIALIZED = ("empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided",
                  "empty_permuted")
_DATA_DEPENDENT = ("the output shape depends on the data: a trace cannot know it (fnx.compile "
                   "runs the op eagerly)")


def _random(op) -> bool:
    return "nondeterministic" in op.tags


def _undeclared_writes(op, args, kwargs) -> set:
    """Arguments ``op`` writes without declaring them, on this call (``_TRAINING_WRITES``)."""
    if op.namespace != "aten" or op.name not in _TRAINING_WRITES:
        return set()
    flag, names = _TRAINING_WRITES[op.name]
    values = {a.name: v for a, v in _arg_values(op, args, kwargs)}
    return set(names) if values.get(flag) else set()


def _composite_implicit(op) -> bool:
    """The op has no kernel of its own: every backend runs its decomposition."""
    keys = op.kernels
    return AliasKey.CompositeImplicitAutograd in keys and DispatchKey.CPU not in keys


def _test_schema(op, args, kwargs):
    args, kwargs = _clone(args, kwargs)
    before = [(a, [_host(t) for t in _tensors(v)], _tensors(v))
              for a, v in _arg_values(op, args, kwargs)]
    undeclared = _undeclared_writes(op, args, kwargs)
    out = op(*args, **kwargs)
    declared_unchanged = []
    for a, old, ts in before:
        changed = any(not np.array_equal(o, _host(t), equal_nan=True) for o, t in zip(old, ts))
        if changed and not a.is_write and a.name not in undeclared:
            raise OpCheckError(
                f"opcheck test_schema failed for {op.qualname}: argument '{a.name}' was "
                f"mutated, but the schema does not declare it written ({op.schema}); declare "
                f"it in mutates_args (Tensor(a!)) or do not write it")
        if a.is_write and not changed:
            declared_unchanged.append(a.name)
    written = [a for a, _, _ in before if a.is_write]
    if written and len(declared_unchanged) == len(written) and op.name not in _METADATA_WRITES:
        raise OpCheckError(
            f"opcheck test_schema failed for {op.qualname}: the schema declares "
            f"{declared_unchanged} written, but the call changed none of them (if the op "
            f"leaves them as they are for this input, check it on an input it changes)")
    # aliasing: only where the schema says an output is a view of an input
    if op.name in _UNSAFE_ALIAS or _composite_implicit(op):
        return "SUCCESS"
    alias_of = {}
    for a, _, ts in before:
        if a.type.alias is not None:
            alias_of[a.type.alias.name if hasattr(a.type.alias, "name") else
                     str(a.type.alias)] = (a.name, ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rets = op.schema.returns
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor) or not isinstance(o._data, np.ndarray):
            continue
        ret = rets[0] if len(rets) == 1 and rets[0].type.is_list else \
            rets[i] if i < len(rets) else None
        ret_alias = ret.type.alias if ret is not None else None
        for a, _, ts in before:
            for t in ts:
                if not isinstance(t._data, np.ndarray):
                    continue
                shares = np.shares_memory(o._data, t._data)
                declared = ret_alias is not None and a.type.alias is not None and (
                    "*" in str(a.type.alias) or
                    str(ret_alias).strip("!") == str(a.type.alias).strip("!"))
                if shares and not declared:
                    raise OpCheckError(
                        f"opcheck test_schema failed for {op.qualname}: output {i} shares "
                        f"memory with argument '{a.name}', but the schema does not declare "
                        f"that alias ({op.schema}); return a copy (x.clone())")
    return "SUCCESS"


def _test_faketensor(op, args, kwargs):
    if not op.schema.returns:
        raise _Skip("the op returns nothing")
    real = op(*_clone(args, kwargs)[0], **_clone(args, kwargs)[1])
    try:
        g = trace(lambda *a, **k: op(*a, **k), *args, **kwargs)
    except DataDependentError:
        raise _Skip(_DATA_DEPENDENT) from None
    except Exception as e:
        raise OpCheckError(f"opcheck test_faketensor failed for {op.qualname}: tracing with "
                           f"its fake/meta function raised {type(e).__name__}: {e}") from None
    metas = []
    _out_metas(g.output_node.args[0], metas)
    reals = _tensors(real)
    if len(metas) != len(reals):
        raise OpCheckError(f"opcheck test_faketensor failed for {op.qualname}: the fake gives "
                           f"{len(metas)} output(s), the kernel {len(reals)}")
    for i, (m, r) in enumerate(zip(metas, reals)):
        got = (tuple(m.shape), m.dtype, canonical(m.device).type)
        want = (tuple(r.shape), r.dtype, r.device.type)
        if got != want:
            raise OpCheckError(
                f"opcheck test_faketensor failed for {op.qualname}: output {i}: the fake gives "
                f"shape {list(got[0])}, {got[1]}, {got[2]}; the kernel gives "
                f"shape {list(want[0])}, {want[1]}, {want[2]}")
    return "SUCCESS"


def _out_metas(value, out):
    if isinstance(value, (list, tuple)):
        for v in value:
            _out_metas(v, out)
    elif hasattr(value, "meta") and value.meta is not None:
        m = value.meta
        if isinstance(m, tuple) and m and not hasattr(m, "shape"):
            out.extend(m)
        else:
            out.append(m)


def _float(t) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _test_autograd(op, args, kwargs):
    if op.schema.is_mutable:
        raise _Skip("the op writes its arguments")
    if op.derivative is NONDIFFERENTIABLE:
        raise _Skip("the op is declared non-differentiable")
    if _random(op):
        raise _Skip("the op draws new random numbers on every call (finite differences "
                    "compare different draws)")
    # each tensor occurrence is its own float64 input (a list may hold one tensor twice)
    diff = [aten._to_copy.default(t.detach(), dtype=D.complex128 if t.dtype.is_complex
                                  else D.float64).requires_grad_()
            if _float(t) and t.numel() > 0 else t.detach() for t in _tensors((args, kwargs))]
    wrt = [t for t in diff if t.requires_grad]
    if not wrt:
        raise _Skip("no floating-point tensor input")
    if not all(np.isfinite(_host(t)).all() for t in wrt):
        raise _Skip("a non-finite input (finite differences are undefined)")

    def call(ts):
        it = iter(ts)
        a, k = _map((args, kwargs), lambda t: next(it))
        return op(*a, **k)

    def fn(*w):
        it = iter(w)
        return call([next(it) if t.requires_grad else t for t in diff])
    with np.errstate(all="ignore"):
        outs = [o for o in _tensors(fn(*wrt)) if _float(o)]
    if not outs:
        raise _Skip("no floating-point output")
    if any(o.dtype.itemsize < 8 for o in outs):
        raise _Skip("a low-precision output (finite differences need float64)")
    if not all(np.isfinite(_host(o)).all() for o in outs):
        raise _Skip("a non-finite output (outside the op's domain)")
    try:
        with np.errstate(all="ignore"):
            gradcheck(fn, tuple(wrt), eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=True)
    except (GradcheckError, RuntimeError) as e:
        raise OpCheckError(f"opcheck test_autograd failed for {op.qualname}: gradients vs "
                           f"finite differences: {e}") from None
    return "SUCCESS"


def _test_compiled(op, args, kwargs):
    if _random(op):
        raise _Skip("the op draws random numbers: compiled programs draw from another "
                    "stream than eager kernels")
    ea, ek = _clone(args, kwargs)
    expected = op(*ea, **ek)
    ca, ck = _clone(args, kwargs)
    try:
        got = _compile(lambda *a, **k: op(*a, **k))(*ca, **ck)
    except OpCheckError:
        raise
    except Exception as e:
        raise OpCheckError(f"opcheck test_compiled failed for {op.qualname}: fnx.compile "
                           f"raised {type(e).__name__}: {e}") from None
    _assert_close("the compiled call", got, expected, op.qualname, "test_compiled",
                  values=op.name not in _UNINITIALIZED)
    _assert_close("the compiled call's writes", _tensors((ca, ck)), _tensors((ea, ek)),
                  op.qualname, "test_compiled")
    return "SUCCESS"


def _test_lowering(op, args, kwargs):
    if op.schema.is_mutable or _undeclared_writes(op, args, kwargs):
        raise _Skip("the op writes its arguments (test_compiled checks its lowering)")
    if _random(op):
        raise _Skip("the op draws random numbers: the lowering draws from another stream "
                    "than the eager kernel")
    expected = op(*_clone(args, kwargs)[0], **_clone(args, kwargs)[1])
    flat = _tensors((args, kwargs))
    if any(not isinstance(t._data, (np.ndarray, MetaArray, jax.Array)) for t in flat):
        raise _Skip("inputs are not host or JAX arrays")
    try:
        g = trace(lambda *a, **k: op(*a, **k), *args, decompose_to="prims", **kwargs)
        got = JAX_TARGET.compile(g)(*[t.detach() for t in flat])
    except DataDependentError:
        raise _Skip(_DATA_DEPENDENT) from None
    except Exception as e:
        raise OpCheckError(f"opcheck test_lowering failed for {op.qualname}: lowering to "
                           f"JAX raised {type(e).__name__}: {e}") from None
    _assert_close("the JAX lowering", got, expected, op.qualname, "test_lowering",
                  values=op.name not in _UNINITIALIZED)
    return "SUCCESS"


_TESTS = {"test_schema": _test_schema, "test_faketensor": _test_faketensor,
          "test_autograd": _test_autograd, "test_compiled": _test_compiled,
          "test_lowering": _test_lowering}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TESTS, raise_exception: bool = True):
    """Run ``test_utils`` (by name, see the module doc) on ``op(*args, **kwargs)``.

    Returns ``{test name: "SUCCESS" | "SKIP: <why>"}``; a failed test raises
    ``OpCheckError`` naming it, or with ``raise_exception=False`` is reported as the
    exception. The caller's tensors are never modified (each test runs on copies).

    >>> import fnx
    >>> fnx.library.opcheck(fnx.ops.aten.exp.default, (fnx.randn(4),),
    ...                     test_utils=("test_faketensor",))
    {'test_faketensor': 'SUCCESS'}
    """
    o = _overload(op)
    kwargs = dict(kwargs or {})
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    unknown = [t for t in test_utils if t not in _TESTS]
    if unknown:
        raise ValueError(f"opcheck: unknown test(s) {unknown}; known: {list(_TESTS)}")
    results = {}
    for name in test_utils:
        try:
            results[name] = _TESTS[name](o, tuple(args), kwargs)
        except _Skip as s:
            results[name] = f"SKIP: {s}"
        except OpCheckError as e:
            if raise_exception:
                raise
            results[name] = e
        except Exception as e:
            err = OpCheckError(f"opcheck {name} failed for {o.qualname}: "
                               f"{type(e).__name__}: {e}")
            if raise_exception:
                raise err from e
            results[name] = err
    return results
