import numpy as np
import pytest

import fnx
from fnx.lower.compiled_function import CompiledFunction


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests that change the default dtype or seed must not leak into others."""
    default = fnx.get_default_dtype()
    yield
    fnx.set_default_dtype(default)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def traces(monkeypatch):
    """A list that grows by one each time fnx.compile traces a function."""
    count = []
    original = CompiledFunction._compile

    def counting(self, *a, **k):
        count.append(1)
        return original(self, *a, **k)
    monkeypatch.setattr(CompiledFunction, "_compile", counting)
    return count
