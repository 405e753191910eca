"""``fnx.cond`` and ``fnx.while_loop``: PyTorch's control-flow operators.

Eagerly they run Python: ``cond`` calls the branch ``pred`` picks, ``while_loop`` calls
``body_fn`` while ``cond_fn`` holds.  Under ``fnx.compile`` (or a ``fnx.func`` transform)
with a tensor predicate, each branch, the loop condition and the body are traced to pure
JAX functions (``Traced``, as the transforms trace) and the whole construct is recorded as
ONE ``fnx_func::call`` node whose function is ``jax.lax.cond`` / ``jax.lax.while_loop``:
both branches are compiled and the choice is made at run time, with no graph break.

As PyTorch's: the branches take the same ``operands`` and return outputs of the same
structure, shapes and dtypes; the body returns values shaped as ``carried_inputs``; the
functions must not modify their inputs in place.  Compiled, a random op in a loop body
draws the same numbers on every iteration, index checks inside the functions are not run,
and a compiled ``while_loop`` has no reverse-mode gradient (``jax.lax.while_loop``'s).

>>> import fnx
>>> f = lambda x: fnx.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,))
>>> f(fnx.tensor([1.0, 2.0])), fnx.compile(f)(fnx.tensor([-1.0, -2.0]))
(tensor([2., 4.]), tensor([1., 2.]))
>>> fnx.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2),
...                (fnx.tensor(0), fnx.tensor(1.0)))
(tensor(3), tensor(8.))
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..core.tensor import Tensor
from ..graph.tracer import contract_error, is_compiling
from ..core.pytree import flatten, unflatten
from ._program_op import JaxFunction
from ._traced import Traced, aval, fn_name, run

__all__ = ["cond", "while_loop"]


def _check_pred(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"cond: expected pred to be a bool or a tensor with a single "
                               f"item, but got a tensor of shape {list(pred.shape)}")
        return pred
    if isinstance(pred, (bool, int)):
        return bool(pred)
    raise RuntimeError(f"cond: expected pred to be a bool or a tensor, but got "
                       f"{type(pred).__name__}")


def _operands(operands, name):
    if isinstance(operands, Tensor):
        operands = (operands,)
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"{name}: expected the operands to be a tuple or list of tensors, "
                           f"got {type(operands).__name__}")
    leaves, _ = flatten(tuple(operands))
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{name}: expected the operands to be tensors (in tuples, "
                               f"lists or dicts), got {type(x).__name__}")
    return tuple(operands)


def _no_writes(traced, name, fn):
    if traced.written:
        raise contract_error(RuntimeError(
            f"{name}: `{fn_name(fn)}` modifies its inputs in place, which {name} does not "
            f"allow; return new tensors instead"))


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; compiled with a
    tensor ``pred``, one node choosing at run time (``jax.lax.cond``).

    >>> import fnx
    >>> fnx.cond(fnx.tensor(False), lambda x: x + 1, lambda x: x - 1, (fnx.tensor(1.0),))
    tensor(0.)
    """
    pred = _check_pred(pred)
    operands = _operands(operands, "cond")
    if not isinstance(pred, Tensor) or not is_compiling():
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    t = Traced(true_fn, operands, {}, "cond")
    f = Traced(false_fn, operands, {}, "cond")
    _no_writes(t, "cond", true_fn)
    _no_writes(f, "cond", false_fn)
    if t.out_tree != f.out_tree or t.out_metas != f.out_metas:
        raise contract_error(RuntimeError(
            f"cond: true_fn and false_fn must return outputs of the same structure, shapes "
            f"and dtypes, got {t.out_metas} and {f.out_metas}"))
    args = t.arg_tensors(operands, {})
    et, ef = t.extra_inputs(), f.extra_inputs()
    n, nt, n_out = len(args), len(et), t.n_user

    def fn(p, *rest):
        a, e1, e2 = rest[:n], rest[n:n + nt], rest[n + nt:]
        return jax.lax.cond(jnp.reshape(p, ()).astype(bool),
                            lambda a, e1, e2: t.fn(*a, *e1)[0][:n_out],
                            lambda a, e1, e2: f.fn(*a, *e2)[0][:n_out], a, e1, e2)

    inputs = [pred] + args + et + ef
    outs = run(_jax_function(fn, inputs, "cond"), inputs, n_out, ())
    return unflatten(t.out_tree, outs)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; return the final
    ``carried`` as a tuple; compiled, one node (``jax.lax.while_loop``).

    >>> import fnx
    >>> fnx.while_loop(lambda x: x.sum() < 10, lambda x: (x * 2,), (fnx.ones(2),))
    (tensor([8., 8.]),)
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"while_loop: carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs).__name__}")
    carried = _operands(carried_inputs, "while_loop")
    specs = [(tuple(x.shape), x.dtype) for x in flatten(carried)[0]]

    def check_body(out):
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        got = [(tuple(x.shape), x.dtype) if isinstance(x, Tensor) else type(x).__name__
               for x in flatten(out)[0]]
        if got != specs:
            raise RuntimeError(f"while_loop: body_fn must return values with the shapes and "
                               f"dtypes of carried_inputs {specs}, got {got}")
        return out

    if not is_compiling():
        while True:
            c = cond_fn(*carried)
            if not isinstance(c, (bool, Tensor)) or (isinstance(c, Tensor) and c.numel() != 1):
                raise RuntimeError("while_loop: cond_fn must return a bool or a tensor with "
                                   "a single item")
            if not bool(c):
                return tuple(carried)
            carried = check_body(body_fn(*carried))

    def cond_checked(*xs):
        out = cond_fn(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("while_loop: cond_fn must return a tensor with a single item "
                               "when compiled")
        return out

    def body_checked(*xs):
        return check_body(body_fn(*xs))

    c = Traced(cond_checked, carried, {}, "while_loop")
    b = Traced(body_checked, carried, {}, "while_loop")
    _no_writes(c, "while_loop", cond_fn)
    _no_writes(b, "while_loop", body_fn)
    args = b.arg_tensors(carried, {})
    ec, eb = c.extra_inputs(), b.extra_inputs()
    n, nc = len(args), len(ec)

    def fn(*rest):
        state, e1, e2 = tuple(rest[:n]), rest[n:n + nc], rest[n + nc:]
        return list(jax.lax.while_loop(
            lambda s: jnp.reshape(c.fn(*s, *e1)[0][0], ()).astype(bool),
            lambda s: tuple(o.astype(x.dtype) for o, x in zip(b.fn(*s, *e2)[0][:n], s)),
            state))

    inputs = args + ec + eb
    outs = run(_jax_function(fn, inputs, "while_loop"), inputs, n, ())
    return tuple(unflatten(flatten(carried)[1], outs))


def _jax_function(fn, inputs, what):
    return JaxFunction(fn, [aval(x) for x in inputs], what)
