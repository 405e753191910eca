"""``gradcheck`` / ``gradgradcheck``: analytical gradients against central finite differences.

Full mode builds both Jacobians column by column (one backward per output element, two
forward calls per input element); ``fast_mode=True`` compares one random projection
``v^T J u`` instead (one backward, two forward calls), which is what the OpInfo gradient
checks use. Inputs should be float64 (or complex128) for the differences to be accurate.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..backends.cpu._core import wrap_np
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..ops import aten, prims
from .engine import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytical and numerical gradients disagree."""


def _tensors(x):
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _tensors(v)]
    return []


def _outputs(fn, inputs):
    """The differentiable outputs of ``fn``, each complex one as its real and imaginary
    parts (PyTorch's convention: a complex output is checked as two real ones, so the
    input's gradient is d/dRe + i d/dIm of each real function)."""
    out = fn(*inputs)
    res = []
    for o in _tensors(out):
        if o._dtype.is_complex:
            res += [prims.real(o), prims.imag(o)]
        elif o._dtype.is_floating_point:
            res.append(o)
    return res


def _flat(t):
    # a copy: a view op's output shares memory with the input being perturbed
    a = np.array(t.detach().cpu().numpy(force=True), dtype=np.complex128 if t.is_complex()
                 else np.float64, copy=True)
    return a.reshape(-1)


def _perturb(t, idx, delta):
    """Add ``delta`` to element ``idx`` of ``t``, in place and outside autograd."""
    with no_grad():
        # indexed by position, not through reshape(-1): that copies a non-contiguous
        # tensor, and the step would never reach it (a Jacobian of zeros)
        at = tuple(int(i) for i in np.unravel_index(idx, tuple(t.shape)))
        d = t.detach()
        d[at] = d[at] + delta


def _like(arr, t):
    """The NumPy array ``arr`` as a tensor of ``t``'s dtype and device."""
    return aten._to_copy.default(wrap_np(arr), dtype=t.dtype, device=t.device)


def _numerical(fn, inputs, wrt, eps, u=None):
    """Numerical Jacobian columns d out / d wrt[k][j] (or the directional derivative along u)."""
    def evaluate():
        # Grad mode stays on: the function may itself use autograd (gradgradcheck's vjp).
        return [_flat(o) for o in _outputs(fn, inputs)]
    cols = []
    if u is not None:
        for t, ut in zip(wrt, u):
            _add_vec(t, ut * eps)
        plus = evaluate()
        for t, ut in zip(wrt, u):
            _add_vec(t, -2 * ut * eps)
        minus = evaluate()
        for t, ut in zip(wrt, u):
            _add_vec(t, ut * eps)
        return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]
    for t in wrt:
        for j in range(t.numel()):
            col_parts = []
            steps = [eps] + ([eps * 1j] if t.is_complex() else [])
            for step in steps:
                _perturb(t, j, step)
                plus = evaluate()
                _perturb(t, j, -2 * step)
                minus = evaluate()
                _perturb(t, j, step)
                col_parts.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
            cols.append(col_parts)
    return cols


def _add_vec(t, vec):
    with no_grad():
        t.add_(_like(vec.reshape(tuple(t.shape)), t))


def _analytical_rows(fn, inputs, wrt, v=None):
    outs = _outputs(fn, inputs)
    rows = []
    if v is not None:
        gos = [_like(vi.reshape(tuple(o.shape)), o) for vi, o in zip(v, outs)]
        used = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        if not used:
            return [np.zeros(t.numel()) for t in wrt]
        gs = _grad([o for o, _ in used], wrt, [g for _, g in used], allow_unused=True)
        return [_flat(g) if g is not None else np.zeros(t.numel(), dtype=_flat(t).dtype)
                for g, t in zip(gs, wrt)]
    for oi, o in enumerate(outs):
        for j in range(o.numel()):
            if not o.requires_grad:
                rows.append([np.zeros(t.numel()) for t in wrt])
                continue
            go = aten.zeros_like.default(o).detach()
            go.reshape(-1)[j] = 1.0
            gs = _grad([o], wrt, [go], retain_graph=True, allow_unused=True)
            rows.append([_flat(g) if g is not None else np.zeros(t.numel()) for g, t
                         in zip(gs, wrt)])
    return rows


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              fast_mode=False, seed=0, **_ignored) -> bool:
    """Check ``func``'s gradients w.r.t. the ``inputs`` that require grad.

    >>> import fnx
    >>> x = fnx.tensor([0.5, 1.5], dtype=fnx.float64, requires_grad=True)
    >>> fnx.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    wrt = [t for t in _tensors(inputs) if t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for t in wrt:
        if t._dtype.name not in ("float64", "complex128"):
            warnings.warn(f"gradcheck: input of dtype {t._dtype} is not double precision; the "
                          f"finite differences will be inaccurate", stacklevel=2)
    outs = _outputs(func, inputs)
    if fast_mode:
        rng = np.random.default_rng(seed)
        u = [rng.standard_normal(t.numel()) for t in wrt]
        v = [rng.standard_normal(o.numel()) for o in outs]
        rows = _analytical_rows(func, inputs, wrt, v)
        analytical = sum(float(np.real(np.dot(r, ui))) for r, ui in zip(rows, u))
        dirs = _numerical(func, inputs, wrt, eps, u)
        numerical = sum(float(np.real(np.dot(d, vi))) for d, vi in zip(dirs, v))
        ok = abs(analytical - numerical) <= atol + rtol * abs(numerical)
        if not ok and raise_exception:
            raise GradcheckError(f"Jacobian mismatch (fast mode: v^T J u): analytical "
                                 f"{analytical!r} vs numerical {numerical!r}")
        return ok
    rows = _analytical_rows(func, inputs, wrt)
    cols = _numerical(func, inputs, wrt, eps)
    sizes = [t.numel() for t in wrt]
    n_out = sum(o.numel() for o in outs)
    offsets = np.cumsum([0] + sizes)
    for k, t in enumerate(wrt):
        ana = np.zeros((sizes[k], n_out), dtype=np.complex128)
        num = np.zeros((sizes[k], n_out), dtype=np.complex128)
        for r, row in enumerate(rows):
            ana[:, r] = row[k]
        for j in range(sizes[k]):
            parts = cols[offsets[k] + j]
            num[j] = np.concatenate(parts[0]) if parts[0] else []
            if len(parts) > 1:
                num[j] = num[j] + 1j * np.conj(np.concatenate(parts[1]))
        if not t.is_complex():
            num = num.real
            ana = ana.real
        if not np.allclose(ana, num, atol=atol, rtol=rtol):
            if raise_exception:
                raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input "
                                     f"{k},\nnumerical:{num}\nanalytical:{ana}\n")
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, fast_mode=False, seed=0, **_ignored) -> bool:
    """Check second derivatives: ``gradcheck`` of the function's vector-Jacobian product.

    >>> import fnx
    >>> x = fnx.tensor([0.5, 1.5], dtype=fnx.float64, requires_grad=True)
    >>> fnx.autograd.gradgradcheck(lambda t: t ** 3, (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    wrt_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [_like(rng.standard_normal(tuple(o.shape)), o).requires_grad_()
                        for o in outs]
    n = len(inputs)

    def vjp(*args):
        xs, gos = args[:n], args[n:]
        ys = _outputs(func, xs)
        used = [(y, g) for y, g in zip(ys, gos) if y.requires_grad]
        gs = _grad([y for y, _ in used], [xs[i] for i in wrt_idx], [g for _, g in used],
                   create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(vjp, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode, seed=seed)
