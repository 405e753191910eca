"""What an op's schema says about its variants: whether it writes or aliases its arguments,
its functional twin (``add_.Tensor -> add.Tensor``), and how to write a value back
through a view it made (``select -> select_scatter``).

The ADInplaceOrView and Functionalize keys, autograd and the functional tracer all read
these; they depend on nothing but the op set.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import dtype as D
from ..core.grad_mode import is_grad_enabled
from ..dispatch.dispatcher import find_op, ops
from ..ops import aten

__all__ = ["is_view_op", "written_args", "functional_variant", "variants_of", "inverse_view",
           "bind_names", "Special", "VARIANTS", "check_writable", "write_result"]

# ``VARIANTS[functional op] = {"functional": op, "inplace": op_, "out": op.out}`` for op
# families defined together (the pointwise ones, ``fnx.ir.aten.elementwise``); other ops'
# variants are found by PyTorch's naming convention (``variants_of``).
VARIANTS: dict = {}


def is_view_op(op) -> bool:
    """The op returns an alias of its first argument (schema ``-> Tensor(a)``)."""
    rets = op.schema.returns
    return bool(rets) and not op.schema.is_mutable and any(
        r.type.alias is not None and not r.type.alias.is_write for r in rets)


def written_args(op):
    """Names of the arguments ``op`` writes (schema ``Tensor(a!)``)."""
    return [a.name for a in op.schema.arguments if a.is_write]


def check_writable(name: str, new, dst, resize: bool) -> None:
    """PyTorch's refusals for writing the result ``new`` of op ``name`` into ``dst`` (the
    meta functions, the CPU kernels and the functional passes, eager and traced, ask before
    writing): an in-place result must keep ``dst``'s shape (``out=`` is resized instead),
    and every result but ``copy_``'s must cast to ``dst``'s dtype without changing category
    (``int_tensor.add_(1.5)`` is an error, not a truncation)."""
    if not resize and tuple(new.shape) != tuple(dst.shape):
        raise RuntimeError(f"{name}: output with shape {list(dst.shape)} doesn't match "
                           f"the broadcast shape {list(new.shape)}")
    if name != "copy_" and not D.can_cast(new.dtype, dst.dtype):
        raise RuntimeError(f"{name}: result type {new.dtype.scalar_type} can't be cast "
                           f"to the desired output type {dst.dtype.scalar_type}")


def write_result(name, functional, self, *args, **kwargs):
    """``self`` overwritten with ``functional(self, ...)``: the in-place op ``name`` of an
    op with no in-place operator (``F.elu(x, inplace=True)``, ``x.deg2rad_()``).

    A derivative that saves its input would see that input overwritten by the write;
    computing on a copy when autograd records keeps what backward needs (PyTorch's
    in-place kernels save what they need themselves), so the gradient is the out-of-place
    form's.  A result ``self`` cannot hold is refused before anything is written."""
    src = self.clone() if self.requires_grad and is_grad_enabled() else self
    new = functional(src, *args, **kwargs)
    check_writable(name, new, self, resize=False)
    return self.copy_(new)


_FUNCTIONAL = {}


def _special_variants():
    """In-place ops whose functional form is not an overload of the same name."""

    def uniform(self, from_=0.0, to=1.0, *, generator=None):
        return aten.rand_like.default(self) * (to - from_) + from_

    def normal(self, mean=0.0, std=1.0, *, generator=None):
        return aten.randn_like.default(self) * std + mean

    def exponential(self, lambd=1.0, *, generator=None):
        return aten.log1p.default(-aten.rand_like.default(self)) * (-1.0 / lambd)

    def random_from(self, from_, to=None, *, generator=None):
        return aten.randint_like.low_dtype(self, from_, _full_range(self) if to is None else to)

    def random_to(self, to, *, generator=None):
        return aten.randint_like.low_dtype(self, 0, to)

    def random_full(self, *, generator=None):
        return aten.randint_like.low_dtype(self, 0, _full_range(self))

    return {"zero_": lambda self: aten.zeros_like.default(self),
            "detach_": lambda self: aten.detach.default(self),
            "uniform_": uniform, "normal_": normal, "exponential_": exponential,
            "random_.from": random_from, "random_.to": random_to, "random_": random_full}


def _full_range(t) -> int:
    """The exclusive upper bound of ``random_()``: 2**mantissa + 1 for floats, the dtype's
    maximum for integers (PyTorch samples [0, 2**mantissa] and [0, max])."""
    d = t.dtype
    if d.is_floating_point:     # ml_dtypes: np.finfo does not know bfloat16
        return 2 ** (ml_dtypes.finfo(d.numpy).nmant + 1) + 1
    if d.name == "bool":
        return 2
    return int(np.iinfo(d.numpy).max)


def functional_variant(op):
    """The op computing what in-place/out= ``op`` writes: ``add_.Tensor -> add.Tensor``,
    ``add.out -> add.Tensor`` (the overload whose arguments match, minus ``out``)."""
    if op in _FUNCTIONAL:
        return _FUNCTIONAL[op]
    written = set(written_args(op))
    if not written <= {"self", "out"}:
        # writes other arguments (batch norm's running stats): no functional twin by
        # name; such an op is functionalized through its decomposition
        _FUNCTIONAL[op] = None
        return None
    name = op.name[:-1] if op.name.endswith("_") else op.name
    want = [(a.name, str(a.type).replace("(a!)", "").replace("(b!)", ""))
            for a in op.schema.arguments if a.name not in written or a.name == "self"]
    found = None
    packet = getattr(ops.namespace(op.namespace), name, None)
    for cand in (packet.overloads() if packet is not None else []):
        c = getattr(packet, cand)
        if c is op or c.schema.is_mutable:
            continue
        if [(a.name, str(a.type)) for a in c.schema.arguments] == want:
            found = c
            break
    if found is None:
        special = _special_variants().get(op.qualname.split("::")[1])
        if special is not None:
            found = Special(special)
    _FUNCTIONAL[op] = found
    return found


class Special:
    """A Python function standing in for the functional op (called with all arguments)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def inverse_view(op, parent, new, args, kwargs, index=None):
    """``parent`` with the region that view ``op(parent, *args)`` covers replaced by ``new``."""
    name = op.name
    a = bind_names(op, (parent,) + tuple(args), kwargs)
    if name in ("alias", "detach", "contiguous"):
        return new
    if name in ("view", "_unsafe_view", "reshape", "reshape_as", "view_as", "flatten",
                "unflatten", "squeeze", "unsqueeze"):
        return aten.reshape.default(new, list(parent.shape))
    if name == "permute":
        perm = [d % parent.ndim for d in a["dims"]]
        return aten.permute.default(new, sorted(range(len(perm)), key=perm.__getitem__))
    if name in ("transpose", "swapaxes", "swapdims"):
        d0, d1 = [v for k, v in a.items() if k != "self"][:2]
        return aten.transpose.int(new, d0, d1)
    if name == "t":
        return aten.t.default(new)
    if name == "movedim":
        return aten.movedim.intlist(new, _as_list(a["destination"]), _as_list(a["source"]))
    if name == "select":
        return aten.select_scatter.default(parent, new, a["dim"], a["index"])
    if name == "slice":
        return aten.slice_scatter.default(parent, new, a["dim"], a["start"], a["end"],
                                          a["step"])
    if name == "narrow":
        start = a["start"] if a["start"] >= 0 else a["start"] + parent.shape[a["dim"]]
        return aten.slice_scatter.default(parent, new, a["dim"], start, start + a["length"])
    if name == "diagonal":
        return aten.diagonal_scatter.default(parent, new, a["offset"], a["dim1"], a["dim2"])
    if name in ("split", "split_with_sizes", "chunk", "unbind"):
        return _inverse_split(op, parent, new, a, index)
    if name in ("real", "imag", "resolve_conj") and not parent.dtype.is_complex:
        return new                      # the tensor itself (imag refuses real tensors)
    if name == "real":
        return aten.complex.default(new, aten.imag.default(parent))
    if name == "imag":
        return aten.complex.default(aten.real.default(parent), new)
    if name == "resolve_conj":
        return new
    raise NotImplementedError(
        f"functionalize: writing through a view made by {op.qualname} is not supported "
        f"(PyTorch forbids it for expand; as_strided/unfold/view_as_* are not handled)")


def _inverse_split(op, parent, new, a, index):
    dim = a["dim"] % max(parent.ndim, 1)
    if op.name == "unbind":
        return aten.select_scatter.default(parent, new, dim, index)
    size = parent.shape[dim]
    if op.name == "split_with_sizes":
        sizes = list(a["split_sizes"])
    else:
        step = a["split_size"] if op.name == "split" else -(-size // a["chunks"])
        sizes = [min(step, size - s) for s in range(0, size, step)] if step else [0]
    start = sum(sizes[:index])
    return aten.slice_scatter.default(parent, new, dim, start, start + sizes[index])


def bind_names(op, args, kwargs) -> dict:
    """``{argument name: value}`` for a call of ``op``, defaults filled in (no type checks,
    so graph nodes may stand in for tensors)."""
    params = op.schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    out = {a.name: v for a, v in zip(positional, args)}
    out.update(kwargs)
    for a in params:
        if a.name not in out and a.has_default:
            out[a.name] = a.default
    return out


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def variants_of(op) -> dict:
    """``{"inplace": op_, "out": op.out}`` for a functional op (those that exist).

    Pointwise ops list theirs in ``VARIANTS``; for other ops the
    PyTorch naming convention is followed: ``name_.overload`` and ``name.out`` (for the
    ``default``/``Tensor`` overload) or ``name.<overload>_out``, each with the functional
    op's arguments (plus ``out``)."""
    fam = VARIANTS.get(op)
    if fam is not None:
        return {k: v for k, v in fam.items() if k != "functional"}
    if "inplace" in op.tags or "out" in op.tags or op.name.endswith("_"):
        return {}
    out = {}
    ov = op.overload_name
    suffix = "" if ov == "default" else f".{ov}"
    names = [a.name for a in op.schema.arguments]
    inp = find_op(f"{op.namespace}::{op.name}_{suffix}")
    if inp is not None and [a.name for a in inp.schema.arguments] == names:
        out["inplace"] = inp
    for cand in ([f"{ov}_out"] + (["out"] if ov in ("default", "Tensor") else [])):
        o = find_op(f"{op.namespace}::{op.name}.{cand}")
        if o is not None and [a.name for a in o.schema.arguments] == names + ["out"]:
            out["out"] = o
            break
    return out
