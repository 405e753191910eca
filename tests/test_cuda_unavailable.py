"""Without a JAX GPU (and without the FNX_CUDA_ON_CPU switch) cuda is unavailable, and
asking for it says what to install.  Runs in a subprocess with the switch off."""
import os
import subprocess
import sys

CODE = """
import fnx, jax
if any(d.platform == 'gpu' for d in jax.devices()):
    raise SystemExit(0)          # a real GPU: nothing to check here
assert fnx.cuda.is_available() is False and fnx.cuda.device_count() == 0
makers = (lambda: fnx.zeros(2, device='cuda'), lambda: fnx.ones(2).cuda(),
          lambda: fnx.ones(2).to('cuda:0'), lambda: fnx.cuda.set_device(0))
for make in makers:
    try:
        make()
    except RuntimeError as e:
        assert "pip install 'fnx[cuda12]'" in str(e), e
        assert 'no JAX GPU backend' in str(e), e
    else:
        raise AssertionError('no error')
assert fnx.cuda.current_device() == 0
fnx.manual_seed(0)      # the cuda seed hook does nothing without devices
"""


def test_without_a_gpu_cuda_is_unavailable_and_says_what_to_install():
    env = {k: v for k, v in os.environ.items() if k != "FNX_CUDA_ON_CPU"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
