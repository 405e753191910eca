"""PyTorch parity gaps: nearest ``grid_sample``'s grid gradient, ``unfold`` on 1-/2-D input."""
import numpy as np
import pytest

import fnx
import fnx.nn.functional as F


@pytest.mark.parametrize("shape,gshape", [((2, 3, 4, 5), (2, 3, 4, 2)),
                                          ((1, 2, 3, 4, 5), (1, 2, 3, 3, 3))])
def test_grid_sample_nearest_grid_grad_is_zeros(shape, gshape):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal(shape).astype(np.float32)
    gv = (rng.random(gshape) * 2.4 - 1.2).astype(np.float32)
    x = fnx.tensor(xv, requires_grad=True)
    g = fnx.tensor(gv, requires_grad=True)
    y = F.grid_sample(x, g, mode="nearest", align_corners=False)
    y.sum().backward()
    assert g.grad is not None
    np.testing.assert_array_equal(g.grad.numpy(), np.zeros(gshape, np.float32))
    # the values themselves are unchanged: compare with a NumPy nearest sampler (2-D case)
    if len(shape) == 4:
        n, c, h, w = shape
        ix = np.round(((gv[..., 0] + 1) * w - 1) / 2)
        iy = np.round(((gv[..., 1] + 1) * h - 1) / 2)
        ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        xi, yi = np.clip(ix, 0, w - 1).astype(int), np.clip(iy, 0, h - 1).astype(int)
        ref = np.stack([xv[b][:, yi[b], xi[b]] * ok[b] for b in range(n)])
        np.testing.assert_allclose(y.detach().numpy(), ref, rtol=0, atol=0)


def test_grid_sample_nearest_inf_grid_keeps_values():
    x = fnx.tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2), requires_grad=True)
    g = fnx.tensor(np.array([[[[np.inf, 0.0], [-0.9, -0.9]]]], np.float32), requires_grad=True)
    y = F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=False)
    # inf clamps to the last column under border padding; (-0.9, -0.9) is the top-left pixel
    np.testing.assert_array_equal(y.detach().numpy().ravel(), [1.0, 0.0])
    y.sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.zeros((1, 1, 2, 2), np.float32))


@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_unfold_low_rank_raises_index_error(shape):
    x = fnx.randn(*shape)
    nd = len(shape)
    with pytest.raises(IndexError, match=rf"expected to be in range of \[-{nd}, {nd - 1}\], "
                                         rf"but got {nd}"):
        F.unfold(x, 2)


def test_unfold_5d_still_runtime_error():
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        F.unfold(fnx.randn(2, 2, 2, 2, 2), 2)
