"""Padding: the reflection and replication pads (1-3 spatial dims) and ``pad``, which picks
one by mode."""
from __future__ import annotations

from ....core import dtype as D
from ....ops import aten
from ...registry import TensorMeta, defop
from ._common import ATEN, CORE, _arange


def _pad_check(name, self, padding, nd, reflect):
    pad = tuple(int(v) for v in padding)
    if len(pad) != 2 * nd:
        raise RuntimeError(f"{name}: padding size is expected to be {2 * nd}, but got: "
                           f"{len(pad)}")
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, "
                           f"but got: {list(self.shape)}")
    sp = self.shape[self.ndim - nd:]
    out = []
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        n = sp[i]
        if reflect and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{self.ndim - nd + i} of input {list(self.shape)}")
        if not reflect and n == 0:
            raise RuntimeError(f"{name}: input tensor must have non-zero spatial dims, but got "
                               f"{list(self.shape)}")
        o = n + lo + hi
        if o < 1:
            raise RuntimeError(f"input ({'x'.join(map(str, sp))}) is too small. Calculated "
                               f"output {o}")
        out.append((lo, hi, o))
    return out


def _pad_meta(name, nd, reflect):
    def meta(self, padding):
        out = _pad_check(name, self, padding, nd, reflect)
        return TensorMeta(tuple(self.shape[:self.ndim - nd]) + tuple(o for _, _, o in out),
                          self.dtype)
    return meta


def _pad_decomp(name, nd, reflect):
    def decomp(self, padding):
        out = _pad_check(name, self, padding, nd, reflect)
        x = self
        for i, (lo, hi, o) in enumerate(out):
            dim = self.ndim - nd + i
            n = self.shape[dim]
            j = _arange(o, D.int64, self.device) - lo
            if reflect:
                j = (n - 1) - aten.abs((n - 1) - aten.abs(j))
            else:
                j = aten.clamp(j, 0, n - 1)
            x = aten.index_select(x, dim, j)
        return x
    return decomp


def _define_pad(kind, nd, core):
    name = f"{kind}_pad{nd}d"
    reflect = kind == "reflection"
    return defop(f"{name}(Tensor self, SymInt[{2 * nd}] padding) -> Tensor",
                 tags=CORE if core else ATEN, meta=_pad_meta(name, nd, reflect),
                 decomposition=_pad_decomp(name, nd, reflect), explicit=core)


reflection_pad1d = _define_pad("reflection", 1, True)
reflection_pad2d = _define_pad("reflection", 2, True)
reflection_pad3d = _define_pad("reflection", 3, True)
replication_pad1d = _define_pad("replication", 1, False)
replication_pad2d = _define_pad("replication", 2, True)
replication_pad3d = _define_pad("replication", 3, True)


def _pad_circular(self, pad):
    nd = len(pad) // 2
    x = self
    for i in range(nd):
        dim = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = self.shape[dim]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        # negative pads crop first; the wrapped parts come from what is left (PyTorch)
        core = aten.slice.Tensor(x, dim, max(-lo, 0), n - max(-hi, 0))
        m = core.shape[dim]
        if lo > m or hi > m:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = []
        if lo > 0:
            parts.append(aten.slice.Tensor(core, dim, m - lo, m))
        parts.append(core)
        if hi > 0:
            parts.append(aten.slice.Tensor(core, dim, 0, hi))
        x = aten.cat(parts, dim)
    return x


def _pad(self, pad, mode="constant", value=None):
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {self.ndim}")
    if mode == "constant":
        return aten.constant_pad_nd(self, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    # the non-constant modes pad the 1-3 spatial dims of a batched or unbatched input
    if nd not in (1, 2, 3) or self.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {self.ndim}D "
                                  f"input tensor.")
    if mode == "circular":
        return _pad_circular(self, pad)
    kind = "reflection" if mode == "reflect" else "replication"
    return getattr(aten, f"{kind}_pad{nd}d")(self, pad)


pad = defop('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
            decomposition=_pad)
