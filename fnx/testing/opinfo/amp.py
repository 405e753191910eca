"""OpInfo entries for GradScaler's ops (``fnx/ir/aten/amp.py``).

``_amp_update_scale_`` returns the scale it wrote, so the reference check compares the new
scale; the growth tracker it also writes, and the gradients and flag that
``_amp_foreach_non_finite_check_and_unscale_`` writes (it returns nothing), are compared
against NumPy in ``tests/test_grad_scaler.py``. Neither is differentiable: they update
optimizer-side state.
"""
from __future__ import annotations

import numpy as np

import fnx

from ...core import dtype as D
from ...ops import aten
from ..database import FLOATS, ErrorInput, OpInfo, SampleInput, make_tensor, register

_NOT_DIFF = {"grad": "updates GradScaler's state; not differentiable"}


def _scalar(value, dtype, device):
    t = fnx.tensor(value, dtype=dtype)
    return t if str(device) == "cpu" else t.to(device)


# --------------------------------------------------------------------------- unscale

def _unscale_samples(info, device, dtype):
    grads = [make_tensor((3, 4), dtype, device), make_tensor((5,), dtype, device)]
    yield SampleInput(grads, _scalar(0.0, D.float32, device), _scalar(0.125, D.float32, device))
    bad = make_tensor((2, 2), dtype, device)
    bad[0, 1] = float("inf")
    yield SampleInput([bad], _scalar(0.0, D.float32, device), _scalar(0.5, D.float32, device))
    yield SampleInput([], _scalar(0.0, D.float32, device), _scalar(2.0, D.float32, device))


def _unscale_ref(grads, found_inf, inv_scale):
    return ()


def _unscale_errors(info, device):
    g = [make_tensor((2,), D.float32, device)]
    f, inv = _scalar(0.0, D.float32, device), _scalar(1.0, D.float32, device)
    yield ErrorInput(SampleInput(g, _scalar([0.0, 0.0], D.float32, device), inv),
                     match="found_inf must be a 1-element tensor")
    yield ErrorInput(SampleInput(g, f, _scalar(1.0, D.float64, device)),
                     match="inv_scale must be a Float tensor")
    yield ErrorInput(SampleInput([make_tensor((2,), D.int64, device)], f, inv),
                     match="must be floating point")


# --------------------------------------------------------------------------- update

def _update_samples(info, device, dtype):
    for scale, tracker, found, interval in ((1024.0, 0, 0.0, 3), (1024.0, 2, 0.0, 3),
                                            (1024.0, 2, 1.0, 3), (3e38, 0, 0.0, 1),
                                            (2.0, 5, 0.0, 2000)):
        yield SampleInput(_scalar(scale, D.float32, device), _scalar(tracker, D.int32, device),
                          _scalar(found, D.float32, device), 2.0, 0.5, interval)


def _update_ref(scale, tracker, found, growth, backoff, interval):
    if found:
        return np.float32(scale * backoff)
    if tracker + 1 == interval:
        grown = np.float32(scale) * np.float32(growth)
        return grown if np.isfinite(grown) else np.float32(scale)
    return np.float32(scale)


def _update_errors(info, device):
    s, t, f = (_scalar(1.0, D.float32, device), _scalar(0, D.int32, device),
               _scalar(0.0, D.float32, device))
    yield ErrorInput(SampleInput(s, _scalar(0, D.int64, device), f, 2.0, 0.5, 1),
                     match="growth_tracker must be a Int tensor")
    yield ErrorInput(SampleInput(_scalar(1.0, D.float64, device), t, f, 2.0, 0.5, 1),
                     match="current_scale must be a Float tensor")


register(
    OpInfo(aten._amp_foreach_non_finite_check_and_unscale_.default, _unscale_ref, FLOATS,
           _unscale_samples, error_inputs=_unscale_errors, skips=dict(_NOT_DIFF)),
    OpInfo(aten._amp_update_scale_.default, _update_ref, (D.float32,), _update_samples,
           error_inputs=_update_errors, skips=dict(_NOT_DIFF)),
)
