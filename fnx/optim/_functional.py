"""Small in-place update helpers shared by the optimizers (no ``.item()``: every value
stays a tensor or a Python constant, so the updates trace)."""
from __future__ import annotations

from .. import compiler
from ..api.creation import zeros
from ..core.dtype import float32, float64
from ..core.tensor import Tensor


def add_scaled_(t: Tensor, other: Tensor, scale) -> Tensor:
    """``t += scale * other`` where ``scale`` is a number or a 0-dim tensor."""
    if isinstance(scale, Tensor):
        return t.add_(other * scale)
    return t.add_(other, alpha=scale)


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t += weight * (end - t)`` (``Tensor.lerp_``, as PyTorch's optimizers)."""
    return t.lerp_(end, weight)


def addcmul_(t: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    """``t += value * a * b`` (``Tensor.addcmul_``)."""
    return t.addcmul_(a, b, value=value)


def check(name: str, ok: bool, value) -> None:
    if not ok:
        raise ValueError(f"Invalid {name}: {value}")


def check_lr(lr) -> None:
    if isinstance(lr, Tensor):
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        return
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_adam_args(lr, betas, eps, weight_decay) -> None:
    """PyTorch's argument checks of the Adam family (Adam, AdamW, Adamax, NAdam, RAdam)."""
    check_lr(lr)
    check("epsilon value", 0.0 <= eps, eps)
    check("beta parameter at index 0", 0.0 <= betas[0] < 1.0, betas[0])
    check("beta parameter at index 1", 0.0 <= betas[1] < 1.0, betas[1])
    check("weight_decay value", 0.0 <= weight_decay, weight_decay)


def make_state(state: dict, p: Tensor, **factories) -> dict:
    """Fill ``state`` (one parameter's) on its first step: each ``factories`` value is
    called to make the tensor of that name. Made outside a compiled step's trace, on real
    tensors, since the state outlives it; ``step`` is a float32 0-dim tensor as PyTorch's."""
    if "step" not in state:
        with compiler.suspend_tracing():
            state["step"] = zeros((), dtype=float32, device=p.device)
            for name, make in factories.items():
                state[name] = make()
    return state


def as_float64(step: Tensor) -> Tensor:
    """The step count in float64: powers such as ``beta ** step`` lose digits in float32,
    and 0-dim results do not change the parameters' dtype."""
    return step.to(float64)
