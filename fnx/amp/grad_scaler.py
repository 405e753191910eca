"""``GradScaler``: loss scaling for float16 training, as ``torch.amp.GradScaler``.

float16 gradients of small magnitude underflow to zero. The scaler multiplies the loss by
a large factor before ``backward()`` so the gradients stay representable, divides them
back before the optimizer step, skips the step when any gradient is inf or NaN (the scale
was too large), and adapts the scale: ``backoff_factor`` after a skipped step,
``growth_factor`` after ``growth_interval`` good steps in a row.

The bookkeeping runs as tensor ops (``aten._amp_foreach_non_finite_check_and_unscale_``,
``aten._amp_update_scale_``), so the scale and the inf check stay on the device. Eagerly,
``step`` reads the inf flag (one host sync, as PyTorch); inside ``fnx.compile`` it never
does: the optimizer step runs and every parameter and optimizer state tensor is selected
between its old and new value by the flag, so the whole training step is one program.
"""
from __future__ import annotations

import enum
import warnings

from .. import api as fnx
from .. import compiler
from .. import cuda as _cuda

__all__ = ["GradScaler", "OptState"]

_aten = fnx.ops.aten


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/NaN gradients and adapt
    the scale, as ``torch.amp.GradScaler``.

    >>> import fnx
    >>> w = fnx.nn.Parameter(fnx.tensor([1.0]))
    >>> opt = fnx.optim.SGD([w], lr=0.5)
    >>> scaler = fnx.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> w.grad                              # scaled: 3 * 1024
    tensor([3072.])
    >>> scaler.step(opt); scaler.update()   # unscaled to 3 before the step
    >>> w.detach(), scaler.get_scale()
    (tensor([-0.5000]), 2048.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states: dict = {}

    # ------------------------------------------------------------------ helpers
    def _check_scale_growth_tracker(self, funcname: str):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev) -> None:
        # made outside any trace: the scale outlives a compiled step as real tensors
        with compiler.suspend_tracing():
            self._scale = fnx.full((), self._init_scale, dtype=fnx.float32, device=dev)
            self._growth_tracker = fnx.full((), self._init_growth_tracker, dtype=fnx.int32,
                                            device=dev)

    def _opt_state(self, optimizer):
        state = self._per_optimizer_states.get(id(optimizer))
        if state is None:
            state = self._per_optimizer_states[id(optimizer)] = _fresh_state()
        return state

    def _check_device(self, t, what):
        if t.device.type != self._device:
            raise RuntimeError(f"GradScaler(device={self._device!r}): {what} is on "
                               f"{t.device}, not on a {self._device} device; make the "
                               f"scaler with device={t.device.type!r}")

    # ------------------------------------------------------------------ the API
    def scale(self, outputs):
        """``outputs`` (a tensor or an iterable of tensors) times the scale factor."""
        if not self._enabled:
            return outputs

        def apply(val):
            if isinstance(val, fnx.Tensor):
                self._check_device(val, "the tensor to scale")
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if hasattr(val, "__iter__"):
                return map(apply, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device = {}
        with fnx.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == fnx.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    self._check_device(param.grad, "a gradient")
                    per_device.setdefault(param.grad.device, {}).setdefault(
                        param.grad.dtype, []).append(param.grad)
            found = {}
            for device, per_dtype in per_device.items():
                f = found_inf if device == found_inf.device else found_inf.to(device)
                inv = inv_scale if device == inv_scale.device else inv_scale.to(device)
                for grads in per_dtype.values():
                    _aten._amp_foreach_non_finite_check_and_unscale_(grads, f, inv)
                found[device] = f
        return found

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale (in place), recording whether any
        is inf or NaN; at most once per optimizer between two ``update()`` calls."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._opt_state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded, as PyTorch
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = fnx.full((), 0.0, dtype=fnx.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        found = list(state["found_inf_per_device"].values())
        if not compiler.is_compiling():
            if not sum(v.item() for v in found):
                return optimizer.step(*args, **kwargs)
            return None
        # Compiled: no host round-trip. Step, then keep the old values where inf was found.
        skip = found[0]
        for f in found[1:]:
            skip = skip + f.to(skip.device)
        skip = skip > 0
        params = [p for g in optimizer.param_groups for p in g["params"]]
        with fnx.no_grad():
            old = {id(p): p.detach().clone() for p in params}
            old_state = {(id(p), k): v.detach().clone()
                         for p in params for k, v in optimizer.state.get(p, {}).items()
                         if isinstance(v, fnx.Tensor)}
        retval = optimizer.step(*args, **kwargs)
        with fnx.no_grad():
            for p in params:
                p.copy_(fnx.where(skip.to(p.device), old[id(p)], p))
                for k, v in optimizer.state.get(p, {}).items():
                    if not isinstance(v, fnx.Tensor):
                        continue
                    # state the step created (first step) goes back to its zero start
                    before = old_state.get((id(p), k))
                    if before is None:
                        before = fnx.zeros_like(v)
                    v.copy_(fnx.where(skip.to(v.device), before, v))
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless ``unscale_`` ran) and run ``optimizer.step()`` unless a gradient
        was inf or NaN. Returns what ``optimizer.step`` returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._opt_state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Back off the scale if any step was skipped, grow it after ``growth_interval``
        good steps in a row; or set it to ``new_scale``."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [f.to(scale.device) for s in self._per_optimizer_states.values()
                          for f in s["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for f in found_infs[1:]:
                combined = combined + f
            _aten._amp_update_scale_(scale, tracker, combined, self._growth_factor,
                                     self._backoff_factor, self._growth_interval)
        # emptied, not replaced: a compiled step leaves the scaler's Python state as it was
        self._per_optimizer_states.clear()

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled); a host sync."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return (self._init_growth_tracker if self._growth_tracker is None
                else int(self._growth_tracker.item()))

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` as Python numbers (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_per_optimizer_states"] = {}
        return state
