"""``LBFGS``, as ``torch.optim.LBFGS``: limited-memory BFGS over all parameters flattened
into one vector, with an optional strong-Wolfe line search.

Its iterations decide on values (convergence tests, the line search's bracketing), so a
step reads tensors into Python: under ``fnx.compile`` it runs eagerly.
"""
from __future__ import annotations

from .. import api as fnx
from ..core.grad_mode import enable_grad
from ._functional import check_lr
from .optimizer import Optimizer, _scalar, _use_grad

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)`` (values and
    slopes), clamped to ``bounds`` (default: the interval); the midpoint when the cubic
    has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Step length along ``d`` meeting the strong Wolfe conditions (sufficient decrease
    ``c1``, curvature ``c2``): bracket a step, then zoom by cubic interpolation.
    ``evaluate(t)`` gives ``(loss, flat gradient)`` at ``x + t d``. Returns the loss and
    gradient at the step, the step and the number of evaluations."""
    d_norm = float(d.abs().max())
    g = g.clone()
    f_new, g_new = evaluate(t)
    evals, it = 1, 0
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    bracket = None
    while it < max_ls:
        armijo_fails = f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev)
        if not armijo_fails and abs(gtd_new) <= -c2 * gtd:
            bracket, b_f, b_g = [t], [f_new], [g_new]
            done = True
            break
        if armijo_fails or gtd_new >= 0:
            bracket = [t_prev, t]
            b_f, b_g, b_gtd = [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # extrapolate: the cubic's minimum within [t + 0.01 (t - t_prev), 10 t]
        t_next = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                            bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        it += 1
    if it == max_ls:
        bracket, b_f, b_g = [0, t], [f, f_new], [g, g_new]
        b_gtd = None
    low, high = (0, 1) if b_f[0] <= b_f[-1] else (1, 0)
    insufficient = False
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0], b_f[0], b_gtd[0], bracket[1], b_f[1], b_gtd[1])
        # keep the trial away from the bracket's ends (a guard against slow progress)
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= b_f[low]:
            bracket[high], b_f[high], b_g[high], b_gtd[high] = t, f_new, g_new.clone(), gtd_new
            low, high = (0, 1) if b_f[0] <= b_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], b_f[high] = bracket[low], b_f[low]
                b_g[high], b_gtd[high] = b_g[low], b_gtd[low]
            bracket[low], b_f[low], b_g[low], b_gtd[low] = t, f_new, g_new.clone(), gtd_new
    return b_f[low], b_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS: ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` loss
    evaluations) of quasi-Newton steps from the last ``history_size`` curvature pairs,
    stopping early on ``tolerance_grad`` (largest gradient entry) or ``tolerance_change``
    (step or loss change). ``line_search_fn='strong_wolfe'`` picks each step length; without
    it the step is ``lr`` (the very first ``min(1, 1 / |g|_1) * lr``). One parameter group.

    >>> import fnx
    >>> x = fnx.nn.Parameter(fnx.tensor([3.0, -2.0], dtype=fnx.float64))
    >>> opt = fnx.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - fnx.tensor([1.0, 2.0], dtype=fnx.float64)) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 6) for v in x.tolist()]
    [1.0, 2.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        return fnx.cat([p.grad.reshape(-1) if p.grad is not None else
                        fnx.zeros(p.numel(), dtype=p.dtype, device=p.device)
                        for p in self._params], 0)

    def _add(self, t, d):
        """``params += t * d`` (``d`` flat)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].view_as(p), alpha=t)
            offset += n

    def _evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are restored to ``x``."""
        self._add(t, d)
        with enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        for p, v in zip(self._params, x):
            p.copy_(v)
        return loss, g

    @_use_grad
    def step(self, closure):
        group = self.param_groups[0]
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history = group["line_search_fn"], group["history_size"]
        if line_search is not None and line_search != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(g.abs().max()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_g = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = g.neg()
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                # a new curvature pair (y, s) if it keeps the model positive definite
                y = g.sub(prev_g)
                s = d.mul(t)
                ys = float(y.dot(s))
                if ys > 1e-10:
                    if len(old_dirs) == history:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                # the two-loop recursion: d = -H g
                al = state.setdefault("al", [None] * history)
                q = g.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_stps[i].dot(q)) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(h_diag)
                for i in range(len(old_dirs)):
                    be = float(old_dirs[i].dot(r)) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be)
            if prev_g is None:
                prev_g = g.clone()
            else:
                prev_g.copy_(g)
            prev_loss = loss
            t = min(1.0, 1.0 / float(g.abs().sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(g.dot(d))
            if gtd > -tol_change:       # not a descent direction
                break
            if line_search is not None:
                x0 = [p.clone() for p in self._params]
                loss, g, t, ls_evals = _strong_wolfe(
                    lambda step: self._evaluate(closure, x0, step, d), t, d, loss, g, gtd,
                    max_ls=max_eval - evals)
                self._add(t, d)
                converged = float(g.abs().max()) <= tol_grad
            else:
                self._add(t, d)
                ls_evals = 0
                converged = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    converged = float(g.abs().max()) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or converged:
                break
            if float(d.mul(t).abs().max()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss
