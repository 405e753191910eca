"""The examples run as scripts (short settings) and do what they claim: the seed workflow
eager and compiled with its IR printed, an MLP reaching > 95% accuracy, a character-level
GPT whose loss falls and which prints a sample."""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(script, *args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_quickstart():
    out = run("quickstart.py")
    assert "device: " in out
    assert re.search(r"eager loss: tensor\(\d+\.\d+, grad_fn=", out)
    losses = [float(v) for v in re.findall(r"compiled step \d: loss (\d+\.\d+)", out)]
    assert len(losses) == 3 and losses[-1] < losses[0]
    diff = float(re.search(r"max difference: (\S+)", out).group(1))
    assert diff < 1e-4
    # the captured IR of the model: its aten ops with the parameters as graph inputs
    assert "fnx.ops.aten.linear.default(arg0, l_0, l_1)" in out
    assert "fnx.ops.aten.relu.default" in out and "XLA kernels" in out
    assert "d/da sum(a * a) = tensor([2., 4., 6.])" in out


def test_train_mlp_reaches_95_percent():
    out = run("train_mlp.py", "--quick")
    acc = float(re.search(r"final test accuracy: (\d+\.\d+)%", out).group(1))
    assert acc > 95.0, out[-2000:]
    assert re.search(r"\[#+\.*\] \d+/\d+ loss \d", out)       # the progress bar
    reloaded = float(re.search(r"reloaded model accuracy (\d+\.\d+)%", out).group(1))
    assert reloaded == acc


def test_mini_gpt_loss_falls_and_samples():
    out = run("mini_gpt.py", "--quick")
    steps = [(int(s), float(v)) for s, v in re.findall(r"step (\d+): loss (\d+\.\d+) \(", out)]
    assert steps[0][0] == 1 and len(steps) >= 5
    assert steps[-1][1] < steps[0][1] - 0.3, out
    assert re.search(r"vocabulary of \d+", out)
    sample = out.split("sample:\n", 1)[1]
    assert sample.startswith("Shall I ") and len(sample.strip()) >= 40
