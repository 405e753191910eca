"""GradScaler and its ops: scale, unscale, skip on inf/NaN, growth and backoff against
sequences computed by hand, state_dict, errors, a PyTorch AMP loop with only the import
changed (cpu/bfloat16, cuda/float16 under FNX_CUDA_ON_CPU=1) and the loop under
fnx.compile (one program; the skip is a select)."""
import math
import os
import pathlib
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import fnx

aten = fnx.ops.aten
ROOT = pathlib.Path(__file__).resolve().parents[1]
needs_cuda = pytest.mark.skipif(not fnx.cuda.is_available(),
                                reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


# --------------------------------------------------------------------------- the ops

def test_non_finite_check_and_unscale():
    g1 = fnx.tensor([2.0, -4.0])
    g2 = fnx.tensor([[8.0]]).bfloat16()
    found = fnx.zeros(())
    aten._amp_foreach_non_finite_check_and_unscale_([g1, g2], found, fnx.tensor(0.25))
    assert g1.tolist() == [0.5, -1.0] and g2.float().tolist() == [[2.0]]
    assert found.item() == 0.0
    for bad in (math.inf, -math.inf, math.nan):
        g = fnx.tensor([1.0, bad])
        found = fnx.zeros(())
        aten._amp_foreach_non_finite_check_and_unscale_([g], found, fnx.tensor(0.5))
        assert found.item() == 1.0
        assert g[0].item() == 0.5           # still unscaled, as ATen
    # found_inf is only ever set, never cleared
    found = fnx.ones(())
    aten._amp_foreach_non_finite_check_and_unscale_([fnx.ones(2)], found, fnx.tensor(1.0))
    assert found.item() == 1.0


def test_non_finite_check_bumps_versions_and_refuses_bad_input():
    g = fnx.ones(2)
    v = g._version
    aten._amp_foreach_non_finite_check_and_unscale_([g], fnx.zeros(()), fnx.tensor(1.0))
    assert g._version > v
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element tensor"):
        aten._amp_foreach_non_finite_check_and_unscale_([g], fnx.zeros(2), fnx.tensor(1.0))
    with pytest.raises(RuntimeError, match="inv_scale must be a Float tensor"):
        aten._amp_foreach_non_finite_check_and_unscale_([g], fnx.zeros(()),
                                                        fnx.tensor(1.0, dtype=fnx.float64))
    before = g.tolist()
    with pytest.raises(RuntimeError, match="must be floating point"):
        aten._amp_foreach_non_finite_check_and_unscale_([g, fnx.tensor([1])], fnx.zeros(()),
                                                        fnx.tensor(2.0))
    assert g.tolist() == before


def _update_sequence(found_infs, scale, growth, backoff, interval):
    """The scale and tracker after each update, by the rule written out."""
    tracker, out = 0, []
    for f in found_infs:
        if f:
            scale, tracker = scale * backoff, 0
        elif tracker + 1 == interval:
            if math.isfinite(np.float32(scale * growth)):
                scale = scale * growth
            tracker = 0
        else:
            tracker += 1
        out.append((scale, tracker))
    return out


def test_update_scale_sequence():
    found_infs = [0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0]
    s = fnx.tensor(1024.0)
    t = fnx.tensor(0, dtype=fnx.int32)
    got = []
    for f in found_infs:
        r = aten._amp_update_scale_(s, t, fnx.tensor(float(f)), 2.0, 0.5, 3)
        assert r is s
        got.append((s.item(), t.item()))
    assert got == _update_sequence(found_infs, 1024.0, 2.0, 0.5, 3)
    assert got[2] == (2048.0, 0) and got[3] == (1024.0, 0)


def test_update_scale_does_not_grow_past_float32():
    s = fnx.tensor(3e38)
    t = fnx.tensor(0, dtype=fnx.int32)
    aten._amp_update_scale_(s, t, fnx.tensor(0.0), 2.0, 0.5, 1)
    assert s.item() == pytest.approx(3e38) and t.item() == 0


# --------------------------------------------------------------------------- GradScaler

def _setup(device="cpu", opt_cls=fnx.optim.SGD, **kw):
    w = fnx.nn.Parameter(fnx.tensor([1.0, -2.0, 3.0], device=device))
    opt = opt_cls([w], lr=0.1)
    scaler = fnx.amp.GradScaler(device, **kw)
    return w, opt, scaler


def test_scale_unscale_step_values():
    w, opt, scaler = _setup(init_scale=8.0)
    loss = (w * w).sum()                # grad 2w
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(8.0 * 14.0)
    scaled.backward()
    np.testing.assert_allclose(w.grad.numpy(), 8.0 * 2 * np.array([1.0, -2.0, 3.0]))
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), [2.0, -4.0, 6.0])
    scaler.step(opt)                    # does not unscale a second time
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -1.6, 2.4], rtol=1e-6)
    scaler.update()
    assert scaler.get_scale() == 8.0


def test_scale_of_iterables():
    scaler = fnx.amp.GradScaler("cpu", init_scale=4.0)
    a, b = fnx.ones(2), fnx.ones(3)
    out = scaler.scale([a, (b,)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert out[0].tolist() == [4.0, 4.0] and out[1][0].tolist() == [4.0] * 3


def test_growth_and_backoff_sequence_with_skipped_steps():
    infs = [False, False, True, False, False, False, True]
    w, opt, scaler = _setup(init_scale=16.0, growth_factor=4.0, backoff_factor=0.25,
                            growth_interval=2)
    expect = _update_sequence(infs, 16.0, 4.0, 0.25, 2)
    wv = np.array([1.0, -2.0, 3.0], np.float32)
    for inject, (scale, tracker) in zip(infs, expect):
        scaler.scale((w * w).sum()).backward()
        if inject:
            with fnx.no_grad():
                w.grad[1] = math.nan
        before = w.detach().clone()
        scaler.step(opt)
        if inject:
            assert w.tolist() == before.tolist()          # skipped
        else:
            wv = wv - np.float32(0.1) * (2 * wv)
        np.testing.assert_allclose(w.detach().numpy(), wv, rtol=1e-6)
        scaler.update()
        opt.zero_grad()
        assert scaler.get_scale() == scale
        assert scaler.state_dict()["_growth_tracker"] == tracker


def test_skipped_step_leaves_params_and_optimizer_state_unchanged():
    w, opt, scaler = _setup(opt_cls=fnx.optim.Adam, init_scale=2.0 ** 10)
    scaler.scale((w * w).sum()).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    state = {k: v.clone() for k, v in opt.state[w].items()}
    before = w.detach().clone()
    scaler.scale((w * w).sum()).backward()
    with fnx.no_grad():
        w.grad[0] = math.inf
    assert scaler.step(opt) is None
    assert w.tolist() == before.tolist()
    for k, v in opt.state[w].items():
        assert v.tolist() == state[k].tolist(), k
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 9


def test_state_dict_round_trip():
    w, opt, scaler = _setup(init_scale=64.0, growth_factor=3.0, backoff_factor=0.125,
                            growth_interval=5)
    for _ in range(2):
        scaler.scale((w * w).sum()).backward()
        scaler.step(opt)
        scaler.update()
    sd = scaler.state_dict()
    assert sd == {"scale": 64.0, "growth_factor": 3.0, "backoff_factor": 0.125,
                  "growth_interval": 5, "_growth_tracker": 2}
    other = fnx.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.state_dict() == sd
    # the loaded tracker counts on: three more good steps reach the interval
    w2, opt2, _ = _setup()
    for _ in range(3):
        other.scale((w2 * w2).sum()).backward()
        other.step(opt2)
        other.update()
    assert other.get_scale() == 64.0 * 3.0
    assert pickle.loads(pickle.dumps(other)).state_dict() == other.state_dict()


def test_errors():
    w, opt, scaler = _setup()
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this "
                                           "optimizer since the last update\\(\\)"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        fnx.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        fnx.amp.GradScaler("cpu", backoff_factor=1.0)


def test_fp16_gradients_refused():
    w = fnx.nn.Parameter(fnx.ones(2).half())
    opt = fnx.optim.SGD([w], lr=0.1)
    scaler = fnx.amp.GradScaler("cpu")
    scaler.scale(w.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.step(opt)


@needs_cuda
def test_wrong_device_is_a_clear_error():
    scaler = fnx.amp.GradScaler("cpu")
    x = fnx.ones(1, device="cuda")
    with pytest.raises(RuntimeError, match="GradScaler\\(device='cpu'\\).*cuda:0"):
        scaler.scale(x)
    # gradients on another device than the scale: the check op names the devices
    w = fnx.nn.Parameter(fnx.ones(2, device="cuda"))
    w.grad = fnx.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="same device"):
        aten._amp_foreach_non_finite_check_and_unscale_([w.grad], fnx.zeros(()),
                                                        fnx.tensor(1.0))


@pytest.mark.skipif(fnx.cuda.is_available(), reason="cuda is available: the scaler stays on")
def test_cuda_scaler_without_cuda_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        s = fnx.amp.GradScaler()
    assert not s.is_enabled()
    x = fnx.ones(1)
    assert s.scale(x) is x and s.get_scale() == 1.0


def test_disabled_scaler_is_transparent():
    w, opt, _ = _setup()
    scaler = fnx.amp.GradScaler("cpu", enabled=False)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -1.6, 2.4], rtol=1e-6)
    assert scaler.state_dict() == {} and scaler.get_scale() == 1.0


# --------------------------------------------------------------------------- training loops

def _model(device):
    fnx.manual_seed(0)
    m = fnx.nn.Sequential(fnx.nn.Linear(6, 16), fnx.nn.ReLU(), fnx.nn.Linear(16, 1)).to(device)
    return m, fnx.optim.AdamW(m.parameters(), lr=1e-2)


def _loop(device, dtype, compiled, steps=6, inject_at=(0, 3)):
    torch = fnx      # the PyTorch loop, with only the import changed
    model, opt = _model(device)
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 8, growth_interval=2)
    fnx.manual_seed(1)
    x = torch.randn(32, 6).to(device)
    y = (x.sum(1, keepdim=True) > 0).float()

    def train_step(x, y, poison):
        with torch.autocast(device, dtype=dtype):
            out = model(x)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(out, y)
        scaler.scale(loss * poison).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        return loss.detach()

    step = fnx.compile(train_step) if compiled else train_step
    losses, scales = [], []
    for i in range(steps):
        poison = torch.tensor(math.inf if i in inject_at else 1.0).to(device)
        losses.append(step(x, y, poison).item())
        scales.append(scaler.get_scale())
    return losses, scales, model, step


def test_cpu_bfloat16_loop_eager_and_compiled():
    le, se, me, _ = _loop("cpu", fnx.bfloat16, False)
    lc, sc, mc, step = _loop("cpu", fnx.bfloat16, True)
    # skipped at 0 and 3: the scale backs off there and grows after two good steps
    assert se == [128.0, 128.0, 256.0, 128.0, 128.0, 256.0]
    assert sc == se
    assert le[0] == le[1] and le[3] == le[4]        # skipped steps leave the model as it was
    assert le[2] < le[1] and le[5] < le[4]          # the others train
    np.testing.assert_allclose(lc, le, rtol=2e-3)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), atol=2e-3)
    # one program, no eager op between regions, no host round-trip for the skip decision
    (entry,) = step.entries()
    assert len(entry.parts[1]) == 0 and entry._plan is not None


@needs_cuda
def test_cuda_float16_loop():
    le, se, me, _ = _loop("cuda", fnx.float16, False, steps=4, inject_at=(1,))
    assert se == [256.0, 128.0, 128.0, 256.0]
    assert le[1] == le[2] and le[3] < le[2]
    assert all(p.device.type == "cuda" and p.dtype == fnx.float32 for p in me.parameters())


def test_example_script_trains_compiled():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "train_amp.py"), "--compile",
                           "--steps", "60"], capture_output=True, text=True, timeout=600,
                          env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", proc.stdout)]
    assert losses[-1] < 0.5 * losses[0], proc.stdout
    assert "logits dtype: fnx.bfloat16; weights dtype: fnx.float32" in proc.stdout
