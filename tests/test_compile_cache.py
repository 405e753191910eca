"""fnx.compiler.set_cache_dir / FNX_CACHE_DIR: a second process loads the compiled programs
of the first from disk (JAX's persistent compilation cache) and computes the same values."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

_CHILD = r"""
import json, sys
import jax._src.monitoring as monitoring
events = []
monitoring.register_event_listener(lambda event, **kw: events.append(event))
import numpy as np
import fnx
from fnx import nn
fnx.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
opt = fnx.optim.AdamW(model.parameters(), lr=1e-2)

@fnx.compile
def step(x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()

x = fnx.tensor(np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16))
y = fnx.tensor(np.arange(8) % 4)
losses = [float(step(x, y)) for _ in range(3)]
print(json.dumps({"losses": losses,
                  "hits": events.count("/jax/compilation_cache/cache_hits"),
                  "misses": events.count("/jax/compilation_cache/cache_misses")}))
"""


def _run(cache):
    env = dict(os.environ, FNX_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_compiled_step_from_disk(tmp_path):
    first = _run(tmp_path)
    assert first["hits"] == 0 and first["misses"] > 0
    assert any(tmp_path.iterdir())                  # the programs were written
    second = _run(tmp_path)
    assert second["hits"] >= first["misses"] and second["misses"] == 0
    np.testing.assert_array_equal(second["losses"], first["losses"])
    assert first["losses"][2] < first["losses"][0]   # it trained
