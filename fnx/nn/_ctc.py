"""Connectionist temporal classification loss (``F.ctc_loss``), written with fnx ops.

The forward variable alpha runs over the extended label sequence ``l'`` (a blank before,
between and after the labels: ``2 S + 1`` states) in log space, one step per time frame;
the steps after the first are one ``prims.ctc_alpha`` (a NumPy loop on the CPU, one
``lax.scan`` when compiled), whose derivative ``prims.ctc_alpha_backward`` is the
reverse-mode sweep (the alpha-beta gradient).

Unreachable states hold a large finite negative number instead of ``-inf`` (and the
log-probabilities are clamped to it): a logsumexp of ``-inf`` values has a NaN gradient,
which would poison the sum even where it is multiplied by zero. A loss at that level is an
impossible alignment: ``inf``.
"""
from __future__ import annotations

from .. import api as fnx
from ..core.tensor import Tensor
from ..graph.tracer import is_compiling
from ..ops import prims
from ._loss import _reduction

__all__ = ["ctc_loss"]

_NEG = -1e30          # "log 0" that keeps gradients finite (see the module docstring)
_IMPOSSIBLE = 1e29    # a loss above this came only through unreachable states


def _lengths(value, n, what, device):
    if isinstance(value, Tensor):
        lengths = value.reshape(-1).long()
    else:
        lengths = fnx.tensor([int(v) for v in value], dtype=fnx.int64, device=device)
    if lengths.numel() != n:
        raise RuntimeError(f"{what} must be of size batch_size")
    return lengths.to(device)


def _padded_targets(targets, target_lengths, n, device):
    """Targets as (N, S) long: padded as given, or a concatenated 1-D target split by
    the lengths (read as ints)."""
    if targets.ndim == 2:
        return targets.long()
    lengths = [int(v) for v in target_lengths.tolist()]
    total = sum(lengths)
    if targets.shape[0] < total:
        raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                           f"size {targets.shape[0]} for argument #2 'targets' (while "
                           f"checking arguments for ctc_loss_allocate_outputs)")
    s = max(lengths, default=0)
    rows, offset = [], 0
    for length in lengths:
        row = targets[offset:offset + length].long()
        rows.append(fnx.cat([row, fnx.zeros(s - length, dtype=fnx.int64, device=device)]))
        offset += length
    return fnx.stack(rows) if rows else fnx.zeros(0, s, dtype=fnx.int64, device=device)


def _check_values(input_lengths, target_lengths, t_max, s_max):
    if is_compiling():
        return
    if input_lengths.numel() and int(input_lengths.max()) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(input_lengths.max())} (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    if target_lengths.numel() and int(target_lengths.max()) > s_max:
        raise RuntimeError(f"Expected tensor to have size at least "
                           f"{int(target_lengths.max())} at dimension 1, but got size {s_max} "
                           f"for argument #2 'targets' (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")


def _lse(*terms):      # (of two finite terms, for the last states)
    stacked = fnx.stack(terms)
    top = stacked.amax(0).detach()
    return (stacked - top).exp().sum(0).log() + top


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Negative log likelihood of ``targets`` under every alignment of ``log_probs``
    ((T, N, C) or unbatched (T, C), log-softmaxed over C); ``targets`` padded (N, S) or
    concatenated 1-D; ``'mean'`` divides each loss by its target length, then averages.

    >>> import fnx, fnx.nn.functional as F
    >>> lp = fnx.full((2, 1, 2), 0.5).log()      # two frames, classes {blank, 1}
    >>> F.ctc_loss(lp, fnx.tensor([[1]]), [2], [1], reduction="sum")   # 3 paths of 1/4
    tensor(0.2877)
    """
    red = _reduction(reduction)
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-"
                           f"dimensional tensor for argument #1 'log_probs' (while checking "
                           f"arguments for ctc_loss_allocate_outputs)")
    if not log_probs.dtype.is_floating_point:
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for '
                                  f"'{log_probs.dtype.scalar_type}'")
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if unbatched and targets.ndim == 1:
        targets = targets.unsqueeze(0)
    t_max, n, c = lp.shape
    dev = lp.device
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if not isinstance(input_lengths, Tensor) and not isinstance(input_lengths, (list, tuple)):
        input_lengths = [input_lengths]
    if not isinstance(target_lengths, Tensor) and not isinstance(target_lengths, (list, tuple)):
        target_lengths = [target_lengths]
    in_len = _lengths(input_lengths, n, "input_lengths", dev)
    tg_len = _lengths(target_lengths, n, "target_lengths", dev)
    tg = _padded_targets(targets, tg_len, n, dev)
    if tg.shape[0] != n:
        raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                           f"{tg.shape[0]} for argument #2 'targets' (while checking arguments "
                           f"for ctc_loss_allocate_outputs)")
    s = tg.shape[1]
    _check_values(in_len, tg_len, t_max, s)
    work = lp if lp.dtype in (fnx.float32, fnx.float64) else lp.float()

    # the extended labels l' (N, 2S+1): blank, y1, blank, y2, ..., blank; padding -> blank
    pos = fnx.arange(s, device=dev).unsqueeze(0)
    labels = fnx.where(pos < tg_len.unsqueeze(1), tg, fnx.full_like(tg, blank))
    ext = fnx.full((n, 2 * s + 1), blank, dtype=fnx.int64, device=dev)
    if s:
        pairs = fnx.stack([fnx.full_like(labels, blank), labels], 2).reshape(n, 2 * s)
        ext = fnx.cat([pairs, ext[:, :1]], 1)
    width = 2 * s + 1
    # a skip from s-2 to s is allowed onto a label that differs from the one before it
    if width > 2:
        skip = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        skip = fnx.cat([fnx.zeros(n, 2, dtype=fnx.bool, device=dev), skip], 1)
    else:
        skip = fnx.zeros(n, width, dtype=fnx.bool, device=dev)
    neg = fnx.full((n, width), _NEG, dtype=work.dtype, device=dev)

    state = fnx.arange(width, device=dev).unsqueeze(0)
    # every frame's log-probability of every extended label, clamped finite (see above)
    emit = work.gather(2, ext.unsqueeze(0).expand(t_max, n, width)).clamp(min=_NEG)
    alpha = fnx.where(state < 2, emit[0], neg)
    # an empty input has the empty path only: log 1 at the first blank
    empty = fnx.where(state == 0, fnx.zeros_like(neg), neg)
    alpha = fnx.where((in_len > 0).unsqueeze(1), alpha, empty)
    if t_max > 1:
        # frames 1..T-1 in one prim (one lax.scan when compiled); a sequence that has
        # ended keeps its alpha
        active = fnx.arange(1, t_max, device=dev).unsqueeze(1) < in_len.unsqueeze(0)
        alpha = prims.ctc_alpha.default(alpha, emit[1:], skip, active)
    last = alpha.gather(1, (2 * tg_len).unsqueeze(1)).squeeze(1)
    before = alpha.gather(1, (2 * tg_len - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    before = fnx.where(tg_len > 0, before, fnx.full_like(before, _NEG))
    loss = -_lse(last, before)
    # no valid alignment (too few frames, or an empty input): inf, as PyTorch
    impossible = loss > _IMPOSSIBLE
    fill = 0.0 if zero_infinity else float("inf")
    loss = fnx.where(impossible, fnx.full_like(loss, fill), loss).to(log_probs.dtype)
    if red == 0:
        return loss.squeeze(0) if unbatched else loss
    if red == 2:
        return loss.sum()
    return (loss / tg_len.clamp(min=1).to(loss.dtype)).mean()
