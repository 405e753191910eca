"""Entries derived from a functional entry: its in-place (``add_.Tensor``) and ``out=``
(``add.out``) variants.

Their samples are the functional entry's samples (filtered to those the variant accepts:
for ``op_``, the result must have ``self``'s shape and cast to its dtype), their reference
is the functional reference cast to the written tensor's dtype, and their error inputs are
the functional samples the variant must reject (a broadcast shape that does not fit
``self``, a result dtype that cannot be cast to ``self``/``out``), with PyTorch's messages.
"""
from __future__ import annotations

import numpy as np

import fnx

from ..core import dtype as D
from ..ir.aten.out_variants import OUT_DTYPE_ERROR, OUT_RULE
from ..ir.registry import TensorMeta
from .database import ErrorInput, OpInfo, SampleInput, _is_tensor

__all__ = ["inplace_entry", "out_entry", "result_meta", "OUT_KNOWN"]

#: Known failures of every derived ``op.out`` entry (none at present).
OUT_KNOWN = []


def result_meta(op, sample):
    """``(shape, dtype)`` of ``op(sample)``'s (first) result, from its meta function when it
    has one, else by running it; None when the op rejects the sample."""
    try:
        if op.meta is not None:
            r = op.meta(*sample.all_args(), **sample.kwargs)
        else:
            r = op(*sample.all_args(), **sample.kwargs)
    except Exception:
        return None
    if isinstance(r, (tuple, list)) and not isinstance(r, TensorMeta):
        r = r[0]
    return tuple(r.shape), r.dtype


def expected_meta(info, sample):
    """``(shape, dtype)`` PyTorch gives for the sample: from the entry's reference when it
    has one (so a wrong meta function does not decide which samples a variant gets),
    else from the op."""
    if info.ref is None:
        return result_meta(info.op, sample)
    args, kwargs = sample.numpy()
    try:
        with np.errstate(all="ignore"):
            r = info.ref(*args, **kwargs)
        if isinstance(r, (tuple, list)):
            r = r[0]
        r = np.asarray(r)
        return r.shape, D.from_numpy_dtype(r.dtype)
    except Exception:
        return None


def _split(base, device):
    """Base samples of every dtype, with their functional result's (shape, dtype)."""
    for dtype in base.dtypes:
        for s in base.sample_inputs(device, dtype):
            if _is_tensor(s.input):
                yield dtype, s, expected_meta(base, s)


def _inplace_ok(s, r):
    return r is not None and r[0] == tuple(s.input.shape) and D.can_cast(r[1], s.input.dtype)


def inplace_entry(base, op, known=()):
    def samples(info, device, dtype):
        for s in base.sample_inputs(device, dtype):
            if _is_tensor(s.input) and _inplace_ok(s, expected_meta(base, s)):
                yield s

    def errors(info, device):
        seen = set()
        for dtype, s, r in _split(base, device):
            if r is None:
                continue
            if r[0] != tuple(s.input.shape) and "shape" not in seen:
                seen.add("shape")
                yield ErrorInput(s, RuntimeError, "doesn't match the broadcast shape")
            elif r[0] == tuple(s.input.shape) and not D.can_cast(r[1], s.input.dtype) \
                    and ("cast", dtype) not in seen:
                seen.add(("cast", dtype))
                yield ErrorInput(s, RuntimeError, "can't be cast to the desired output type")

    def ref(self, *args, **kwargs):
        return np.asarray(base.ref(self, *args, **kwargs)).astype(self.dtype)
    info = OpInfo(op, ref if base.ref is not None else None, base.dtypes, samples,
                  error_inputs=errors, tols=base.tols, known_failures=known,
                  nondeterministic=base.nondeterministic, variant="inplace", base=base,
                  skips=base.skips)
    # only the dtypes some sample of which the op accepts (``sin_`` of an int: none)
    info.dtypes = tuple(d for d in base.dtypes if any(True for _ in samples(info, "cpu", d)))
    return _prune_errors(info)


def _prune_errors(info):
    if not info.error_inputs("cpu"):
        info.error_inputs_fn = None
    return info


def _with_out(s, out):
    new = SampleInput(s.input, *s.args, **s.kwargs, out=out)
    new.kink = s.kink
    return new


def _empty(shape, dtype, device):
    return fnx.empty(shape, dtype=dtype, device=device)


def out_entry(base, op, known=()):
    rule = OUT_RULE.get(op)     # ops whose out= dtype rule is not the cast rule

    def samples(info, device, dtype):
        first = True
        for s in base.sample_inputs(device, dtype):
            r = expected_meta(base, s)
            if r is None:
                continue
            shape, rdtype = r
            if first and len(shape):
                # an empty ``out`` is resized (without a warning: it had no elements)
                yield _with_out(s, _empty((0,), rdtype, device))
            else:
                yield _with_out(s, _empty(shape, rdtype, device))
            if first and rdtype in (D.float32, D.int32) and rule in (None, "category"):
                # a wider ``out`` than the result: computed in the result dtype, then cast
                wide = D.float64 if rdtype is D.float32 else D.int64
                yield _with_out(s, _empty(shape, wide, device))
            first = False

    def errors(info, device):
        seen = set()
        for dtype, s, r in _split(base, device):
            if r is None or r[1] is D.bool or r[1] in seen:
                continue
            narrower = D.int64 if (r[1].is_floating_point or r[1].is_complex) else D.bool
            seen.add(r[1])
            yield ErrorInput(_with_out(s, _empty(r[0], narrower, device)), RuntimeError,
                             OUT_DTYPE_ERROR.get(rule,
                                                 "can't be cast to the desired output type"))

    def ref(*args, out, **kwargs):
        return np.asarray(base.ref(*args, **kwargs)).astype(out.dtype)
    known = list(known) + OUT_KNOWN
    return _prune_errors(OpInfo(op, ref if base.ref is not None else None, base.dtypes,
                                samples, error_inputs=errors, tols=base.tols,
                                known_failures=known, nondeterministic=base.nondeterministic,
                                variant="out", base=base, skips=base.skips))
