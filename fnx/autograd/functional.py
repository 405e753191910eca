"""``fnx.autograd.functional``: derivatives of a Python function of tensors, as
``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and
``hvp``, written on ``autograd.grad`` (eager, differentiable again with
``create_graph=True``).

The rules are PyTorch's: ``inputs`` (and ``v``) is a tensor or a tuple of tensors, and a
result follows that shape (a tuple per input only when a tuple was given); ``strict=True``
raises where a derivative is independent of an input instead of giving zeros; results are
detached unless ``create_graph=True``. Forward-mode products (``jvp``, ``hvp``) use the
double-backward trick, as PyTorch's do. ``vectorize=True`` and the forward-mode
``strategy`` give the same numbers by the same loop over output elements (fnx's autograd
has no batched gradients).

>>> import fnx
>>> from fnx.autograd.functional import jacobian, hessian
>>> x = fnx.tensor([1.0, 2.0])
>>> jacobian(lambda x: x ** 2, x).tolist()
[[2.0, 0.0], [0.0, 4.0]]
>>> hessian(lambda x: (x ** 3).sum(), x).tolist()
[[6.0, 0.0], [0.0, 12.0]]
"""
from __future__ import annotations

from ..core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from ..ops import aten
from .engine import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> import fnx
    >>> out, g = fnx.autograd.functional.vjp(lambda x: x.exp(), fnx.zeros(2), fnx.ones(2))
    >>> out.tolist(), g.tolist()
    ([1.0, 1.0], [1.0, 1.0])
    """
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "vjp", create_graph)
        out_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "vjp")[1], create_graph, need_graph=False)
            _validate_v(v, outputs, out_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            got = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
            res = _fill_in_zeros(got, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), J v)``: the Jacobian-vector product at ``inputs`` (by the
    double-backward trick).

    >>> import fnx
    >>> out, t = fnx.autograd.functional.jvp(lambda x: x ** 2, fnx.tensor([3.0]),
    ...                                      fnx.tensor([1.0]))
    >>> out.tolist(), t.tolist()
    ([9.0], [6.0])
    """
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "jvp", create_graph)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "jvp")[1], create_graph, need_graph=False)
            _validate_v(v, inputs, in_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        out_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        # d/du (u^T J) v = J v, u a dummy cotangent
        dummies = tuple(aten.zeros_like.default(o).requires_grad_(True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        got = _autograd_grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _fill_in_zeros(got, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), out_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one output and one input, a tensor of
    shape ``output.shape + input.shape``; tuples of those when tuples are given.

    >>> import fnx
    >>> J = fnx.autograd.functional.jacobian(lambda a, b: a * b,
    ...                                      (fnx.tensor([2.0]), fnx.tensor([5.0])))
    >>> J[0].tolist(), J[1].tolist()
    ([[5.0]], [[2.0]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, "forward-mode" '
                         'tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("torch.autograd.functional.jacobian: `strategy=\"forward-"
                                  "mode\"` is only implemented for `vectorize=True`.")
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                  "and `strategy=\"forward-mode\"` are not supported together "
                                  "yet. Please either set `create_graph=False` or `strategy="
                                  "\"reverse-mode\"`.")
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "jacobian", create_graph)
        out_tuple, outputs = _outputs(func, inputs, "jacobian", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                got = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                     create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(got, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               f"allowed in strict mode.")
                        g = aten.zeros_like.default(inp)
                    rows[k].append(g)
            jac.append(tuple(
                _stack(r, inp).reshape(tuple(out.shape) + tuple(inp.shape))
                for r, inp in zip(rows, inputs)))
        jac = _finish(tuple(jac), create_graph)
    return _untuple2(jac, out_tuple, in_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs`` (the Jacobian of its
    gradient); a tuple of tuples when ``inputs`` is a tuple.

    >>> import fnx
    >>> H = fnx.autograd.functional.hessian(lambda x: (x[0] * x[1]) ** 2,
    ...                                     fnx.tensor([1.0, 2.0]))
    >>> H.tolist()
    [[8.0, 8.0], [8.0, 2.0]]
    """
    in_tuple, t_inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*inp):
        out = func(*inp)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*inp):
        jac = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac
    res = jacobian(gradient, t_inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple2(res, in_tuple, in_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T H)`` for a scalar ``func``.

    >>> import fnx
    >>> _, r = fnx.autograd.functional.vhp(lambda x: (x ** 3).sum(), fnx.tensor([1.0, 2.0]),
    ...                                    fnx.tensor([1.0, 1.0]))
    >>> r.tolist()
    [6.0, 12.0]
    """
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), H v)`` for a scalar ``func`` (by the double-backward trick).

    >>> import fnx
    >>> _, r = fnx.autograd.functional.hvp(lambda x: x[0] ** 2 * x[1],
    ...                                    fnx.tensor([1.0, 3.0]), fnx.tensor([1.0, 0.0]))
    >>> r.tolist()
    [6.0, 2.0]
    """
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(name, func, inputs, v, create_graph, strict):
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, name, create_graph)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", name)[1], create_graph, need_graph=False)
            _validate_v(v, inputs, in_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        out_tuple, outputs = _outputs(func, inputs, name, strict)
        if out_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError("The function given to hvp should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hvp should "
                               "contain a single element")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            if name == "vhp":
                got = _autograd_grad(jac, inputs, v, create_graph=create_graph)
                res = _fill_in_zeros(got, inputs, strict, create_graph, "double_back")
            else:       # H v = d/du (u^T H) v, u a dummy
                dummies = tuple(aten.zeros_like.default(i).requires_grad_(True)
                                for i in inputs)
                back = _autograd_grad(jac, inputs, dummies, create_graph=True)
                got = _autograd_grad(back, dummies, v, create_graph=create_graph)
                res = _fill_in_zeros(got, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), in_tuple))


# ----------------------------------------------------------------------------- helpers

def _as_tuple(value, arg_name, fn_name):
    """``(was a tuple, value as a tuple)``; every element must be a tensor."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor "
                                f"or a tuple of Tensors but the value at index {i} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the given {arg_name} has type "
                            f"{type(el)}.")
    return is_tuple, items


def _inputs(inputs, fn_name, create_graph):
    """``(was a tuple, the inputs as fresh leaves)`` (see ``_prepare``)."""
    is_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_tuple, _prepare(inputs, create_graph, need_graph=True)


def _outputs(func, inputs, fn_name, strict):
    """``(was a tuple, func(*inputs) as a tuple)``, checked in strict mode."""
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                  fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def _untuple(res, was_tuple):
    return res if was_tuple else res[0]


def _untuple2(res, out_tuple, in_tuple):
    if not in_tuple:
        res = tuple(r[0] for r in res)
    return res if out_tuple else res[0]


def _prepare(inputs, create_graph, need_graph):
    """Fresh leaves to differentiate at (a view keeping the graph when ``create_graph``
    and the input is part of one, so higher derivatives reach it)."""
    return tuple(aten.view_as.default(t, t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(res, create_graph):
    """Detach results unless a graph was asked for (nested tuples kept)."""
    if isinstance(res, Tensor):
        return res if create_graph else res.detach()
    return tuple(_finish(r, create_graph) for r in res)


def _validate_v(v, other, other_is_tuple):
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(other, v)):
        if tuple(a.shape) != tuple(b.shape):
            what = f"Entry {i} in v" if other_is_tuple else "v"
            raise RuntimeError(f"{what} has invalid size: should be {a.shape} but got "
                               f"{b.shape}.")


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The {kind} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            if kind == "outputs":
                raise RuntimeError(f"Output {i} of the user-provided function does not "
                                   f"require gradients. The outputs must be computed in a "
                                   f"differentiable manner from the input when running in "
                                   f"strict mode.")
            raise RuntimeError(f"The {kind} of the user-provided function with respect to "
                               f"input {i} is independent of the input. This is not allowed "
                               f"in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False,
                   retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None for each input when
    none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                 allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError({
                    "back": f"The output of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode.",
                    "back_trick": f"The gradient with respect to the input is independent "
                                  f"of entry {i} in the grad_outputs when using the double "
                                  f"backward trick to compute forward mode gradients. This "
                                  f"is not allowed in strict mode.",
                    "double_back": f"The jacobian of the user-provided function is "
                                   f"independent of input {i}. This is not allowed in strict "
                                   f"mode.",
                }.get(stage, f"The hessian of the user-provided function is independent of "
                             f"entry {i} in the grad_jacobian. This is not allowed in strict "
                             f"mode as it prevents from using the double backward trick to "
                             f"replace forward mode AD."))
            g = aten.zeros_like.default(ref)
        out.append(g)
    return tuple(out)


def _stack(rows, inp):
    return aten.stack.default(rows, 0) if rows else \
        aten.zeros.default([0, *inp.shape], dtype=inp.dtype, device=inp.device)
