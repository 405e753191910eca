"""OpInfo entries for the padding ops (fnx/ir/aten/nn/padding.py), against ``np.pad``."""
from __future__ import annotations

import numpy as np

from ....core import dtype as D
from ....ops import aten
from ...database import ErrorInput, OpInfo, SampleInput, register
from ._common import FI, _t


def np_pad(x, pad, mode="constant", value=0.0):
    """``pad`` lists (before, after) per dim from the last one; negative amounts crop."""
    # e.g. circular: np_pad(np.arange(5.), [-1, 2], "circular") -> [1, 2, 3, 4, 1, 2]
    nd = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - nd) + [(pad[2 * i], pad[2 * i + 1])
                                        for i in reversed(range(nd))]
    grow = [(max(a, 0), max(b, 0)) for a, b in widths]
    if mode == "circular":
        # PyTorch crops first and wraps what is left (pad (-1, 2) of [0..4] is 1 2 3 4 1 2)
        core = x[tuple(slice(max(-a, 0), x.shape[i] - max(-b, 0))
                       for i, (a, b) in enumerate(widths))]
        return np.pad(core, grow, mode="wrap")
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    kw = {"constant_values": value} if mode == "constant" else {}
    r = np.pad(x, grow, mode=np_mode, **kw)
    crop = tuple(slice(max(-a, 0), r.shape[i] - max(-b, 0)) for i, (a, b) in
                 enumerate(widths))
    return r[crop]


def _pad_nd_ref(mode):
    def ref(x, padding):
        return np_pad(x, list(padding), mode)
    return ref


def _pad_nd_samples(nd, reflect):
    def samples(info, device, dtype):
        sp = (4, 5, 3)[:nd]
        pad = [2, 1, 0, 3, 1, 2][:2 * nd]
        yield SampleInput(_t((2, 3) + sp, dtype, device), pad)
        yield SampleInput(_t((3,) + sp, dtype, device, noncontiguous=True), pad)   # unbatched
        yield SampleInput(_t((0, 2) + sp, dtype, device), pad)
        neg = [-1, 1, 1, -2, 0, 1][:2 * nd]
        yield SampleInput(_t((1, 2) + sp, dtype, device), neg)
        if not reflect:      # replication may repeat an edge more than the size
            yield SampleInput(_t((1, 2) + (1,) * nd, dtype, device), [3] * (2 * nd))
    return samples


def _pad_nd_errors(nd, reflect):
    name = f"{'reflection' if reflect else 'replication'}_pad{nd}d"

    def errors(info, device):
        sp = (3,) * nd
        yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [1] * (2 * nd + 2)),
                         RuntimeError, f"{name}: padding size is expected to be {2 * nd}")
        yield ErrorInput(SampleInput(_t(sp, D.float32, device), [1] * (2 * nd)),
                         RuntimeError, f"expected {nd + 1}D or {nd + 2}D")
        if reflect:
            yield ErrorInput(SampleInput(_t((1, 1) + sp, D.float32, device), [3] * (2 * nd)),
                             RuntimeError, "Padding size should be less than the "
                                           "corresponding input dimension")
        else:
            yield ErrorInput(SampleInput(_t((1, 1) + (0,) * nd, D.float32, device),
                                         [1] * (2 * nd)), RuntimeError, "non-zero")
    return errors


def _pad_ref(x, pad, mode="constant", value=None):
    return np_pad(x, list(pad), mode, 0.0 if value is None else value)


def _pad_samples(info, device, dtype):
    def t(*shape, **kw):
        return _t(shape, dtype, device, **kw)
    yield SampleInput(t(2, 3, 4), [1, 2])
    yield SampleInput(t(2, 3, 4), [1, 0, -1, 2], "constant", 2.5 if dtype.is_floating_point
                      else 3.0)
    yield SampleInput(t(2, 3, 2), [1, 1, 0, 2, 1, 0])               # pads every dim
    yield SampleInput(t(1, 2, 4, 5), [2, 1, 0, 3], "reflect")
    yield SampleInput(t(2, 5), [1, 2], "replicate")
    yield SampleInput(t(1, 2, 3, 4, 2), [1, 1, 2, 0, 0, 1], "replicate")
    yield SampleInput(t(1, 2, 4, 5, noncontiguous=True), [2, 1, -1, 3], "circular")
    yield SampleInput(t(0, 3), [1, 1])
    yield SampleInput(t(3, 5), [2, 1], "reflect")                     # unbatched 1-D
    yield SampleInput(t(2, 3, 4, 3), [1, 0, 2, 1, 1, 1], "circular")  # unbatched 3-D


def _pad_errors(info, device):
    x = _t((1, 2, 4), D.float32, device)
    yield ErrorInput(SampleInput(x, [1, 2, 3]), RuntimeError,
                     "Padding length must be divisible by 2")
    yield ErrorInput(SampleInput(x, [1] * 8), RuntimeError,
                     "Padding length should be less than or equal to two times the input "
                     "dimension")
    yield ErrorInput(SampleInput(x, [1, 1], "reflect", 1.0), RuntimeError,
                     "Padding mode \"reflect\" doesn't take in value argument")
    yield ErrorInput(SampleInput(x, [5, 5], "circular"), RuntimeError,
                     "Padding value causes wrapping around more than once")
    yield ErrorInput(SampleInput(x, [1, 1], "mirror"), NotImplementedError,
                     "Unrecognised padding mode mirror")
    yield ErrorInput(SampleInput(_t((1, 2, 3, 4), D.float32, device), [1, 1], "reflect"),
                     NotImplementedError, "Padding size 2 is not supported for 4D input tensor")


for _nd in (1, 2, 3):
    for _kind, _reflect in (("reflection", True), ("replication", False)):
        register(OpInfo(getattr(aten, f"{_kind}_pad{_nd}d").default,
                        _pad_nd_ref("reflect" if _reflect else "replicate"), FI,
                        _pad_nd_samples(_nd, _reflect), error_inputs=_pad_nd_errors(_nd,
                                                                                     _reflect)))
register(OpInfo(aten.pad.default, _pad_ref, FI, _pad_samples, error_inputs=_pad_errors))
