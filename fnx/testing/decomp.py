"""Checking decompositions against eager: the helpers behind tests/test_decomp_*.py.

A decomposition is right when running an op with every op outside a target level
replaced by its decomposition (``run_decomposed(op, ..., to="prims")``) runs only ops of
that level and gives eager's result: the same structure, dtype, shape and device,
bitwise-equal integers and bools, floats within a per-dtype tolerance (NaN where eager
has NaN), and the same exception and message where eager raises.  Backend authors can
use the same checks on their own samples.

>>> import fnx
>>> from fnx.testing.decomp import assert_decomposes, assert_same_error, seeded_tensor
>>> aten = fnx.ops.aten
>>> x = seeded_tensor((2, 3), fnx.float32, seed=1)
>>> assert_decomposes(aten.sum.dim_IntList, x, [1]).shape
fnx.Size([2])
>>> e = assert_same_error(aten.mm.default, x, x, match="cannot be multiplied")
>>> type(e).__name__
'RuntimeError'
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fnx

from ..core import dtype as D
from ..dispatch.dispatcher import OpOverload
from ..graph.decompose import decompose, in_target, run_decomposed
from .compare import assert_close
from .database import DEFAULT_TOLS

__all__ = ["REDUCTION_TOLS", "assert_same", "outside_target", "assert_ran_only",
           "assert_decomposes", "assert_same_error", "assert_graph_decomposes",
           "functional_aten_ops", "sample_params", "seeded_tensor"]

#: Tolerances ``(rtol, atol)`` for ops that accumulate (sums, products, norms, matmul):
#: a decomposition may add in another order than the eager kernel.
REDUCTION_TOLS = {
    D.float16: (2e-3, 2e-3), D.bfloat16: (2e-2, 2e-2), D.float32: (2e-5, 2e-5),
    D.float64: (1e-12, 1e-12), D.complex64: (2e-5, 2e-5), D.complex128: (1e-12, 1e-12),
}


def _check(ok, message):
    # explicit raises: these checks must hold under ``python -O`` too
    if not ok:
        raise AssertionError(message)


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _tol(tols, dtype):
    """``(rtol, atol)`` for ``dtype`` from ``tols``: None (the OpInfo database's
    DEFAULT_TOLS), a number or pair for every dtype, or a mapping dtype -> number/pair."""
    if tols is None:
        tols = DEFAULT_TOLS
    if isinstance(tols, dict):
        tols = tols[dtype]
    return tuple(tols) if isinstance(tols, (tuple, list)) else (tols, tols)


def assert_same(out, expected, tols=None, *, values=True):
    """Assert that ``out`` is ``expected``: the same structure (a tensor or a tuple/list
    of them), dtype, shape and device; bitwise-equal integer and bool values, float and
    complex values within ``tols`` with NaN in the same places.  ``tols``: None (the
    OpInfo database's ``DEFAULT_TOLS``), ``{dtype: tol}``, or one tol for every dtype;
    a tol is ``(rtol, atol)`` or one number for both (``tols=0`` demands equality).
    ``values=False`` skips the values (e.g. for ``empty``).

    >>> import fnx
    >>> assert_same(fnx.tensor([1.0, float("nan")]), fnx.tensor([1.0 + 1e-7, float("nan")]))
    >>> assert_same((fnx.tensor([1]),), (fnx.tensor([1], dtype=fnx.int32),))
    Traceback (most recent call last):
    AssertionError: result[0]: dtype: got fnx.int64, expected fnx.int32
    """
    outs, exps = _flat(out), _flat(expected)
    _check(len(outs) == len(exps), f"result: {len(outs)} results, expected {len(exps)}")
    for i, (o, e) in enumerate(zip(outs, exps)):
        what = f"result[{i}]" if isinstance(expected, (tuple, list)) else "result"
        _check(hasattr(o, "_ks"), f"{what}: got {type(o).__name__}, expected a tensor")
        _check(o.dtype is e.dtype, f"{what}: dtype: got {o.dtype!r}, expected {e.dtype!r}")
        _check(tuple(o.shape) == tuple(e.shape),
               f"{what}: shape: got {list(o.shape)}, expected {list(e.shape)}")
        _check(o.device == e.device, f"{what}: device: got {o.device}, expected {e.device}")
        if values:
            rtol, atol = _tol(tols, e.dtype) if e.dtype.is_floating_point or \
                e.dtype.is_complex else (0, 0)
            assert_close(o, e, rtol, atol, what=what)


def outside_target(ran, to="prims"):
    """The sorted names of the ops in ``ran`` (as ``run_decomposed`` reports them) that
    are outside level ``to``: ``[]`` when the decomposition reached it."""
    return sorted(str(op) for op in ran if not in_target(op, to))


def assert_ran_only(ran, to="prims", what="decomposition"):
    """Assert that something ran and that every op in ``ran`` is of level ``to``."""
    _check(bool(ran), f"{what}: nothing ran")
    bad = outside_target(ran, to)
    _check(not bad, f"{what}: ops outside {to} ran: {bad}")


def assert_decomposes(op, *args, to="prims", tols=None, values=True, allow_error=False,
                      **kwargs):
    """Run ``op(*args, **kwargs)`` eagerly and decomposed to level ``to``; assert that
    only ops of that level ran and that the results are the same (``assert_same`` with
    ``tols`` and ``values``).  Returns the decomposed result.  NumPy warnings (overflow,
    NaN) of both runs are silenced.  With ``allow_error=True`` an eager exception is no
    failure: the decomposition must then raise the same type (its message may name the
    decomposition's own ops), and the eager exception is returned.

    >>> import fnx
    >>> x = fnx.tensor([[1., 2.], [3., 4.]])
    >>> assert_decomposes(fnx.ops.aten.mm.default, x, x)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> e = assert_decomposes(fnx.ops.aten.neg.default, fnx.tensor([True]), allow_error=True)
    >>> type(e).__name__
    'RuntimeError'
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = op(*args, **kwargs)
        except Exception as e:
            if not allow_error:
                raise
            _same_error(e, op, args, kwargs, type(e), to, same_message=False)
            return e
        out, ran = run_decomposed(op, *args, to=to, **kwargs)
    assert_ran_only(ran, to, what=str(op))
    assert_same(out, expected, tols, values=values)
    return out


def _same_error(eager, op, args, kwargs, exc, to, same_message=True):
    try:
        run_decomposed(op, *args, to=to, **kwargs)
    except exc as e:
        _check(not same_message or str(e) == str(eager),
               f"{op} decomposed: message {str(e)!r}, eager: {str(eager)!r}")
        return e
    raise AssertionError(f"{op}: eager raised {type(eager).__name__}({eager}), the "
                         f"decomposition did not")


def assert_same_error(op, *args, exc=RuntimeError, match=None, to="prims", **kwargs):
    """Assert that ``op(*args, **kwargs)`` raises ``exc`` eagerly (with a message that
    ``re.search``-es ``match``, if given) and decomposed to ``to`` raises ``exc`` with the
    same message.  Returns the decomposition's exception.

    >>> import fnx
    >>> e = assert_same_error(fnx.ops.aten.sum.dim_IntList, fnx.ones(2), [3], exc=IndexError,
    ...                       match="Dimension out of range")
    """
    with pytest.raises(exc, match=match) as eager:
        op(*args, **kwargs)
    return _same_error(eager.value, op, args, kwargs, exc, to)


def assert_graph_decomposes(fn, *args, to="prims", tols=None, values=True):
    """Trace ``fn(*args)`` decomposed to level ``to`` (``fnx.decompose``): the graph must
    call only ops of that level, its output metadata must have eager's shapes and dtypes,
    and running it must give eager's result (``assert_same``).  Returns the graph.

    >>> import fnx
    >>> g = assert_graph_decomposes(lambda x: fnx.softmax(x, -1), fnx.ones(2, 3))
    >>> {n.target.namespace for n in g.calls()}
    {'prims'}
    """
    graph = decompose(fn, *args, to=to)
    ran = [n.target for n in graph.calls()]
    assert_ran_only(ran, to, what="traced graph")
    expected = fn(*args)
    out_meta = [n.meta for n in _flat(graph.output_node.args[0])]
    _check([(tuple(m.shape), m.dtype) for m in out_meta] ==
           [(tuple(e.shape), e.dtype) for e in _flat(expected)],
           f"traced graph: output metadata {out_meta}, eager: {expected}")
    got = graph.run(*args)
    if not isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        got, = got
    assert_same(got, expected, tols, values=values)
    return graph


def functional_aten_ops(module):
    """The distinct aten OpOverloads a definition module (``fnx.ir.aten.<family>``)
    defines, less the in-place ones (functionalization handles those): the ops that need
    a decomposition or a kernel.

    >>> from fnx.ir.aten import shape
    >>> [str(op) for op in functional_aten_ops(shape)][:2]
    ['aten::view', 'aten::_unsafe_view']
    """
    seen = {}
    for v in vars(module).values():
        if isinstance(v, OpOverload) and v.namespace == "aten" and "inplace" not in v.tags:
            seen[id(v)] = v
    return list(seen.values())


def sample_params(samples_for, dtypes):
    """pytest parameters ``(op, args, kwargs)`` for every dtype: ``samples_for(dtype)``
    lists the samples of one dtype; ids read ``<op>-<dtype>-<index>``.

    >>> import fnx
    >>> ps = sample_params(lambda d: [(fnx.ops.aten.neg.default, (fnx.ones(2, dtype=d),), {})],
    ...                    [fnx.float32, fnx.int64])
    >>> [p.id for p in ps]
    ['neg-float32-0', 'neg-int64-0']
    """
    return [pytest.param(op, args, kwargs,
                         id=f"{str(op).replace('aten::', '')}-{d.name}-{i}")
            for d in dtypes for i, (op, args, kwargs) in enumerate(samples_for(d))]


def seeded_tensor(shape, dtype=D.float32, seed=0, low=-5, high=5):
    """A tensor of reproducible random values (``numpy.random.default_rng(seed)``):
    floats uniform in ``[low, high)``, complex with real and imaginary parts so,
    integers in ``[low, high)`` (from 0 for uint8), bools half True.

    >>> import fnx
    >>> seeded_tensor((2,), fnx.int64, seed=3).tolist() == seeded_tensor((2,), fnx.int64,
    ...                                                                  seed=3).tolist()
    True
    """
    rng = np.random.default_rng(seed)
    if dtype is D.bool:
        return fnx.tensor(rng.random(shape) < 0.5)
    if dtype.is_floating_point:
        return fnx.tensor(rng.uniform(low, high, shape).astype(np.float64), dtype=dtype)
    if dtype.is_complex:
        a = rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)
        return fnx.tensor(a, dtype=dtype)
    return fnx.tensor(rng.integers(max(low, 0) if dtype is D.uint8 else low, high, shape),
                      dtype=dtype)
