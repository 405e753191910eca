"""The JAX lowering of the ``_c10d_functional`` collectives, so a compiled program that
calls them (a DDP training step) is one XLA program with the collectives inside.

Each rule is the collective over the group's mesh axis (``psum``, ``all_gather``,
``psum_scatter``, ``all_to_all``), the same bodies the eager collectives run
(``collectives._body``); each op's mesh rule names the group's mesh, so the program runs
as one SPMD program over it (``fnx.lower.jax_spmd``): every process runs it on its own
values, XLA moves the data between them (gloo on CPU, NCCL on GPU). An all-to-all with
uneven splits has no rule: it runs eagerly between compiled regions.
"""
from __future__ import annotations

import jax.numpy as jnp

from ..lower.jax import JAX_TARGET
from ..lower.jax_spmd import mesh_rules, node_checks
from .collectives import _body
from .functional_ops import OPS
from .process_group import group_by_name

__all__ = ["RULES"]


def _reduce(x, red, n):
    if x.dtype == jnp.bool_:
        return _body("reduce", (red,), n)(x.astype(jnp.int32)) != 0
    return _body("reduce", (red,), n)(x)


def all_reduce(x, reduce_op, group_name):
    return _reduce(x, reduce_op, group_by_name(group_name).size())


def broadcast(x, src, group_name):
    pg = group_by_name(group_name)
    body = _body("broadcast", (pg.ranks.index(src),), pg.size())
    if x.dtype == jnp.bool_:
        return body(x.astype(jnp.int32)) != 0
    return body(x)


def all_gather_into_tensor(x, group_size, group_name):
    stacked = _body("gather", (), group_size)(x)        # (group_size, *x.shape)
    return stacked.reshape((-1,) + x.shape[1:]) if x.ndim else stacked


def reduce_scatter_tensor(x, reduce_op, group_size, group_name):
    if x.dtype == jnp.bool_:
        return _body("reduce_scatter", (reduce_op,), group_size)(x.astype(jnp.int32)) != 0
    return _body("reduce_scatter", (reduce_op,), group_size)(x)


def all_to_all_single(x, output_split_sizes, input_split_sizes, group_name):
    return _body("all_to_all", (), group_by_name(group_name).size())(x)


def _even_splits(node):
    """An all-to-all lowers when its chunks are equal (no split sizes, or equal ones)."""
    x, outs, ins = node.args[:3]
    n = group_by_name(node.args[3]).size()
    rows = x.meta.shape[0] if x.meta.shape else 0
    even = [rows // n] * n if rows % n == 0 else None
    return all(not s or list(s) == even for s in (outs, ins))


RULES = {"all_reduce": all_reduce, "broadcast": broadcast,
         "all_gather_into_tensor": all_gather_into_tensor,
         "reduce_scatter_tensor": reduce_scatter_tensor,
         "all_to_all_single": all_to_all_single}

for _name, _rule in RULES.items():
    _op = getattr(OPS, _name).default
    JAX_TARGET.rules[_op] = _rule
    mesh_rules[_op] = (lambda *args, **kwargs: group_by_name(args[-1]).mesh)
node_checks[OPS.all_to_all_single.default] = _even_splits
JAX_TARGET.rules[OPS.wait_tensor.default] = lambda x: x
