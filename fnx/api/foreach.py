"""``torch._foreach_*``: an op applied to each tensor of a list (``_foreach_add``,
``_foreach_lerp_``, ``_foreach_norm``, ...), as exponential-moving-average and optimizer
code calls them.

PyTorch fuses each into a few multi-tensor kernels; here each is its per-tensor op in a
loop, so eager results, autograd and traces are those of the per-tensor ops (a compiled
function fuses them anyway). Every name has its functional form (a new list) and, where
PyTorch has one, its in-place form ``_foreach_<op>_``. The second argument takes the
forms of PyTorch's overloads: a number (``.Scalar``), a list of numbers
(``.ScalarList``), a list of tensors (``.List``) or one 0-dim tensor (``.Tensor``).

An in-place form computes every result first and checks that each tensor can hold its
result before writing any: bad input raises with every tensor unchanged.

>>> import fnx
>>> ema, live = [fnx.zeros(2), fnx.ones(3)], [fnx.ones(2), fnx.full((3,), 3.0)]
>>> _ = fnx._foreach_lerp_(ema, live, 0.5)
>>> [t.tolist() for t in ema]
[[0.5, 0.5], [2.0, 2.0, 2.0]]
>>> [n.item() for n in fnx._foreach_norm([fnx.tensor([3.0, 4.0])])]
[5.0]
"""
from __future__ import annotations

import numbers

from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from ..ir.variants import check_writable
from ..ops import aten
from . import math as _math

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp",
          "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
          "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan",
          "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow")
_WITH_ALPHA = ("add", "sub")        # (their .List and .Tensor overloads take alpha)
_TERNARY = ("addcmul", "addcdiv", "lerp")

__all__ = [f"_foreach_{n}{s}" for n in _UNARY + _BINARY + _TERNARY for s in ("", "_")] + \
    ["_foreach_zero_", "_foreach_copy_", "_foreach_norm", "_foreach_max"]


def _check_list(name, tensors):
    if not isinstance(tensors, (list, tuple)) or \
            not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{name}(): argument 'tensors' must be a list of tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name}: Tensor list must have at least one tensor.")


def _per_tensor(name, tensors, other):
    """``other`` as one value per tensor of ``tensors`` (PyTorch's overloads)."""
    if isinstance(other, (list, tuple)):
        if all(isinstance(o, Tensor) for o in other):
            if len(other) != len(tensors):
                raise RuntimeError(f"{name}: Tensor lists must have the same number of "
                                   f"tensors, got {len(tensors)} and {len(other)}.")
        elif not all(isinstance(o, numbers.Number) for o in other):
            raise TypeError(f"{name}(): a list argument must hold only tensors or only "
                            f"numbers")
        elif len(other) != len(tensors):
            raise RuntimeError(f"{name}: Tensor list must have same number of elements as "
                               f"scalar list, got {len(tensors)} and {len(other)}.")
        return list(other)
    if isinstance(other, Tensor) and (other.ndim != 0 or other.numel() != 1):
        raise RuntimeError(f"{name}: scalar tensor expected to be 0 dim but it has "
                           f"{other.ndim} dimensions and {other.numel()} elements.")
    return [other] * len(tensors)


def _write(name, tensors, results):
    """Write ``results`` into ``tensors``, having checked that every write can be done."""
    for t, r in zip(tensors, results):
        if is_grad_enabled() and t.requires_grad and t.is_leaf:
            raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in "
                               f"an in-place operation.")
        check_writable(name, r, t, resize=False)
    for t, r in zip(tensors, results):
        t.copy_(r)


def _sources(tensors):
    # a result computed from the tensor it overwrites: a copy where autograd saves it
    return [t.clone() if t.requires_grad and is_grad_enabled() else t for t in tensors]


def _unary(op):
    name = f"_foreach_{op}"

    def functional(tensors):
        _check_list(name, tensors)
        return [getattr(t, op)() for t in tensors]

    def inplace(tensors):
        _check_list(name + "_", tensors)
        _write(name + "_", tensors, [getattr(t, op)() for t in _sources(tensors)])

    return functional, inplace


def _binary(op):
    name = f"_foreach_{op}"

    def apply(tensors, other, alpha, nm):
        _check_list(nm, tensors)
        others = _per_tensor(nm, tensors, other)
        if alpha != 1 and (op not in _WITH_ALPHA or not (
                isinstance(other, Tensor) or isinstance(other, (list, tuple)) and
                all(isinstance(o, Tensor) for o in other))):
            raise TypeError(f"{nm}(): alpha is taken with a tensor or a list of tensors only")
        kw = {"alpha": alpha} if op in _WITH_ALPHA and alpha != 1 else {}
        return [getattr(t, op)(o, **kw) for t, o in zip(tensors, others)]

    def functional(tensors, other, *, alpha=1):
        if op == "pow" and isinstance(tensors, numbers.Number):    # .ScalarAndTensor
            _check_list(name, other)
            return [_math.pow(tensors, t) for t in other]
        return apply(tensors, other, alpha, name)

    def inplace(tensors, other, *, alpha=1):
        _check_list(name + "_", tensors)
        _write(name + "_", tensors, apply(_sources(tensors), other, alpha, name + "_"))

    return functional, inplace


def _ternary(op):
    name = f"_foreach_{op}"

    def apply(tensors, a, b, value, nm):
        _check_list(nm, tensors)
        if op == "lerp":        # (tensors, ends, weight): weight a number, list or tensors
            ends, weights = _per_tensor(nm, tensors, a), _per_tensor(nm, tensors, b)
            return [t.lerp(e, w) for t, e, w in zip(tensors, ends, weights)]
        firsts, seconds = _per_tensor(nm, tensors, a), _per_tensor(nm, tensors, b)
        if isinstance(value, Tensor):   # (.Tensor: a 1-D tensor, one value per tensor)
            if value.ndim != 1 or value.numel() != len(tensors):
                raise RuntimeError(f"{nm}: Expected scalars to be a 1-D tensor of "
                                   f"{len(tensors)} values, got shape {list(value.shape)}")
            values = value.tolist()
        else:
            values = _per_tensor(nm, tensors, value)
        return [getattr(t, op)(x, y, value=v)
                for t, x, y, v in zip(tensors, firsts, seconds, values)]

    def functional(tensors, tensor1, tensor2, value=1):
        return apply(tensors, tensor1, tensor2, value, name)

    def inplace(tensors, tensor1, tensor2, value=1):
        _write(name + "_", tensors, apply(_sources(tensors), tensor1, tensor2, value, name + "_"))

    return functional, inplace


def _foreach_zero_(tensors):
    """Zero every tensor of ``tensors`` in place.

    >>> import fnx
    >>> xs = [fnx.ones(2), fnx.ones(())]
    >>> fnx._foreach_zero_(xs)
    >>> [x.tolist() for x in xs]
    [[0.0, 0.0], 0.0]
    """
    _check_list("_foreach_zero_", tensors)
    for t in tensors:
        t.zero_()


def _foreach_copy_(tensors, src, non_blocking=False):
    """Copy each tensor of ``src`` into the tensor at its place in ``tensors``.

    >>> import fnx
    >>> xs = [fnx.zeros(2), fnx.zeros(())]
    >>> fnx._foreach_copy_(xs, [fnx.tensor([1, 2]), fnx.tensor(3.5)])
    >>> [x.tolist() for x in xs]
    [[1.0, 2.0], 3.5]
    """
    _check_list("_foreach_copy_", tensors)
    srcs = _per_tensor("_foreach_copy_", tensors, src)
    _write("_foreach_copy_", tensors, [s.to(t.dtype) if isinstance(s, Tensor) else s
                                    for t, s in zip(tensors, srcs)])


def _foreach_norm(tensors, ord=2, dtype=None):
    """The ``ord``-norm of each tensor of ``tensors`` (0-dim tensors), as
    ``torch.linalg.vector_norm``.

    >>> import fnx
    >>> [n.item() for n in fnx._foreach_norm([fnx.tensor([3.0, -4.0])], 1)]
    [7.0]
    """
    _check_list("_foreach_norm", tensors)
    return [aten.linalg_vector_norm.default(t, ord, None, False, dtype=dtype) for t in tensors]


def _foreach_max(tensors):
    """The largest element of each tensor of ``tensors`` (0-dim tensors).

    >>> import fnx
    >>> [m.item() for m in fnx._foreach_max([fnx.tensor([3.0, -4.0]), fnx.tensor(1.0)])]
    [3.0, 1.0]
    """
    _check_list("_foreach_max", tensors)
    return [t.max() for t in tensors]


# the arguments after the list in each family's docstring example
_EXAMPLE_ARGS = {_unary: "", _binary: ", 0.5", _ternary: ", xs, 0.5"}


def _doc(op, name, builder) -> str:
    """A generated form's docstring: its example checks it against the per-tensor op."""
    more = _EXAMPLE_ARGS[builder]
    each = f"x.{op}({more[2:].replace('xs', 'x')})"
    if name.endswith("_"):
        run = (f">>> ys = [x.clone() for x in xs]\n"
               f">>> fnx.{name}(ys{more})\n"
               f">>> [bool(y.equal({each})) for y, x in zip(ys, xs)]")
    else:
        run = f">>> [bool(y.equal({each})) for y, x in zip(fnx.{name}(xs{more}), xs)]"
    return (f"``Tensor.{op}`` of each tensor of a list"
            f"{', in place' if name.endswith('_') else ''} (``torch.{name}``).\n\n"
            f">>> import fnx\n"
            f">>> xs = [fnx.tensor([0.25, 0.5]), fnx.tensor(0.75)]\n"
            f"{run}\n[True, True]\n")


def _install():
    made = {}
    for names, builder in ((_UNARY, _unary), (_BINARY, _binary), (_TERNARY, _ternary)):
        for op in names:
            functional, inplace = builder(op)
            for fn, name in ((functional, f"_foreach_{op}"), (inplace, f"_foreach_{op}_")):
                fn.__name__ = fn.__qualname__ = name
                fn.__doc__ = _doc(op, name, builder)
                made[name] = fn
    globals().update(made)


_install()
