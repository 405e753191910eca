"""``fnx_func::call``: one operator that runs a JAX function of arrays on fnx tensors.

Every ``fnx.func`` transform ends in a call of this op, ``call(inputs, key)``: ``key``
names a ``JaxFunction`` (a pure function of the inputs' arrays returning a list of arrays,
already wrapped in ``jax.vmap``/``jax.grad``/...). Because it is an ordinary operator:

- eagerly, its CPU and CUDA kernel runs the function ``jax.jit``-ed on the inputs' arrays
  (the outputs stay resident, as a compiled program's);
- while a trace runs (an outer transform, ``fnx.compile``), the tracer records it as one
  node (shapes from its Meta kernel, ``jax.eval_shape``), and its JAX rule is the function
  itself, so the outer transform's ``jax.vmap``/``jax.grad`` composes with it;
- under autograd, its derivative is another call of the op whose function is the
  ``jax.vjp`` of this one, so ``fnx.func`` results can be differentiated (to any order).
"""
from __future__ import annotations

import itertools
import weakref

import jax
import numpy as np

from ..autograd import kernels as _autograd_kernels
from ..backends.meta import to_meta
from ..core import dtype as D
from ..core.device import CPU
from ..core.dispatch_key import DispatchKey
from ..dispatch import dispatcher as _d
from ..graph.graph import NodeMeta
from ..ir.registry import TensorMeta, nondifferentiable
from ..keys import inplace_or_view as _inplace_or_view
from ..lower.jax import JAX_TARGET
from ..lower.jax_compile import tensor_maker
from ..lower.jax_storage import feed
from ..ops import aten

__all__ = ["JaxFunction", "call", "conj", "CALL", "STOP_GRADIENT"]

# key -> JaxFunction. Weak: what uses a function holds its key, a ``FunctionKey`` that holds
# the function (graph nodes and autograd nodes recording a call, the transforms' caches).
_functions = weakref.WeakValueDictionary()
_count = itertools.count()


class FunctionKey(str):
    """The ``key`` argument of ``fnx_func::call``: a string naming a ``JaxFunction``,
    holding it (so a graph that records the call keeps its function)."""

    def __new__(cls, name, fn):
        key = super().__new__(cls, name)
        key.fn = fn
        return key


def _lookup(key):
    fn = getattr(key, "fn", None)
    return fn if fn is not None else _functions[key]


def _fnx_dtype(jax_dtype):
    return D.from_numpy_dtype(np.dtype(jax_dtype))


def _differentiable(dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


class JaxFunction:
    """``fn(*arrays) -> list of arrays`` for inputs of ``in_avals`` (``ShapeDtypeStruct``s);
    registered under ``key`` so the op (and graphs recording it) can name it."""

    def __init__(self, fn, in_avals, what: str):
        self.fn = fn
        self.in_avals = list(in_avals)
        self.what = what
        with jax.enable_x64(True):
            outs = jax.eval_shape(lambda *a: list(fn(*a)), *self.in_avals)
        self.out_avals = list(outs)
        self.out_dtypes = [_fnx_dtype(o.dtype) for o in self.out_avals]
        with jax.enable_x64(True):
            self.jitted = jax.jit(self._exact)
        self.key = FunctionKey(f"{what}_{next(_count)}", self)
        self._vjps = {}
        _functions[self.key] = self

    def _exact(self, *arrays):
        """The outputs with exactly their declared dtypes (never weakly typed)."""
        outs = list(self.fn(*arrays))
        return [_exact(o, a.dtype) for o, a in zip(outs, self.out_avals)]

    def vjp(self, diff_in: tuple, diff_out: tuple) -> "JaxFunction":
        """The function ``(*inputs, *cotangents of the outputs in diff_out) -> gradients of
        the inputs in diff_in`` (``jax.vjp`` of this one)."""
        got = self._vjps.get((diff_in, diff_out))
        if got is not None:
            return got
        n = len(self.in_avals)
        wrt = [i for i, d in enumerate(diff_in) if d]
        outs_at = [i for i, d in enumerate(diff_out) if d]

        def pullback(*arrays):
            primals, cts = list(arrays[:n]), arrays[n:]

            def part(*xs):
                a = list(primals)
                for i, x in zip(wrt, xs):
                    a[i] = x
                outs = self._exact(*a)
                return [outs[i] for i in outs_at]
            _, pull = jax.vjp(part, *[primals[i] for i in wrt])
            return [conj(g) for g in pull([conj(_exact(c, self.out_avals[i].dtype))
                                           for c, i in zip(cts, outs_at)])]

        avals = self.in_avals + [self.out_avals[i] for i in outs_at]
        got = self._vjps[(diff_in, diff_out)] = JaxFunction(pullback, avals, "vjp")
        return got


def conj(x):
    """PyTorch's complex gradients are the conjugates of JAX's: a vjp in PyTorch's
    convention is ``conj(jax_vjp(conj(v)))`` (a no-op on real arrays)."""
    return jax.numpy.conj(x) if jax.numpy.iscomplexobj(x) else x


def _exact(x, dtype):
    aval = getattr(x, "aval", None)
    if x.dtype != dtype or (aval is not None and aval.weak_type):
        return jax.lax.convert_element_type(x, dtype)
    return x


def _schema_op():
    op = _d.define("call(Tensor[] inputs, str key) -> Tensor[]", (), "fnx_func")
    _inplace_or_view.register_op(op)

    def meta(inputs, key):
        f = _lookup(key)
        return [TensorMeta(tuple(a.shape), d) for a, d in zip(f.out_avals, f.out_dtypes)]

    def kernel(ks, inputs, key):
        f = _lookup(key)
        device = next((t.device for t in inputs if t.ndim), None) or \
            (inputs[0].device if inputs else CPU)
        with jax.enable_x64(True):
            outs = f.jitted(*[feed(t) for t in inputs])
        return [tensor_maker(NodeMeta(tuple(a.shape), d, device))(o)
                for o, a, d in zip(outs, f.out_avals, f.out_dtypes)]

    def rule(inputs, key):
        return _lookup(key)._exact(*inputs)

    def backward(grads, inputs, key):
        f = _lookup(key)
        diff_in = tuple(_differentiable(t.dtype) for t in inputs)
        diff_out = tuple(g is not None and _differentiable(d)
                         for g, d in zip(grads, f.out_dtypes))
        if not any(diff_in) or not any(diff_out):
            return [None] * len(inputs)
        pull = f.vjp(diff_in, diff_out)
        got = iter(op(list(inputs) + [g for g, d in zip(grads, diff_out) if d], pull.key))
        return [next(got) if d else None for d in diff_in]

    op.meta = meta
    op.register(DispatchKey.Meta, lambda ks, *a, **k: to_meta(meta(*a, **k)))
    op.register(DispatchKey.CPU, kernel)
    op.register(DispatchKey.CUDA, kernel)
    JAX_TARGET.rules[op] = rule
    op.derivative = backward
    _autograd_kernels.register_op(op)
    return op


CALL = _schema_op()


def _stop_gradient_op():
    """``fnx_func::stop_gradient``: what ``detach()`` records in a transform's trace (the
    value, as a constant for JAX's differentiation: ``lax.stop_gradient``)."""
    op = _d.define("stop_gradient(Tensor self) -> Tensor", (), "fnx_func")
    _inplace_or_view.register_op(op)

    def meta(self):
        return TensorMeta(tuple(self.shape), self.dtype)

    op.meta = meta
    op.register(DispatchKey.Meta, lambda ks, *a, **k: to_meta(meta(*a, **k)))
    op.register(DispatchKey.CPU, lambda ks, self: aten.clone.default(self))
    op.register(DispatchKey.CUDA, lambda ks, self: aten.clone.default(self))
    JAX_TARGET.rules[op] = jax.lax.stop_gradient
    nondifferentiable(op)
    _autograd_kernels.register_op(op)
    return op


STOP_GRADIENT = _stop_gradient_op()


def call(fn: JaxFunction, inputs) -> list:
    """Run ``fn`` on the tensors ``inputs`` through the op: a list of tensors."""
    return list(CALL(list(inputs), fn.key))
