import numpy as np
import pytest

import fnx


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests that change the default dtype or seed must not leak into others."""
    default = fnx.get_default_dtype()
    yield
    fnx.set_default_dtype(default)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
