"""The transforms of ``fnx.func``: each is JAX's own transform of the traced function.

A transformed function (``vmap(f)``, ``grad(f)``, ...) traces ``f`` for the call's
argument shapes (``Traced``), wraps the JAX function in ``jax.vmap``/``jax.grad``/... and
runs it through the ``fnx_func::call`` op (``_program_op``). Traces are cached per
transform, function and call signature (shapes, dtypes, devices, other arguments by
value; the modules, globals and closure cells ``f`` reads, as ``fnx.compile`` guards).
"""
from __future__ import annotations

import collections
import functools
import threading

import jax
import numpy as np

from ..core.meta_array import meta_tensor
from ..core.tensor import Tensor
from ..lower.jax import random_key
from ._program_op import JaxFunction, conj
from ..core.pytree import broadcast_prefix, flatten, unflatten
from ._traced import Traced, aval, describe, fn_name, run, state_key

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]

# Traced plans, most recently used last: shared by every transformed function of the same
# kind, configuration and function (a ``vmap(grad(f))`` made anew on each step hits too).
# A plan holds its function, so the ids in its key stay unique while it is cached.
_CACHE_SIZE = 64
_plans = collections.OrderedDict()
_plans_lock = threading.Lock()


class _Transformed:
    """A transformed function: call it like ``func``."""

    kind = "transform"

    def __init__(self, func, config):
        if not callable(func):
            raise TypeError(f"{self.kind}: expected a callable, got {type(func).__name__}")
        self.func = func
        self._fnx_func_inner = ((self.kind,) + config, func)
        functools.update_wrapper(self, func, updated=())

    def __call__(self, *args, **kwargs):
        key = (self._fnx_func_inner[0], describe((args, kwargs)), state_key(self.func))
        try:
            hash(key)
        except TypeError:
            key = None
        with _plans_lock:
            plan = _plans.get(key) if key is not None else None
            if plan is not None:
                _plans.move_to_end(key)
        if plan is None:
            plan = self._plan(args, kwargs)
            plan.func = self.func
            if key is not None:
                # cached under the Python state the trace left: a function that appends
                # to a list it names (a trace counter) would else miss on every call
                key = key[:2] + (state_key(self.func),)
            if key is not None and not plan.traced.captures_trace:
                with _plans_lock:
                    _plans[key] = plan
                    if len(_plans) > _CACHE_SIZE:
                        _plans.popitem(last=False)
        return plan.run(args, kwargs)

    def _plan(self, args, kwargs):
        raise NotImplementedError

    def __repr__(self):
        return f"<fnx.func.{self.kind}({fn_name(self.func)})>"


class _Plan:
    """A traced call signature: ``run(args, kwargs)`` computes the results."""

    def __init__(self, traced, run_fn):
        self.traced = traced
        self.run = run_fn
        self.func = None


# ----------------------------------------------------------------------------- helpers

def _is_dim(d) -> bool:
    return d is None or (isinstance(d, int) and not isinstance(d, bool))


def _broadcast(prefix, tree, what, name):
    """One entry of ``prefix`` (int/None, or a pytree prefix of ``tree``) per leaf of
    ``tree``."""
    try:
        return broadcast_prefix(prefix, tree, _is_dim)
    except ValueError:
        raise ValueError(f"{name}: {what}={prefix!r} is not compatible with the structure "
                         f"of the {'inputs' if what == 'in_dims' else 'outputs'} "
                         f"({flatten(tree)[1]}); it must be an int, None, or a (nested) "
                         f"tuple matching it") from None


def _check_random(traced, randomness, name):
    if traced.has_random and randomness == "error":
        raise RuntimeError(f"{name}: called random operation while in randomness error mode. "
                           f"Please either use the 'same' or 'different' randomness flags on "
                           f"{name} or perform the randomness operation out of {name}")


class _Argnums:
    """The tensor leaves ``argnums`` selects, and how to give gradients their shape."""

    def __init__(self, argnums, args, kwargs, name):
        n = len(args)
        if isinstance(argnums, int) and not isinstance(argnums, bool):
            nums = (argnums,)
        elif isinstance(argnums, tuple) and argnums and \
                all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
            nums = argnums
        elif isinstance(argnums, tuple) and not argnums:
            raise RuntimeError(f"{name}: argnums must be non-empty")
        else:
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got: "
                               f"{type(argnums).__name__}")
        for a in nums:
            if not -n <= a < n:
                raise RuntimeError(f"{name}: Got argnums={a}, but only {n} positional "
                                   f"inputs")
        nums = tuple(a % n for a in nums)
        if len(set(nums)) != len(nums):
            raise RuntimeError(f"{name}: argnums must be unique, got {argnums}")
        self.single = not isinstance(argnums, tuple)
        offsets, start = [], 0
        trees = []
        for a in args:
            leaves, tree = flatten(a)
            offsets.append(start)
            trees.append((tree, len(leaves), leaves))
            start += len(leaves)
        every = flatten((tuple(args), dict(kwargs)))[0]       # as ``Traced`` numbers them
        tensor_at = [i for i, x in enumerate(every) if isinstance(x, Tensor)]
        tensor_index = {leaf: k for k, leaf in enumerate(tensor_at)}
        self.positions, self.parts = [], []
        for a in nums:
            tree, count, leaves = trees[a]
            for j, leaf in enumerate(leaves):
                if not isinstance(leaf, Tensor):
                    raise RuntimeError(f"{name}: argument {a} must be a Tensor (or a pytree "
                                       f"of Tensors) to be differentiated, got "
                                       f"{type(leaf).__name__}")
                if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
                    raise RuntimeError(f"{name}: only Tensors of floating point dtype can "
                                       f"require gradients (argument {a} is {leaf.dtype})")
                self.positions.append(tensor_index[offsets[a] + j])
            self.parts.append((tree, count))

    def build(self, values):
        """Per-leaf values (in ``positions`` order) shaped as the selected arguments."""
        it = iter(values)
        out = tuple(unflatten(tree, [next(it) for _ in range(count)])
                    for tree, count in self.parts)
        return out[0] if self.single else out


def _with(arrays, positions, values):
    a = list(arrays)
    for i, v in zip(positions, values):
        a[i] = v
    return a


class _OutputCheck:
    """Checks ``func``'s output for a transform and remembers the main output's (and
    aux's) structure."""

    def __init__(self, name, has_aux, scalar=False):
        self.name, self.has_aux, self.scalar = name, has_aux, scalar
        self.main_tree = self.aux_tree = None
        self.n_main = 0

    def __call__(self, out):
        if self.has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{self.name}(f)(*args): output of function f should be a "
                                   f"tuple: (output, aux) if has_aux is True")
            main, aux = out
            self.aux_tree = flatten(aux)[1]
        else:
            main = out
        if self.scalar:
            if not isinstance(main, Tensor):
                raise RuntimeError(f"{self.name}(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(main).__name__}")
            if main.ndim != 0:
                raise RuntimeError(f"{self.name}(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {main.ndim} dims. Maybe "
                                   f"you wanted to use the vjp or jacrev APIs instead?")
        leaves, self.main_tree = flatten(main)
        self.n_main = len(leaves)


def _inputs(traced, args, kwargs, extras=None):
    return traced.arg_tensors(args, kwargs) + (traced.extra_inputs() if extras is None
                                               else extras)


def _avals(tensors):
    return [aval(t) for t in tensors]


# ----------------------------------------------------------------------------- vmap

class _Vmap(_Transformed):
    kind = "vmap"

    def __init__(self, func, in_dims=0, out_dims=0, randomness="error", chunk_size=None):
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
            raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                             f"{chunk_size})")
        if not (isinstance(in_dims, (int, tuple)) and not isinstance(in_dims, bool)):
            raise ValueError(f"vmap(f, in_dims={in_dims!r}, ...): expected `in_dims` to be int "
                             f"or a (potentially nested) tuple matching the structure of "
                             f"inputs, got: {type(in_dims).__name__}.")
        if not (_is_dim(out_dims) or isinstance(out_dims, tuple)):
            raise ValueError(f"vmap(f, ..., out_dims={out_dims!r}): expected `out_dims` to be "
                             f"int or a (potentially nested) tuple matching the structure of "
                             f"outputs, got: {type(out_dims).__name__}.")
        self.in_dims, self.out_dims = in_dims, out_dims
        self.randomness, self.chunk_size = randomness, chunk_size
        super().__init__(func, (repr(in_dims), repr(out_dims), randomness, chunk_size))

    def _plan(self, args, kwargs):
        name = f"vmap({fn_name(self.func)}, in_dims={self.in_dims!r}, ...)"
        leaves, tree = flatten(args)
        if isinstance(self.in_dims, tuple) and len(self.in_dims) != len(args):
            raise ValueError(f"{name}(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has {len(self.in_dims)} entries but "
                             f"there are {len(args)} inputs")
        dims = _broadcast(self.in_dims, tuple(args), "in_dims", name)
        sizes, examples = [], []
        for x, d in zip(leaves, dims):
            if d is None:
                examples.append(x)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"{name}: Got in_dim={d} for an input but the input is of "
                                 f"type {type(x).__name__}. We cannot vmap over non-Tensor "
                                 f"arguments, please use None as the respective in_dim")
            if not -x.ndim <= d < max(x.ndim, 1) or x.ndim == 0:
                raise ValueError(f"{name}: Got in_dim={d} for some input, but that input is a "
                                 f"Tensor of dimensionality {x.ndim} so expected in_dim to "
                                 f"satisfy -{x.ndim} <= in_dim < {x.ndim}.")
            d %= x.ndim
            sizes.append(x.shape[d])
            shape = tuple(s for i, s in enumerate(x.shape) if i != d)
            examples.append(meta_tensor(shape, x.dtype, x.device))
        if not sizes:
            raise ValueError(f"{name}: at least one input must be a Tensor with a non-None "
                             f"in_dim to vmap over (got in_dims that are all None, or no "
                             f"Tensor inputs)")
        if len(set(sizes)) > 1:
            raise ValueError(f"{name}: Expected all tensors to have the same size in the "
                             f"mapped dimension, got sizes {sizes} for the mapped dimension")
        batch = sizes[0]
        axes = [None if d is None else d % x.ndim for x, d in zip(leaves, dims)
                if isinstance(x, Tensor)]
        traced = Traced(self.func, unflatten(tree, examples), kwargs, "vmap")
        _check_random(traced, self.randomness, "vmap")
        n_kw = traced.n_args - len(axes)
        in_axes = axes + [None] * n_kw + [None] * len(traced.extras)
        rng_at = [traced.n_args + i for i, (k, _) in enumerate(traced.extras) if k == "rng"]
        if self.randomness == "different":
            for i in rng_at:
                in_axes[i] = 0
        else:
            rng_at = []
        out_leaves = list(range(traced.n_user))
        out_dims = _broadcast(self.out_dims, unflatten(traced.out_tree, out_leaves),
                              "out_dims", name)
        out_axes = []
        for d, (shape, _) in zip(out_dims, traced.out_metas):
            if d is not None and not -(len(shape) + 1) <= d <= len(shape):
                raise ValueError(f"{name}: Got out_dim={d} for an output of dimensionality "
                                 f"{len(shape)} (with the vmapped dimension, "
                                 f"{len(shape) + 1}), out of range")
            out_axes.append(None if d is None else d % (len(shape) + 1))
        # a written input gets its new value back along its own mapped dimension
        out_axes += [in_axes[i] for i in traced.written]
        chunk = self.chunk_size if self.chunk_size is not None else batch

        def mapped(*arrays):
            return jax.vmap(lambda a: traced.fn(*a), in_axes=(in_axes,), out_axes=(out_axes, 0),
                            axis_size=arrays_size(arrays))(list(arrays))

        def arrays_size(arrays):
            return next(a.shape[ax] for a, ax in zip(arrays, in_axes) if ax is not None)

        def fn(*arrays):
            arrays = list(arrays)
            for i in rng_at:
                arrays[i] = jax.random.key_data(jax.random.split(
                    random_key(arrays[i]), batch)).astype(np.int64)
            if chunk >= batch:
                outs, wit = mapped(*arrays)
                return list(outs) + list(wit)
            pieces = []
            for start in range(0, batch, chunk):
                stop = min(start + chunk, batch)
                part = [a if ax is None else jax.lax.slice_in_dim(a, start, stop, axis=ax)
                        for a, ax in zip(arrays, in_axes)]
                pieces.append(mapped(*part))
            outs = [p if ax is None else jax.numpy.concatenate(p, axis=ax)
                    for p, ax in zip(zip(*[p[0] for p in pieces]), out_axes)]
            outs = [o[0] if ax is None else o for o, ax in zip(outs, out_axes)]
            wit = [jax.numpy.concatenate(w) for w in zip(*[p[1] for p in pieces])]
            return outs + wit

        ex_inputs = _inputs(traced, args, kwargs)
        try:
            jf = JaxFunction(fn, _avals(ex_inputs), "vmap")
        except ValueError as e:
            if any(in_axes[i] is None for i in traced.written):
                raise RuntimeError(f"{name}: the function writes in place into a tensor that "
                                   f"is not mapped (in_dims None, or captured: a module "
                                   f"buffer?) a value that differs per example; map that "
                                   f"tensor too, or make the function out-of-place") from None
            if "out_axes" in str(e) or "mapped output" in str(e):
                raise ValueError(f"{name}: an output that does not depend on the mapped inputs "
                                 f"can only have out_dims None; one that does cannot: {e}"
                                 ) from None
            raise
        n_out = len(traced.out_metas)

        def run_fn(args, kwargs, first=[ex_inputs]):
            inputs = first.pop() if first else _inputs(traced, args, kwargs)
            outs = run(jf, inputs, n_out, traced.checks)
            traced.write_back(inputs, outs[traced.n_user:])
            return unflatten(traced.out_tree, outs[:traced.n_user])
        return _Plan(traced, run_fn)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs (``torch.func.vmap``), by
    ``jax.vmap`` of its trace.

    ``in_dims``: the dimension of each input to map over (an int for all, None for an input
    passed whole, or a tuple per positional argument, nested as the arguments are);
    ``out_dims``: where the mapped dimension goes in each output. Keyword arguments are
    passed whole. ``randomness``: ``'error'`` refuses random ops, ``'different'`` draws
    independently per example, ``'same'`` shares the draws. ``chunk_size`` maps that many
    examples at a time (less memory, same results).

    >>> import fnx
    >>> x = fnx.tensor([[1., 2.], [3., 4.], [5., 6.]])
    >>> fnx.func.vmap(fnx.dot)(x, fnx.tensor([1., 1.]).expand(3, 2))
    tensor([ 3.,  7., 11.])
    >>> fnx.func.vmap(lambda r, w: (r * w).sum(), in_dims=(0, None))(x, fnx.tensor([1., -1.]))
    tensor([-1., -1., -1.])
    """
    return _Vmap(func, in_dims, out_dims, randomness, chunk_size)


# ----------------------------------------------------------------------------- grad

class _Grad(_Transformed):
    kind = "grad"

    def __init__(self, func, argnums=0, has_aux=False, with_value=False):
        self.argnums, self.has_aux, self.with_value = argnums, has_aux, with_value
        if with_value:
            self.kind = "grad_and_value"
        super().__init__(func, (repr(argnums), has_aux))

    def _plan(self, args, kwargs):
        nums = _Argnums(self.argnums, args, kwargs, self.kind)
        check = _OutputCheck(self.kind, self.has_aux, scalar=True)
        traced = Traced(self.func, args, kwargs, self.kind, check)
        pos = nums.positions

        def fn(*arrays):
            def scalar(*diff):
                outs, wit = traced.fn(*_with(arrays, pos, diff))
                return outs[0], (outs[1:], wit)
            (value, (aux, wit)), grads = jax.value_and_grad(
                scalar, argnums=tuple(range(len(pos))), has_aux=True)(
                    *[arrays[i] for i in pos])
            return [conj(g) for g in grads] + [value] + list(aux) + list(wit)

        ex_inputs = _inputs(traced, args, kwargs)
        jf = JaxFunction(fn, _avals(ex_inputs), self.kind)
        n_out = len(pos) + len(traced.out_metas)

        def run_fn(args, kwargs):
            inputs = _inputs(traced, args, kwargs)
            outs = run(jf, inputs, n_out, traced.checks)
            grads = nums.build(outs[:len(pos)])
            traced.write_back(inputs, outs[len(pos) + traced.n_user:])
            rest = unflatten(traced.out_tree, outs[len(pos):len(pos) + traced.n_user])
            if self.with_value:
                return grads, rest
            return (grads, rest[1]) if self.has_aux else grads
        return _Plan(traced, run_fn)


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (which returns a 0-dim tensor, or ``(scalar, aux)`` with
    ``has_aux``) with respect to the arguments ``argnums`` (``torch.func.grad``), by
    ``jax.grad`` of its trace. Returns the gradient(s) shaped as those arguments (and aux).

    >>> import fnx
    >>> fnx.func.grad(lambda x: (x ** 3).sum())(fnx.tensor([1., 2.]))
    tensor([ 3., 12.])
    >>> gx, gy = fnx.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(
    ...     fnx.tensor([1., 2.]), fnx.tensor([3., 4.]))
    >>> gx, gy
    (tensor([3., 4.]), tensor([1., 2.]))
    """
    return _Grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of ``func`` (``torch.func.grad_and_value``); with ``has_aux``,
    ``(gradient, (value, aux))``.

    >>> import fnx
    >>> fnx.func.grad_and_value(lambda x: (x ** 2).sum())(fnx.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    return _Grad(func, argnums, has_aux, with_value=True)


# ----------------------------------------------------------------------------- jacobians

class _Jac(_Transformed):
    def __init__(self, func, argnums, has_aux, kind, randomness="error", chunk_size=None):
        self.kind = kind
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
            raise ValueError(f"{kind}: `chunk_size` should be greater than 0 (got "
                             f"{chunk_size})")
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        self.argnums, self.has_aux, self.randomness = argnums, has_aux, randomness
        self.chunk_size = chunk_size
        super().__init__(func, (repr(argnums), has_aux, randomness, chunk_size))

    def _plan(self, args, kwargs):
        kind = self.kind
        nums = _Argnums(self.argnums, args, kwargs, kind)
        check = _OutputCheck(kind, self.has_aux)
        traced = Traced(self.func, args, kwargs, kind, check)
        if kind == "jacfwd":
            _check_random(traced, self.randomness, kind)
        pos, k, n_main = nums.positions, len(nums.positions), check.n_main
        for i, x in enumerate(traced.arg_tensors(args, kwargs)):
            if x.dtype.is_complex:
                raise RuntimeError(f"{kind}: Expected all inputs to be real but received "
                                   f"complex tensor at flattened input idx: {i}")
        for i, (_, dt) in enumerate(traced.out_metas[:n_main]):
            if dt.is_complex:
                raise RuntimeError(f"{kind}: Expected all outputs to be real but received "
                                   f"complex tensor at flattened output idx: {i}")
            if not dt.is_floating_point:
                raise RuntimeError(f"{kind}: the outputs of the function must be floating "
                                   f"point to be differentiated, got {dt}")
        if kind == "hessian":
            def transform(f):
                return jax.jacfwd(jax.jacrev(f, argnums=tuple(range(k)), has_aux=True),
                                  argnums=tuple(range(k)), has_aux=True)
        elif kind == "jacrev" and self.chunk_size is not None:
            def transform(f):
                return lambda *diff: _chunked_jacrev(f, diff, self.chunk_size)
        else:
            jac = jax.jacrev if kind == "jacrev" else jax.jacfwd

            def transform(f):
                return jac(f, argnums=tuple(range(k)), has_aux=True)

        def fn(*arrays):
            def main(*diff):
                outs, wit = traced.fn(*_with(arrays, pos, diff))
                return list(outs[:n_main]), (outs[n_main:], wit)
            rows, (aux, wit) = transform(main)(*[arrays[i] for i in pos])
            flat = []
            for row in rows:
                for j in row:
                    flat.extend(j if kind == "hessian" else (j,))
            return flat + list(aux) + list(wit)

        jf = JaxFunction(fn, _avals(_inputs(traced, args, kwargs)), kind)
        per_row = k * k if kind == "hessian" else k
        n_jac = n_main * per_row
        n_out = n_jac + len(traced.out_metas) - n_main

        def run_fn(args, kwargs):
            inputs = _inputs(traced, args, kwargs)
            outs = run(jf, inputs, n_out, traced.checks)
            n_aux = traced.n_user - n_main
            traced.write_back(inputs, outs[n_jac + n_aux:])
            rows = []
            for r in range(n_main):
                row = outs[r * per_row:(r + 1) * per_row]
                if kind == "hessian":
                    row = [nums.build(row[i * k:(i + 1) * k]) for i in range(k)]
                rows.append(nums.build(row))
            result = unflatten(check.main_tree, rows)
            if self.has_aux:
                return result, unflatten(check.aux_tree, outs[n_jac:n_jac + n_aux])
            return result
        return _Plan(traced, run_fn)


def _chunked_jacrev(f, diff, chunk):
    """``jax.jacrev(f, has_aux=True)`` over all of ``diff``, pulling back ``chunk`` rows of
    the Jacobian at a time (one-hot cotangents, ``jax.vmap`` of the vjp)."""
    outs, pull, aux = jax.vjp(f, *diff, has_aux=True)
    sizes = [int(np.prod(o.shape)) for o in outs]
    starts = np.cumsum([0] + sizes)
    total = int(starts[-1])
    parts = [[] for _ in diff]
    for s in range(0, total, chunk):
        e = min(s + chunk, total)
        onehot = jax.numpy.arange(s, e)[:, None] == jax.numpy.arange(total)[None, :]
        cts = [onehot[:, a:b].reshape((e - s,) + o.shape).astype(o.dtype)
               for o, a, b in zip(outs, starts[:-1], starts[1:])]
        got = jax.vmap(lambda *c: pull(list(c)))(*cts)
        for acc, g in zip(parts, got):
            acc.append(g)
    full = [jax.numpy.concatenate(p) for p in parts]        # [total, *input shape]
    rows = [tuple(j[a:b].reshape(o.shape + j.shape[1:]) for j in full)
            for o, a, b in zip(outs, starts[:-1], starts[1:])]
    return rows, aux


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by reverse mode
    (``torch.func.jacrev``; ``jax.jacrev`` of the trace). For an output of shape ``O`` and
    an input of shape ``I`` the Jacobian has shape ``O + I``; several outputs or argnums give
    nested tuples (outputs outside). ``chunk_size``: compute that many rows of the Jacobian
    at a time (less memory, same result).

    >>> import fnx
    >>> fnx.func.jacrev(lambda x: x ** 2)(fnx.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    return _Jac(func, argnums, has_aux, "jacrev", chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode (``torch.func.jacfwd``; ``jax.jacfwd`` of the
    trace); same layout as ``jacrev``. With random ops in ``func``, ``randomness`` must be
    ``'same'`` or ``'different'`` (both draw once for all the tangents).

    >>> import fnx
    >>> fnx.func.jacfwd(lambda x: x.sin())(fnx.tensor([0., 0.]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _Jac(func, argnums, has_aux, "jacfwd", randomness=randomness)


def hessian(func, argnums=0):
    """The Hessian of a function (``torch.func.hessian``): ``jacfwd(jacrev(func))``, as
    ``jax.jacfwd(jax.jacrev(...))`` of the trace; shape ``O + I + I``.

    >>> import fnx
    >>> fnx.func.hessian(lambda x: (x ** 3).sum())(fnx.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return _Jac(func, argnums, False, "hessian", randomness="same")


# ----------------------------------------------------------------------------- vjp, jvp

def _primal_check(name, leaves):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{name}: Expected primals to be Tensors (or pytrees of "
                               f"Tensors), got {type(x).__name__}")
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError(f"{name}: only Tensors of floating point dtype can require "
                               f"gradients (got a primal of dtype {x.dtype})")


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (``torch.func.vjp``): ``vjp_fn(cotangents)``, with cotangents
    shaped as ``output``, returns a tuple with the vector-Jacobian product for each primal
    (``jax.vjp`` of the trace). With ``has_aux`` (``func`` returns ``(output, aux)``):
    ``(output, vjp_fn, aux)``.

    >>> import fnx
    >>> out, vjp_fn = fnx.func.vjp(lambda x: x ** 2, fnx.tensor([1., 3.]))
    >>> out, vjp_fn(fnx.tensor([1., 1.]))
    (tensor([1., 9.]), (tensor([2., 6.]),))
    """
    _primal_check("vjp", flatten(primals)[0])
    check = _OutputCheck("vjp", has_aux)
    traced = Traced(func, primals, {}, "vjp", check)
    n_main, n_args = check.n_main, traced.n_args
    extras = traced.extra_inputs()      # the same random keys for output and vjp_fn
    inputs = _inputs(traced, primals, {}, extras)

    def forward(*arrays):
        outs, wit = traced.fn(*arrays)
        return list(outs) + list(wit)
    outs = run(JaxFunction(forward, _avals(inputs), "vjp"), inputs, len(traced.out_metas),
               traced.checks)
    main = outs[:n_main]
    traced.write_back(inputs, outs[traced.n_user:])
    for t in main:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"vjp: the outputs of the function must be floating point, "
                               f"got {t.dtype}")
    output = unflatten(check.main_tree, main)
    back = {}

    def pullback(*arrays):
        xs, cts = arrays[:len(inputs)], arrays[len(inputs):]

        def part(*p):
            return traced.fn(*_with(xs, range(n_args), p))[0][:n_main]
        _, pull = jax.vjp(part, *xs[:n_args])
        return [conj(g) for g in pull([conj(c) for c in cts])]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        leaves, tree = flatten(cotangents)
        if tree != check.main_tree:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{tree}, primal output: {check.main_tree}")
        for i, (c, o) in enumerate(zip(leaves, main)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected the cotangents to be Tensors, got "
                                   f"{type(c).__name__}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{c.shape} and output[{i}] has a shape of {o.shape}.")
            leaves[i] = c if c.dtype is o.dtype else c.to(o.dtype)
        if "fn" not in back:
            back["fn"] = JaxFunction(pullback, _avals(inputs + leaves), "vjp_fn")
        grads = run(back["fn"], inputs + leaves, n_args, ())
        it = iter(grads)
        return tuple(unflatten(flatten(p)[1], [next(it) for _ in flatten(p)[0]])
                     for p in primals)

    if has_aux:
        return output, vjp_fn, unflatten(check.aux_tree, outs[n_main:traced.n_user])
    return output, vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)`` (``torch.func.jvp``): ``func(*primals)`` and its Jacobian-vector
    product with ``tangents`` (shaped as ``primals``), by ``jax.jvp`` of the trace. With
    ``has_aux``: ``(output, jvp_out, aux)``.

    >>> import fnx
    >>> fnx.func.jvp(lambda x: x ** 2, (fnx.tensor([1., 3.]),), (fnx.tensor([1., 0.]),))
    (tensor([1., 9.]), tensor([2., 0.]))
    """
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict is not supported "
                           "(as in torch.func)")
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. "
                           "it should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple.")
    p_leaves, p_tree = flatten(primals)
    t_leaves, t_tree = flatten(tangents)
    if p_tree != t_tree:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have "
                           f"the same python structure. For example, if primals is a tuple of "
                           f"3 tensors, tangents also must be. Got primals with structure "
                           f"{p_tree} and tangents with structure {t_tree}")
    _primal_check("jvp", p_leaves)
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor) or tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got a primal of shape {tuple(p.shape)} "
                               f"and a tangent of "
                               f"{tuple(t.shape) if isinstance(t, Tensor) else type(t)}")
    check = _OutputCheck("jvp", has_aux)
    traced = Traced(func, primals, {}, "jvp", check)
    n_main, n_args = check.n_main, traced.n_args
    inputs = _inputs(traced, primals, {})
    tangents_ = [t if t.dtype is p.dtype else t.to(p.dtype) for p, t in zip(p_leaves, t_leaves)]
    n_in = len(inputs)

    def fn(*arrays):
        xs, ts = arrays[:n_in], arrays[n_in:]

        def part(*p):
            outs, wit = traced.fn(*_with(xs, range(n_args), p))
            return list(outs[:n_main]), (list(outs[n_main:]), wit)
        out, tout, (aux, wit) = jax.jvp(part, tuple(xs[:n_args]), tuple(ts), has_aux=True)
        return list(out) + list(tout) + aux + list(wit)

    jf = JaxFunction(fn, _avals(inputs + tangents_), "jvp")
    outs = run(jf, inputs + tangents_, 2 * n_main + len(traced.out_metas) - n_main,
               traced.checks)
    output = unflatten(check.main_tree, outs[:n_main])
    tangent_out = unflatten(check.main_tree, outs[n_main:2 * n_main])
    traced.write_back(inputs, outs[n_main + traced.n_user:])
    if has_aux:
        return output, tangent_out, unflatten(check.aux_tree,
                                              outs[2 * n_main:n_main + traced.n_user])
    return output, tangent_out
