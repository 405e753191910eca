"""linspace value for value: each element is one rounding of start + step * i (or
end - step * (steps - 1 - i) for the second half), as PyTorch's CPU kernel computes it
with fused multiply-adds; references from exact rational arithmetic. Compiled linspace
and affine_grid equal eager, so grid_sample's gradient (which jumps at pixel centres) is
the same compiled (the spatial transformer tutorial's case)."""
from fractions import Fraction

import numpy as np
import pytest

import fnx
import fnx.nn.functional as F

CASES = [(-1, 1, 28), (0, 1, 100), (-3.5, 7.25, 33), (2, -5, 7), (0.1, 0.7, 1000)]


def _exact(start, end, steps, np_dtype):
    """Each value rounded once to ``np_dtype`` from its exact rational value."""
    a, b = np_dtype(start), np_dtype(end)
    step = np_dtype((b - a) / np_dtype(steps - 1))
    half = steps // 2
    vals = [Fraction(float(a)) + Fraction(float(step)) * i if i < half else
            Fraction(float(b)) - Fraction(float(step)) * (steps - 1 - i) for i in range(steps)]
    if np_dtype is np.float64:
        return np.array([float(v) for v in vals])
    # float32: round the exact value to nearest float32 (via its two float64 neighbours)
    out = []
    for v in vals:
        d = np.float64(float(v))            # nearest double, then the nearest float32 of v
        f = np.float32(d)
        lo, hi = sorted({f, np.nextafter(f, np.float32(np.inf) if Fraction(float(f)) < v
                                         else np.float32(-np.inf))})
        dl, dh = abs(Fraction(float(lo)) - v), abs(Fraction(float(hi)) - v)
        if dl == dh:        # a tie: to the even significand, as IEEE rounds
            out.append(lo if int(np.array(lo).view(np.int32)) % 2 == 0 else hi)
        else:
            out.append(lo if dl < dh else hi)
    return np.array(out, np.float32)


@pytest.mark.parametrize("start, end, steps", CASES)
@pytest.mark.parametrize("dtype, np_dtype", [(fnx.float32, np.float32),
                                             (fnx.float64, np.float64)])
def test_linspace_is_one_rounding_of_the_exact_value(start, end, steps, dtype, np_dtype):
    got = fnx.linspace(start, end, steps, dtype=dtype).numpy()
    np.testing.assert_array_equal(got, _exact(start, end, steps, np_dtype))
    assert got[-1] == np_dtype(end) and got[0] == np_dtype(start)


@pytest.mark.parametrize("start, end, steps", CASES)
def test_compiled_float32_linspace_equals_eager(start, end, steps):
    f = lambda x: fnx.linspace(start, end, steps) + x      # noqa: E731
    np.testing.assert_array_equal(fnx.compile(f)(fnx.zeros(1)).numpy(),
                                  f(fnx.zeros(1)).numpy())


def test_affine_grid_and_grid_sample_gradient_compiled_equal_eager():
    rng = np.random.default_rng(0)
    image = fnx.tensor(rng.standard_normal((2, 1, 28, 28)).astype(np.float32))
    identity = np.array([[[1, 0, 0], [0, 1, 0]]] * 2, np.float32)

    def loss(theta):
        grid = F.affine_grid(theta, [2, 1, 28, 28], align_corners=False)
        return F.grid_sample(image, grid, align_corners=False).square().sum(), grid

    grads = []
    for fn in (loss, fnx.compile(loss)):
        theta = fnx.tensor(identity, requires_grad=True)
        value, grid = fn(theta)
        value.backward()
        grads.append((grid.detach().numpy(), theta.grad.numpy()))
    (grid_e, g_e), (grid_c, g_c) = grads
    np.testing.assert_array_equal(grid_c, grid_e)
    # pixel centres: x_j = ((2j + 1) / W) - 1 for W = 28, on the float32 grid exactly here
    np.testing.assert_allclose(grid_e[0, 0, :, 0], (2 * np.arange(28) + 1) / 28 - 1,
                               atol=6e-8)
    np.testing.assert_allclose(g_c, g_e, rtol=1e-5, atol=1e-5 * np.abs(g_e).max())
