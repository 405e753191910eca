"""The CTC forward recursion as one prim, so a compiled ``ctc_loss`` is one loop
(``jax.lax.scan``) rather than a copy of the step per time frame (whose compile time grows
faster than the number of frames).

``ctc_alpha(alpha0, emit, skip, active)`` runs, for ``t`` in ``range(T)``, over the
extended-label states ``s`` (last dim ``W``) of every batch row::

    new[s] = logsumexp(alpha[s], alpha[s-1], alpha[s-2] if skip[s]) + emit[t, s]
    alpha  = new where active[t] else alpha

(states before 0 are log 0) and returns the last ``alpha``. ``alpha0`` is ``(N, W)``,
``emit`` ``(T, N, W)`` (the same floating dtype), ``skip`` ``(N, W)`` bool, ``active``
``(T, N)`` bool. The inputs are expected finite (``ctc_loss`` uses a large negative number
for log 0), so every state has a finite term (``alpha[s]`` itself).

Its derivative is ``ctc_alpha_backward``, whose own derivative is not provided: it raises.
"""
from __future__ import annotations

from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import prim
from .checks import FLOAT, check_category, check_tensor, fail

__all__ = ["ctc_alpha", "ctc_alpha_backward"]


def _check(name, alpha0, emit, skip, active):
    for arg, t in (("alpha0", alpha0), ("emit", emit), ("skip", skip), ("active", active)):
        check_tensor(name, arg, t)
    check_category(name, alpha0, FLOAT, "alpha0")
    if emit.dtype != alpha0.dtype:
        raise fail(name, f"emit has dtype {emit.dtype}, alpha0 has {alpha0.dtype}")
    if skip.dtype.name != "bool" or active.dtype.name != "bool":
        raise fail(name, "skip and active must be bool tensors")
    if alpha0.ndim != 2 or emit.ndim != 3:
        raise fail(name, f"alpha0 must be (N, W) and emit (T, N, W), got "
                         f"{list(alpha0.shape)} and {list(emit.shape)}")
    steps, n, w = emit.shape
    for arg, t, shape in (("alpha0", alpha0, (n, w)), ("skip", skip, (n, w)),
                          ("active", active, (steps, n))):
        if tuple(t.shape) != shape:
            raise fail(name, f"{arg} must be {list(shape)}, got {list(t.shape)}")


def _ctc_alpha_meta(alpha0, emit, skip, active):
    _check("ctc_alpha", alpha0, emit, skip, active)
    return TensorMeta(tuple(alpha0.shape), alpha0.dtype)


ctc_alpha = prim("ctc_alpha(Tensor alpha0, Tensor emit, Tensor skip, Tensor active) -> Tensor",
                 _ctc_alpha_meta)


def _ctc_alpha_backward_meta(grad, alpha0, emit, skip, active):
    _check("ctc_alpha_backward", alpha0, emit, skip, active)
    check_tensor("ctc_alpha_backward", "grad", grad)
    if tuple(grad.shape) != tuple(alpha0.shape) or grad.dtype != alpha0.dtype:
        raise fail("ctc_alpha_backward", f"grad must be {list(alpha0.shape)} {alpha0.dtype}, "
                                         f"got {list(grad.shape)} {grad.dtype}")
    return (TensorMeta(tuple(alpha0.shape), alpha0.dtype),
            TensorMeta(tuple(emit.shape), emit.dtype))


ctc_alpha_backward = prim(
    "ctc_alpha_backward(Tensor grad, Tensor alpha0, Tensor emit, Tensor skip, Tensor active) "
    "-> (Tensor grad_alpha0, Tensor grad_emit)", _ctc_alpha_backward_meta)


@derivative(ctc_alpha)
def _ctc_alpha_derivative(grad, alpha0, emit, skip, active):
    g_alpha0, g_emit = _p.ctc_alpha_backward(grad, alpha0, emit, skip, active)
    return g_alpha0, g_emit, None, None


@derivative(ctc_alpha_backward)
def _ctc_alpha_double_backward(grads):
    raise RuntimeError("prims.ctc_alpha_backward: a second-order gradient through ctc_loss "
                       "is not supported")
