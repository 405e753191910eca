"""``pytest fnx/<module>.py`` runs that module's doctests alone (the root conftest.py):
under ``--import-mode=importlib`` a module that defines operators must not run twice."""
import subprocess
import sys
from pathlib import Path

import fnx

ROOT = Path(fnx.__file__).resolve().parent.parent


def test_one_op_defining_module_doctests_run_alone():
    # fnx/ir/aten/random.py defines operators and has a doctest (next_key)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "fnx/ir/aten/random.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
