"""The optimizers beyond SGD/Adam/AdamW/RMSprop against NumPy re-implementations of the
update rules PyTorch documents, over several steps (weight decay, maximize and each one's
own options); their state in PyTorch's layout; each one's compiled training step equal to
the eager one; LBFGS against a NumPy L-BFGS and against the least-squares minimum; and a
scheduler stepped before its optimizer warning as PyTorch's."""
import warnings

import numpy as np
import pytest

import fnx
import fnx.nn as nn
import fnx.optim as optim

STEPS = 8


def run(opt_cls, kwargs, rng, dtype=np.float64, steps=STEPS):
    """``steps`` updates of two parameters from fixed random gradients: (fnx params, initial
    values, gradients, optimizer)."""
    shapes = [(3, 4), (5,)]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    params = [nn.Parameter(fnx.tensor(a)) for a in init]
    opt = opt_cls(params, **kwargs)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = fnx.tensor(g)
        opt.step()
    return params, init, grads, opt


def f32(x):
    """A value stored in a float32 0-dim state tensor (PyTorch's ``step``, ``mu_product``,
    ``eta``, ``mu``), read back as a double."""
    return float(np.float32(x))


# ------------------------------------------------------------------- NumPy references

def _grad(g, p, maximize, weight_decay):
    g = -g if maximize else g
    return g + weight_decay * p if weight_decay else g


def np_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    v, u = np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = _grad(g, p, maximize, weight_decay)
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    return p


def np_adagrad(p, grads, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
               eps=1e-10, maximize=False):
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = _grad(g, p, maximize, weight_decay)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
    return p


def np_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              maximize=False):
    m, u = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = _grad(g, p, maximize, weight_decay)
        m = betas[0] * m + (1 - betas[0]) * g
        u = np.maximum(betas[1] * u, np.abs(g) + eps)
        p = p - lr / (1 - betas[0] ** t) * m / u
    return p


def np_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
             momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    m, v, mu_prod = np.zeros_like(p), np.zeros_like(p), 1.0
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled_weight_decay:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_prod = f32(mu_prod * mu)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_prod) * g / denom \
            - lr * mu_next / (1 - mu_prod * mu_next) * m / denom
    return p


def np_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
             decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    m, v = np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled_weight_decay:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                        ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * r * np.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
    return p


def np_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0,
            maximize=False):
    eta, mu, ax = f32(lr), 1.0, np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = _grad(g, p, maximize, weight_decay)
        p = p * (1 - lambd * eta) - eta * g
        ax = p.copy() if mu == 1 else ax + mu * (p - ax)
        eta = f32(lr / (1 + lambd * lr * t) ** alpha)
        mu = f32(1 / max(1, t - t0))
    return p, ax


def np_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    prev, size = np.zeros_like(p), np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)),
                       *step_sizes)
        g = np.where(s < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
    return p


# optimizer -> (reference, cases, state keys)
CASES = {
    "Adadelta": (np_adadelta, [dict(), dict(lr=0.5, rho=0.8, eps=1e-4),
                               dict(weight_decay=0.1, maximize=True)],
                 ["acc_delta", "square_avg", "step"]),
    "Adagrad": (np_adagrad, [dict(), dict(lr=0.1, lr_decay=0.2, eps=1e-6),
                             dict(lr=0.05, weight_decay=0.1, initial_accumulator_value=0.5),
                             dict(lr=0.05, maximize=True)],
                ["step", "sum"]),
    "Adamax": (np_adamax, [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-4),
                           dict(lr=0.01, weight_decay=0.1, maximize=True)],
               ["exp_avg", "exp_inf", "step"]),
    "NAdam": (np_nadam, [dict(), dict(lr=0.01, momentum_decay=0.05, betas=(0.8, 0.95)),
                         dict(lr=0.01, weight_decay=0.1),
                         dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
                         dict(lr=0.01, maximize=True)],
              ["exp_avg", "exp_avg_sq", "mu_product", "step"]),
    # betas[1] = 0.9 crosses from the unrectified to the rectified update at step 6
    "RAdam": (np_radam, [dict(), dict(lr=0.01, betas=(0.9, 0.9)),
                         dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1),
                         dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1,
                              decoupled_weight_decay=True),
                         dict(lr=0.01, betas=(0.9, 0.9), maximize=True)],
              ["exp_avg", "exp_avg_sq", "step"]),
    "Rprop": (np_rprop, [dict(), dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2)),
                         dict(lr=0.05, maximize=True)],
              ["prev", "step", "step_size"]),
}
# float32 state (mu_product) rounds a little differently in the product and its reference
RTOL = {"NAdam": 1e-7}


@pytest.mark.parametrize("name,kw", [(n, kw) for n, (_, cases, _) in CASES.items()
                                     for kw in cases],
                         ids=lambda v: v if isinstance(v, str) else repr(v))
def test_optimizer_matches_numpy(rng, name, kw):
    ref, _, keys = CASES[name]
    params, init, grads, opt = run(getattr(optim, name), kw, rng)
    for i, p in enumerate(params):
        expect = ref(init[i], [g[i] for g in grads], **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=RTOL.get(name, 1e-10),
                                   atol=1e-12)
    st = opt.state[params[0]]
    assert sorted(st) == keys           # PyTorch's state names
    assert st["step"].dtype is fnx.float32 and st["step"].shape == () and \
        st["step"].item() == STEPS
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    for k, v in kw.items():
        assert sd["param_groups"][0][k] == (tuple(v) if isinstance(v, tuple) else v)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.1, lambd=0.01, alpha=0.5, t0=3),
                                dict(lr=0.1, t0=0, weight_decay=0.1, maximize=True)])
def test_asgd_matches_numpy(rng, kw):
    params, init, grads, opt = run(optim.ASGD, kw, rng)
    for i, p in enumerate(params):
        expect, ax = np_asgd(init[i], [g[i] for g in grads], **kw)
        np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(opt.state[p]["ax"].numpy(force=True), ax, rtol=1e-10,
                                   atol=1e-12)
    st = opt.state[params[0]]
    assert sorted(st) == ["ax", "eta", "mu", "step"]
    assert all(st[k].dtype is fnx.float32 and st[k].shape == () for k in ("eta", "mu", "step"))


def test_adagrad_state_is_made_with_the_optimizer():
    p = nn.Parameter(fnx.zeros(3))
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    st = opt.state_dict()["state"][0]
    assert st["step"].item() == 0 and st["sum"].tolist() == [0.25] * 3


def test_float32_parameters_stay_float32(rng):
    for name in ("Adadelta", "NAdam", "RAdam", "Rprop"):
        params, init, grads, opt = run(getattr(optim, name), {}, rng, dtype=np.float32)
        assert params[0].dtype is fnx.float32
        ref = CASES[name][0]
        expect = ref(init[0].astype(np.float64), [g[0].astype(np.float64) for g in grads])
        np.testing.assert_allclose(params[0].numpy(force=True), expect, rtol=1e-4, atol=1e-5)


def test_state_dict_round_trip_continues_identically(rng):
    def make():
        fnx.manual_seed(0)
        model = nn.Linear(3, 2)
        return model, optim.NAdam(model.parameters(), lr=0.01)

    def train(model, opt, n, seed):
        g = fnx.Generator().manual_seed(seed)
        for _ in range(n):
            opt.zero_grad()
            model(fnx.randn(4, 3, generator=g)).pow(2).sum().backward()
            opt.step()

    m1, o1 = make()
    train(m1, o1, 3, 0)
    m2, o2 = make()
    m2.load_state_dict(m1.state_dict())
    o2.load_state_dict(o1.state_dict())
    train(m1, o1, 2, 1)
    train(m2, o2, 2, 1)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p1.numpy(force=True), p2.numpy(force=True))


def test_errors():
    p = [nn.Parameter(fnx.ones(1))]
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        optim.Adagrad(p, lr_decay=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        optim.Adamax(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid momentum_decay value: -0.1"):
        optim.NAdam(p, momentum_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid eta values: 1.5, 1.2"):
        optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.ASGD(p, lr=-0.1)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": p}, {"params": [nn.Parameter(fnx.ones(1))]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optim.LBFGS(p, line_search_fn="armijo").step(lambda: fnx.ones(()))
    sparse = optim.SparseAdam(p)
    p[0].grad = fnx.ones(1)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please "
                                           "consider Adam instead"):
        sparse.step()
    assert p[0].tolist() == [1.0]


def test_pytorch_options_are_accepted():
    p = [nn.Parameter(fnx.ones(1))]
    for cls, kw in [(optim.Adadelta, dict(foreach=False, capturable=False, differentiable=False)),
                    (optim.Adagrad, dict(foreach=None, fused=None, differentiable=False)),
                    (optim.Adamax, dict(foreach=None, capturable=True)),
                    (optim.NAdam, dict(foreach=None, capturable=False, differentiable=False)),
                    (optim.RAdam, dict(foreach=None, capturable=False, differentiable=False)),
                    (optim.ASGD, dict(foreach=None, capturable=False, differentiable=False)),
                    (optim.Rprop, dict(foreach=None, capturable=False, differentiable=False))]:
        opt = cls(p, maximize=False, **kw)
        assert all(opt.param_groups[0][k] == v for k, v in kw.items())


# ------------------------------------------------------------------- compiled steps

def _train(compiled, make, steps=8):
    fnx.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = make(model.parameters())
    fnx.manual_seed(1)
    x, y = fnx.randn(16, 4), fnx.randint(0, 3, (16,))

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    f = fnx.compile(step) if compiled else step
    for _ in range(steps):
        f(x, y)
    return [p.detach().numpy(force=True) for p in model.parameters()], \
        (len(f.entries()) if compiled else None)


COMPILED = {
    "Adadelta": lambda p: optim.Adadelta(p, weight_decay=0.1),
    "Adagrad": lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01),
    "Adamax": lambda p: optim.Adamax(p, lr=0.01, maximize=True),
    "NAdam": lambda p: optim.NAdam(p, lr=0.01, weight_decay=0.1),
    "RAdam": lambda p: optim.RAdam(p, lr=0.01, betas=(0.9, 0.9)),   # both branches
    "ASGD": lambda p: optim.ASGD(p, lr=0.1, t0=3),                  # mu leaves 1
    "Rprop": lambda p: optim.Rprop(p, lr=0.01),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_step_equals_eager(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no fallback to eager
        eager, _ = _train(False, COMPILED[name])
        compiled, programs = _train(True, COMPILED[name])
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert programs == 1        # the step count is a tensor: one program for every step


def test_lbfgs_in_a_compiled_function_equals_eager():
    # its line searches read loss values (graph breaks) and it keeps Python counters in its
    # state: the first step runs as a one-shot program, later ones eagerly
    def fit(compiled):
        x = nn.Parameter(fnx.tensor([3.0, -1.0, 0.5], dtype=fnx.float64))
        opt = optim.LBFGS([x], max_iter=5)

        def closure():
            opt.zero_grad()
            loss = ((x - fnx.tensor([1.0, 2.0, 3.0], dtype=fnx.float64)) ** 2).sum()
            loss.backward()
            return loss

        def step():
            return opt.step(closure)
        f = fnx.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f()
            f()
        return x.numpy(force=True), [str(m.message) for m in w]
    eager, _ = fit(False)
    compiled, messages = fit(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=1e-14)
    assert any("eagerly" in m for m in messages)


# ------------------------------------------------------------------- LBFGS

def np_lbfgs(x, fg, lr, max_iter, history_size, tolerance_grad=1e-7, tolerance_change=1e-9):
    """L-BFGS (two-loop recursion, Nocedal & Wright Alg. 7.4) with fixed steps ``lr`` (the
    first ``min(1, 1/|g|_1) lr``), PyTorch's curvature test ``y.s > 1e-10`` and initial
    scaling ``y.s / y.y``; one ``step`` of at most ``max_iter`` iterations."""
    f, g = fg(x)
    if np.abs(g).max() <= tolerance_grad:
        return x
    s_list, y_list, h, d, t, g_prev = [], [], 1.0, None, None, None
    for k in range(1, max_iter + 1):
        if k == 1:
            d = -g
        else:
            y, s = g - g_prev, d * t
            if y @ s > 1e-10:
                if len(s_list) == history_size:
                    s_list.pop(0)
                    y_list.pop(0)
                s_list.append(s)
                y_list.append(y)
                h = (y @ s) / (y @ y)
            q, alphas = -g, []
            for s_i, y_i in reversed(list(zip(s_list, y_list))):
                a = (s_i @ q) / (y_i @ s_i)
                alphas.append(a)
                q = q - a * y_i
            r = h * q
            for (s_i, y_i), a in zip(zip(s_list, y_list), reversed(alphas)):
                b = (y_i @ r) / (y_i @ s_i)
                r = r + (a - b) * s_i
            d = r
        g_prev, f_prev = g, f
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if k == 1 else lr
        if g @ d > -tolerance_change:
            break
        x = x + t * d
        if k == max_iter:
            break
        f, g = fg(x)
        if np.abs(g).max() <= tolerance_grad or np.abs(d * t).max() <= tolerance_change or \
                abs(f - f_prev) < tolerance_change:
            break
    return x


def _problem(rng):
    a = rng.standard_normal((8, 4))
    b = rng.standard_normal(8)

    def fg(x):          # least squares plus a Rosenbrock-like coupling: not quadratic
        r = a @ x - b
        c = x[1:] - x[:-1] ** 2
        grad = 2 * a.T @ r
        grad[1:] += 2 * c
        grad[:-1] += -4 * x[:-1] * c
        return r @ r + c @ c, grad
    return a, b, fg


def _fnx_fit(a, b, x0, **kw):
    x = nn.Parameter(fnx.tensor(x0))
    opt = optim.LBFGS([x], **kw)
    at, bt = fnx.tensor(a), fnx.tensor(b)

    def closure():
        opt.zero_grad()
        r = at @ x - bt
        c = x[1:] - x[:-1] ** 2
        loss = (r ** 2).sum() + (c ** 2).sum()
        loss.backward()
        return loss
    return x, opt, closure


@pytest.mark.parametrize("history_size", [100, 2])
def test_lbfgs_matches_numpy(rng, history_size):
    a, b, fg = _problem(rng)
    x0 = np.array([-1.2, 1.0, 0.5, 2.0])
    x, opt, closure = _fnx_fit(a, b, x0, lr=0.5, max_iter=12, history_size=history_size)
    loss = opt.step(closure)
    assert abs(loss.item() - fg(x0)[0]) < 1e-12        # step returns the first loss
    expect = np_lbfgs(x0, fg, 0.5, 12, history_size)
    np.testing.assert_allclose(x.numpy(force=True), expect, rtol=1e-9, atol=1e-12)
    st = opt.state[x]
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
            "prev_flat_grad", "prev_loss"} <= set(st)
    assert st["n_iter"] == 12 and st["func_evals"] == 12
    assert len(st["old_dirs"]) <= history_size


def test_lbfgs_strong_wolfe_finds_the_least_squares_minimum(rng):
    a = rng.standard_normal((10, 4))
    b = rng.standard_normal(10)
    x = nn.Parameter(fnx.zeros(4, dtype=fnx.float64))
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=50)
    at, bt = fnx.tensor(a), fnx.tensor(b)

    def closure():
        opt.zero_grad()
        loss = ((at @ x - bt) ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(x.numpy(force=True), np.linalg.lstsq(a, b, rcond=None)[0],
                               rtol=1e-6, atol=1e-8)
    # the loss is convex quadratic: a few line searches suffice, within max_eval
    assert opt.state[x]["func_evals"] <= 50 * 5 // 4


def test_lbfgs_strong_wolfe_on_rosenbrock():
    x = nn.Parameter(fnx.tensor([-1.5, 2.0], dtype=fnx.float64))
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=200, max_eval=400,
                      tolerance_grad=1e-10, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    first = opt.step(closure).item()
    assert first == pytest.approx(2.5 ** 2 + 100 * (2.0 - 2.25) ** 2)
    np.testing.assert_allclose(x.numpy(force=True), [1.0, 1.0], atol=1e-6)


# ------------------------------------------------------------------- schedulers

def test_scheduler_stepped_before_its_optimizer_warns():
    p = nn.Parameter(fnx.ones(1))
    opt = optim.SGD([p], lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        sched.step()
    # in the right order: no warning
    opt2 = optim.Adam([nn.Parameter(fnx.ones(1))])
    sched2 = optim.lr_scheduler.ExponentialLR(opt2, gamma=0.5)
    opt2.param_groups[0]["params"][0].grad = fnx.ones(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.step()
        sched2.step()
        sched2.step()
    assert sched2.get_last_lr() == [0.001 * 0.25]


def test_scheduler_warns_when_step_was_replaced():
    opt = optim.SGD([nn.Parameter(fnx.ones(1))], lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step = lambda closure=None: None
    opt.step()
    with pytest.warns(UserWarning, match=r"Seems like `optimizer.step\(\)` has been overridden"):
        sched.step()


def test_no_order_warning_after_a_compiled_optimizer_step():
    # the first call traces the step: that it ran must still count, without making the
    # compiled program stand for a Python write
    fnx.manual_seed(0)
    m = nn.Linear(3, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    x = fnx.randn(4, 3)

    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
    f = fnx.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            f(x)
            sched.step()
    assert len(f.entries()) == 1 and sched.get_last_lr() == [0.1 * 0.5 ** 3]


# ------------------------------------------------------------------- on the cuda backend

CUDA = pytest.mark.skipif(not fnx.cuda.is_available(),
                          reason="needs a cuda device (a JAX GPU, or FNX_CUDA_ON_CPU=1)")


@CUDA
@pytest.mark.parametrize("name", sorted(CASES) + ["ASGD"])
def test_optimizer_on_cuda_matches_numpy(rng, name):
    shape = (3, 4)
    init = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(STEPS)]
    p = nn.Parameter(fnx.tensor(init, device="cuda"))
    kw = dict(lr=0.01) if name != "Adadelta" else {}
    opt = getattr(optim, name)([p], **kw)
    for g in grads:
        p.grad = fnx.tensor(g, device="cuda")
        opt.step()
    ref = np_asgd if name == "ASGD" else CASES[name][0]
    expect = ref(init, grads, **kw)
    expect = expect[0] if name == "ASGD" else expect
    assert p.device.type == "cuda" and opt.state[p]["step"].device.type == "cuda"
    np.testing.assert_allclose(p.detach().cpu().numpy(), expect, rtol=RTOL.get(name, 1e-9),
                               atol=1e-12)


@CUDA
def test_compiled_step_on_cuda_equals_eager():
    def train(compiled):
        fnx.manual_seed(0)
        model = nn.Linear(4, 3).to("cuda")
        opt = optim.NAdam(model.parameters(), lr=0.01)
        x, y = fnx.randn(8, 4).to("cuda"), fnx.randn(8, 3).to("cuda")

        def step():
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            opt.step()
        f = fnx.compile(step) if compiled else step
        for _ in range(4):
            f()
        return model.weight.detach().cpu().numpy()
    np.testing.assert_allclose(train(True), train(False), rtol=1e-5, atol=1e-6)
