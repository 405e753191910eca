"""The checks an OpInfo entry drives, one sample at a time.

- ``check_reference(info, sample)``: eager result vs the NumPy reference (exact dtype and
  shape, values within the entry's tolerance for the dtype, NaN in the same places); for
  ``op_`` the result is ``self``, written, its version bumped; for ``op.out`` it is ``out``.
- ``check_meta(info, sample)``: the op on meta copies gives the eager shapes and dtypes.
- ``check_decomposition(info, sample, to="core"|"prims")``: the op run with everything
  outside the target level decomposed (``fnx.graph.decompose.run_decomposed``) matches eager,
  and only ops of that level ran.
- ``check_errors(info, error_input)``: the op (and its meta function) raise PyTorch's error.
- ``check_lowering(info, sample, backend)``: ``fnx.compile(op, backend=...)`` matches eager.
- ``check_gradient(info, sample)``: autograd's gradient w.r.t. every floating or complex
  input matches central finite differences in float64 / complex128 (``fnx.autograd.
  gradcheck``, PyTorch's conjugate Wirtinger convention, one random projection ``v^T J u``
  per sample); in-place entries are checked on a clone of ``self``.  The cases run it for
  one real and one complex dtype of the entry.

Each raises ``AssertionError`` naming the op, the sample and what differs.  The samples
may live on any device: the same functions check a backend (see ``fnx.testing.cases``).
"""
from __future__ import annotations

import re

import numpy as np

import fnx

from .. import complex128, float64
from ..autograd import GradcheckError, gradcheck
from ..graph.decompose import in_target, run_decomposed
from ..graph.tracer import DataDependentError, trace
from ..ir.registry import NONDIFFERENTIABLE
from ..lower import get_target
from ..lower.target import targets
from .compare import assert_close, to_numpy
from .database import _is_tensor
from .variant_entries import expected_meta

__all__ = ["NotApplicable", "check_reference", "check_meta", "check_decomposition",
           "check_errors", "check_lowering", "check_gradient", "to_device", "clone_sample",
           "tolerance", "lowering_targets"]


class NotApplicable(Exception):
    """The check cannot apply to this sample (e.g. lowering an op whose output shape
    depends on data: it cannot be traced, compiled code falls back to eager for it)."""


def _sample_dtype(sample):
    for x in sample.all_args():
        if _is_tensor(x):
            return x.dtype
        if isinstance(x, (list, tuple)):
            for y in x:
                if _is_tensor(y):
                    return y.dtype
    return None


def tolerance(info, sample, result_dtype=None):
    """(rtol, atol): the larger of the entry's tolerances for the sample's dtype and for
    the result's dtype (an int16 input with a float32 result compares as float32)."""
    cands = [info.tols.get(d) for d in (_sample_dtype(sample), result_dtype) if d is not None]
    cands = [c for c in cands if c is not None]
    if not cands:
        return 0.0, 0.0
    return max(c[0] for c in cands), max(c[1] for c in cands)


def _result_dtype(r):
    if isinstance(r, (tuple, list)):
        r = r[0] if r else None
    return r.dtype if _is_tensor(r) else None


def _compute_dtype(info, sample, result):
    """The dtype the op computed in: for ``out=`` the functional result's, not ``out``'s."""
    if info.variant == "out" and info.base is not None:
        kw = {k: v for k, v in sample.kwargs.items() if k != "out"}
        r = expected_meta(info.base, type(sample)(sample.input, *sample.args, **kw))
        if r is not None:
            return r[1]
    return _result_dtype(result)


def _call(info, sample):
    return info.op(*sample.all_args(), **sample.kwargs)


def _where(info, sample):
    return f"{info.op.qualname} on {sample!r}"


def _check_written(info, sample, result, version=None):
    """In-place ops return ``self`` (and bump its version); ``out=`` ops return ``out``."""
    if info.variant == "inplace":
        if result is not sample.input:
            raise AssertionError(f"{_where(info, sample)}: an in-place op must return self")
        if version is not None and sample.input._version != version + 1:
            raise AssertionError(f"{_where(info, sample)}: the version counter went from "
                                 f"{version} to {sample.input._version}, expected "
                                 f"{version + 1}")
    elif info.variant == "out":
        if result is not sample.kwargs["out"]:
            raise AssertionError(f"{_where(info, sample)}: an out= op must return out")


def check_reference(info, sample):
    """Eager result vs ``info.ref`` (the sample may be on any device with data)."""
    if info.ref is None:
        raise AssertionError(f"{info.name}: the entry has no reference")
    np_args, np_kwargs = sample.numpy()        # before the call: in-place ops write inputs
    with np.errstate(all="ignore"):
        expected = info.ref(*np_args, **np_kwargs)
    version = sample.input._version if info.variant == "inplace" else None
    result = _call(info, sample)
    _check_written(info, sample, result, version)
    rtol, atol = tolerance(info, sample, _compute_dtype(info, sample, result))
    try:
        assert_close(result, expected, rtol, atol, check_values=not info.nondeterministic)
    except AssertionError as e:
        raise AssertionError(f"{_where(info, sample)} vs the reference: {e}") from None


def _meta_kwarg(name, value):
    return "meta" if name == "device" and value is not None else value


def to_device(sample, device):
    """The sample with its tensors moved to ``device`` (``device=`` arguments too)."""
    dev = fnx.device(device) if not hasattr(device, "type") else device

    def move(t):
        return t.to(dev) if t.device != dev else t
    return sample.map_tensors(move, lambda k, v: dev if k == "device" and v is not None
                              else v)


def clone_sample(sample):
    """An independent copy of the sample (tensors cloned), for ops that write inputs."""
    return sample.map_tensors(lambda t: t.clone())


def _compare_meta(info, sample, meta_result, eager):
    if isinstance(eager, (tuple, list)):
        if not isinstance(meta_result, (tuple, list)) or len(meta_result) != len(eager):
            raise AssertionError(f"{_where(info, sample)}: meta returned {meta_result!r}, "
                                 f"eager returned {len(eager)} results")
        for m, e in zip(meta_result, eager):
            _compare_meta(info, sample, m, e)
        return
    if not _is_tensor(eager):
        return          # a Python scalar (``item``): nothing to compare on meta
    if not _is_tensor(meta_result):
        raise AssertionError(f"{_where(info, sample)}: meta returned {meta_result!r}")
    if meta_result.device.type != "meta":
        raise AssertionError(f"{_where(info, sample)}: the result is on "
                             f"{meta_result.device}, not meta")
    if tuple(meta_result.shape) != tuple(eager.shape) or meta_result.dtype is not eager.dtype:
        raise AssertionError(f"{_where(info, sample)}: meta gives {meta_result.dtype.name}"
                             f"{list(meta_result.shape)}, eager gives {eager.dtype.name}"
                             f"{list(eager.shape)}")


def check_meta(info, sample):
    """The op on meta copies of the sample gives eager's shapes and dtypes."""
    meta_sample = sample.map_tensors(lambda t: t.to("meta"), _meta_kwarg)
    eager = _call(info, sample)
    meta_result = _call(info, meta_sample)
    _compare_meta(info, sample, meta_result, eager)
    if info.variant == "inplace" and meta_result is not meta_sample.input:
        raise AssertionError(f"{_where(info, sample)}: in-place on meta must return self")
    if info.variant == "out" and meta_result is not meta_sample.kwargs["out"]:
        raise AssertionError(f"{_where(info, sample)}: out= on meta must return out")


def check_decomposition(info, sample, to="prims"):
    """Run the op decomposed to ``to`` ("core" or "prims"): only ops of that level may
    run, and the result must match eager (on a clone of the sample)."""
    if info.op.schema.is_mutable:
        return _check_functional_decomposition(info, sample, to)
    eager_sample = clone_sample(sample)
    expected = _call(info, eager_sample)
    result, ran = run_decomposed(info.op, *sample.all_args(), to=to, **sample.kwargs)
    # Reading a value (Tensor.item()) for an eager-only check of the data (a target index
    # out of range) is not part of the computation; a trace of that path skips the check.
    outside = [op for op in ran if not in_target(op, to) and op.name != "_local_scalar_dense"]
    if outside and all(op.schema.is_mutable for op in outside):
        # the decomposition writes an input (batch norm's running stats): check it the way
        # the compiler runs it, functionalized
        return _check_functional_decomposition(info, sample, to)
    bad = sorted((str(op), ran[op]) for op in outside)
    if bad:
        listed = ", ".join(f"{op} (x{n})" for op, n in bad)
        raise AssertionError(f"{_where(info, sample)} decomposed to {to}: ops outside "
                             f"{to} ran: {listed}")
    if info.variant == "inplace" and result is not sample.input:
        raise AssertionError(f"{_where(info, sample)} decomposed to {to}: an in-place op "
                             f"must return self")
    if info.variant == "out" and result is not sample.kwargs["out"]:
        raise AssertionError(f"{_where(info, sample)} decomposed to {to}: must return out")
    rtol, atol = tolerance(info, sample, _result_dtype(expected))
    try:
        assert_close(result, _expected_of(expected), rtol, atol,
                     check_values=not info.nondeterministic)
    except AssertionError as e:
        raise AssertionError(f"{_where(info, sample)} decomposed to {to} vs eager: {e}") \
            from None


def _check_functional_decomposition(info, sample, to):
    """A writing op (in-place, out=) reaches ``to`` through functionalization: trace it
    functionally and decomposed, check that only ops of that level remain, and run the
    graph: its result and the final values of the written inputs must match eager."""
    eager_sample = clone_sample(sample)
    expected = _call(info, eager_sample)
    op = info.op
    try:
        graph = trace(lambda *a, **k: op(*a, **k), *sample.all_args(), functional=True,
                      decompose_to=to, **sample.kwargs)
    except DataDependentError as e:
        raise NotApplicable(str(e)) from None
    bad = sorted({str(n.target) for n in graph.calls() if not in_target(n.target, to)})
    if bad:
        raise AssertionError(f"{_where(info, sample)} functionalized and decomposed to {to}: "
                             f"ops outside {to} remain: {', '.join(bad)}")
    inputs = _flat_tensors(clone_sample(sample))
    written = _flat_tensors(eager_sample)
    out = graph.run(*inputs)
    finals = {}
    if graph.mutated_inputs:
        result = out[0]
        finals = {i: out[k] for i, k in graph.mutated_inputs}
    else:
        result = out
    _assert_eager(info, sample, result, expected, f"functionalized and decomposed to {to}",
                  ((value, to_numpy(written[i])) for i, value in finals.items()))


def _flat_tensors(sample):
    """The sample's tensors in the order the tracer makes them placeholders."""
    out = []

    def walk(v):
        if _is_tensor(v):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
    for a in sample.all_args():
        walk(a)
    for v in sample.kwargs.values():
        walk(v)
    return out


def _expected_of(r):
    if isinstance(r, (tuple, list)):
        return tuple(_expected_of(x) for x in r)
    return to_numpy(r) if _is_tensor(r) else r


def _raises(fn, error_type, match, what):
    try:
        fn()
    except error_type as e:
        if match is not None and not re.search(match, str(e)):
            raise AssertionError(f"{what}: raised {type(e).__name__}({str(e)!r}), which does "
                                 f"not match {match!r}") from None
        return
    except Exception as e:
        raise AssertionError(f"{what}: raised {type(e).__name__}({e}), expected "
                             f"{_type_names(error_type)}") from None
    raise AssertionError(f"{what}: did not raise {_type_names(error_type)}")


def _type_names(t):
    return "/".join(x.__name__ for x in t) if isinstance(t, tuple) else t.__name__


def check_errors(info, error_input):
    """The op rejects the input with PyTorch's error type and message; so does its meta
    function, when the error does not depend on values."""
    s = error_input.sample
    _raises(lambda: _call(info, s), error_input.error_type, error_input.match,
            _where(info, s))
    if error_input.meta:
        m = s.map_tensors(lambda t: t.to("meta"), _meta_kwarg)
        _raises(lambda: _call(info, m), error_input.error_type, None,
                f"{_where(info, s)} on meta")


def check_lowering(info, sample, target):
    """The op traced (decomposed to prims) and compiled by lowering ``target`` (a name in
    ``fnx.lower.targets()`` or a target object) matches eager on a clone of the sample."""
    if isinstance(target, str):
        target = get_target(target)
    expected = _call(info, clone_sample(sample))
    tensors = _tensors_of(sample)

    def fn(*ts):
        return _call(info, _relabel(sample, ts))
    try:
        graph = trace(fn, *tensors, decompose_to="prims", functional=True)
    except DataDependentError as e:
        raise NotApplicable(f"{info.name} cannot be traced: {e}") from None
    result = target.compile(graph)(*tensors)
    if graph.mutated_inputs:
        result = result[0]
    _assert_eager(info, sample, result, expected,
                  f"lowered to {getattr(target, 'name', target)}")


def check_lowering_batch(info, samples, target):
    """``check_lowering`` for many samples with ONE compiled program: the op is traced on
    every sample in turn into a single graph, so a target that compiles (JAX) pays its
    compile cost once per entry and dtype.  Samples that cannot be traced (data-dependent
    shapes) are left out; returns how many were checked."""
    if isinstance(target, str):
        target = get_target(target)
    traceable, tensors, counts = [], [], []
    for s in samples:
        ts = _tensors_of(s)
        try:
            trace(lambda *a, _s=s: _call(info, _relabel(_s, a)), *ts, decompose_to="prims")
        except DataDependentError:
            continue
        traceable.append(s)
        tensors.extend(ts)
        counts.append(len(ts))
    if not traceable:
        raise NotApplicable(f"{info.name}: no traceable sample")

    def program(*flat):
        outs, i = [], 0
        for s, n in zip(traceable, counts):
            outs.append(_call(info, _relabel(s, flat[i:i + n])))
            i += n
        return tuple(outs)

    # functional: ops that also write an input (batch norm's running stats) lower too
    graph = trace(program, *tensors, decompose_to="prims", functional=True)
    results = target.compile(graph)(*tensors)
    if graph.mutated_inputs:
        results = results[0]
    for s, result in zip(traceable, results):
        _assert_eager(info, s, result, _call(info, clone_sample(s)),
                      f"lowered to {getattr(target, 'name', target)}")
    return len(traceable)


def _assert_eager(info, sample, result, expected, how, extra=()):
    """``result`` (the op run ``how``) matches the eager ``expected``, and each pair
    ``(value, reference)`` of ``extra`` matches, within the entry's tolerance."""
    rtol, atol = tolerance(info, sample, _result_dtype(expected))
    check_values = not info.nondeterministic
    try:
        assert_close(result, _expected_of(expected), rtol, atol, check_values=check_values)
        for value, reference in extra:          # lazy: its conversions fail inside the try
            assert_close(value, reference, rtol, atol, check_values=check_values)
    except AssertionError as e:
        raise AssertionError(f"{_where(info, sample)} {how} vs eager: {e}") from None


def _tensors_of(sample):
    """The sample's tensors, in ``map_tensors`` order."""
    tensors = []
    sample.map_tensors(lambda t: tensors.append(t) or t)
    return tensors


def _relabel(sample, tensors):
    """The sample with its tensors replaced, in ``map_tensors`` order, by ``tensors``."""
    it = iter(tensors)
    return sample.map_tensors(lambda t: next(it))


def lowering_targets() -> dict:
    """``{name: target}`` of the registered lowering targets (``fnx.lower.targets()``);
    each target answers ``has_rule(op)``."""
    return targets()


def _written_tensors(op, sample) -> set:
    """ids of the sample's tensors passed in written arguments other than ``self``."""
    pos = [a for a in op.schema.arguments if not a.kwarg_only]
    out = set()
    for a, v in zip(pos, sample.all_args()):
        if a.is_write and a.name != "self" and _is_tensor(v):
            out.add(id(v))
    for k, v in sample.kwargs.items():
        a = next((a for a in op.schema.arguments if a.name == k), None)
        if a is not None and a.is_write and _is_tensor(v):
            out.add(id(v))
    return out


def _wide_of(dtype):
    """The dtype finite differences run in: float64, or complex128 for complex inputs."""
    return complex128 if dtype.is_complex else float64


def _differentiable(dtype):
    return dtype.is_floating_point or dtype.is_complex


def check_gradient(info, sample):
    """Gradients of ``info.op`` on ``sample`` vs finite differences (float64, complex128)."""
    if info.op.derivative is NONDIFFERENTIABLE:
        raise NotApplicable(f"{info.name}: not differentiable")
    if sample.kink is not None:
        raise NotApplicable(f"{info.name}: sample at a kink ({sample.kink})")
    tensors = _tensors_of(sample)
    written = _written_tensors(info.op, sample)     # buffers an op updates (running stats)
    diff = [t.detach().to(_wide_of(t._dtype)).clone().requires_grad_()
            if (t._dtype.is_floating_point or t._dtype.is_complex) and id(t) not in written
            else t for t in tensors]
    if not any(t is not o for t, o in zip(diff, tensors)):
        raise NotApplicable(f"{info.name}: no floating-point input")
    if not all(bool(np.isfinite(t.detach().numpy()).all()) for t, o in zip(diff, tensors)
               if t is not o):
        raise NotApplicable(f"{info.name}: non-finite input (finite differences undefined)")
    inplace = info.variant == "inplace"

    def fn(*ts):
        it = iter(ts)
        s = sample.map_tensors(lambda t: next(it))
        if inplace:
            s = type(s)(s.input.clone(), *s.args, **s.kwargs)
        return _call(info, s)
    inputs = diff
    with np.errstate(all="ignore"):
        out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if _is_tensor(o)]
    if any((o._dtype.is_floating_point and o._dtype.itemsize < 8) or
           (o._dtype.is_complex and o._dtype.itemsize < 16) for o in outs):
        raise NotApplicable(f"{info.name}: a low-precision output (finite differences "
                            f"need float64)")
    if not all(bool(np.isfinite(o.detach().numpy(force=True)).all()) for o in outs
               if o._dtype.is_floating_point or o._dtype.is_complex):
        raise NotApplicable(f"{info.name}: non-finite output (outside the op's domain)")
    if not any(_differentiable(o._dtype) and o.requires_grad for o in outs):
        if any(_differentiable(o._dtype) for o in outs):
            raise AssertionError(f"{_where(info, sample)}: a floating output does not "
                                 f"require grad although its inputs do")
        raise NotApplicable(f"{info.name}: no floating-point output")
    try:
        with np.errstate(all="ignore"):
            gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=True)
    except GradcheckError as e:
        raise AssertionError(f"{_where(info, sample)}: gradient vs finite differences: "
                             f"{e}") from None
