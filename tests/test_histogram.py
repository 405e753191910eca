"""fnx.histogram against np.histogram: equal bins over the data's range or a given one,
explicit edges, weights, density; eagerly, compiled and on the cuda backend."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import fnx

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("compiled", [False, True])
def test_equal_bins_match_numpy(compiled):
    x = RNG.standard_normal(500)
    w = RNG.uniform(0, 2, 500)
    def hist(a, b):
        return fnx.histogram(a, 12, weight=b, density=True)

    f = fnx.compile(hist) if compiled else hist
    h, e = f(fnx.tensor(x), fnx.tensor(w))
    hn, en = np.histogram(x, 12, weights=w, density=True)
    np.testing.assert_allclose(h.numpy(), hn, rtol=1e-12)
    np.testing.assert_allclose(e.numpy(), en, rtol=1e-12)


def test_range_ignores_outside_and_keeps_last_edge():
    x = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 9.0, np.nan])
    h, e = fnx.histogram(fnx.tensor(x), 4, range=(0.0, 4.0))
    hn, en = np.histogram(x[~np.isnan(x)], 4, range=(0.0, 4.0))
    np.testing.assert_array_equal(h.numpy(), hn)
    np.testing.assert_array_equal(e.numpy(), en)


def test_edges_tensor_and_method():
    x = fnx.tensor([0.5, 1.5, 1.5, 3.0, 7.0])
    edges = fnx.tensor([0.0, 1.0, 2.0, 3.0])
    r = x.histogram(edges)
    np.testing.assert_array_equal(r.hist.numpy(), np.histogram(x.numpy(), edges.numpy())[0])
    np.testing.assert_array_equal(r.bin_edges.numpy(), edges.numpy())


def test_single_value_widens_by_half():
    h, e = fnx.histogram(fnx.tensor([1.0, 1.0]), 2)
    np.testing.assert_array_equal(e.numpy(), [0.5, 1.0, 1.5])
    np.testing.assert_array_equal(h.numpy(), np.histogram([1.0, 1.0], [0.5, 1.0, 1.5])[0])


def test_errors():
    with pytest.raises(NotImplementedError, match="histogramdd"):
        fnx.histogram(fnx.tensor([1, 2]), 2)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        fnx.histogram(fnx.tensor([1.0]), 2, range=(2.0, 1.0))
    with pytest.raises(RuntimeError, match="same dtype"):
        fnx.histogram(fnx.tensor([1.0]), fnx.tensor([0.0, 2.0], dtype=fnx.float64))


def test_cuda_backend():
    code = ("import fnx, numpy as np\n"
            "x = np.random.default_rng(0).standard_normal(200)\n"
            "h, e = fnx.histogram(fnx.tensor(x).cuda(), 8)\n"
            "hn, en = np.histogram(x, 8)\n"
            "assert (h.cpu().numpy() == hn).all() and np.allclose(e.cpu().numpy(), en)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, FNX_CUDA_ON_CPU="1"), timeout=300)
    assert r.returncode == 0, r.stderr
