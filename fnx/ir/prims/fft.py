"""FFT prims: complex-to-complex, real-to-complex and complex-to-real transforms over
normalized dims, unnormalized both ways (the inverse transforms are not scaled by 1/n)."""
from __future__ import annotations

from ...core import dtype as D
from ...ops import prims as _p
from ..registry import TensorMeta, derivative
from ._common import prim
from .checks import COMPLEX, check_category, check_dims, check_tensor, fail, int_arg

__all__ = ["fft_c2c", "fft_r2c", "fft_c2r"]


def _fft_dims(name, self, dim):
    dims = check_dims(name, dim, self.ndim, "dim")
    for d in dims:
        if self.shape[d] == 0:
            raise fail(name, f"invalid number of data points (0) along dim {d}")
    return dims


def _fft_c2c_meta(self, dim, forward):
    check_tensor("fft_c2c", "self", self)
    check_category("fft_c2c", self, COMPLEX)
    _fft_dims("fft_c2c", self, dim)
    return TensorMeta(tuple(self.shape), self.dtype)


def _fft_r2c_meta(self, dim, onesided):
    n = "fft_r2c"
    check_tensor(n, "self", self)
    if self.dtype not in (D.float32, D.float64):
        raise fail(n, f"expected a float32 or float64 tensor, got {self.dtype.name}")
    dims = _fft_dims(n, self, dim)
    shape = list(self.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return TensorMeta(tuple(shape), self.dtype.to_complex())


def _fft_c2r_meta(self, dim, last_dim_size):
    n = "fft_c2r"
    check_tensor(n, "self", self)
    check_category(n, self, COMPLEX)
    dims = _fft_dims(n, self, dim)
    if not dims:
        raise fail(n, "needs at least one dim")
    last = int_arg(n, "last_dim_size", last_dim_size)
    if last < 1:
        raise fail(n, f"last_dim_size {last} must be >= 1")
    if self.shape[dims[-1]] != last // 2 + 1:
        raise fail(n, f"dim {dims[-1]} has size {self.shape[dims[-1]]}, expected "
                      f"last_dim_size // 2 + 1 = {last // 2 + 1}")
    shape = list(self.shape)
    shape[dims[-1]] = last
    return TensorMeta(tuple(shape), self.dtype.to_real())


fft_c2c = prim("fft_c2c(Tensor self, int[] dim, bool forward) -> Tensor", _fft_c2c_meta)
fft_r2c = prim("fft_r2c(Tensor self, int[] dim, bool onesided) -> Tensor", _fft_r2c_meta)
fft_c2r = prim("fft_c2r(Tensor self, int[] dim, SymInt last_dim_size) -> Tensor",
                _fft_c2r_meta)


# Unnormalized transforms are linear maps A; the gradient is A^H applied to grad (the
# transform the other way), restricted as the forward was.

@derivative(fft_c2c)
def _fft_c2c_backward(grad, dim, forward):
    return _p.fft_c2c(grad, dim, not forward)


@derivative(fft_r2c)
def _fft_r2c_backward(grad, self_shape, dim, onesided):
    if onesided and dim:
        # the one-sided half is the full transform cropped: zero-pad it back
        last = dim[-1]
        high = [0] * grad.ndim
        high[last] = self_shape[last] - grad.shape[last]
        if high[last]:
            grad = _p.pad(grad, 0, [0] * grad.ndim, high, [0] * grad.ndim)
    return _p.real(_p.fft_c2c(grad, dim, False))


@derivative(fft_c2r)
def _fft_c2r_backward(grad, dim, last_dim_size):
    # c2r reads entries 1 .. n - m of the half spectrum twice (once through their Hermitian
    # mirror), so their gradient doubles (PyTorch's fft_c2r_backward)
    g = _p.fft_r2c(grad, dim, True)
    last = dim[-1]
    m = g.shape[last]
    twice = last_dim_size - m
    if twice > 0:
        parts = [_p.full([1], 1, dtype=g.dtype, device=g.device),
                 _p.full([twice], 2, dtype=g.dtype, device=g.device)]
        if m - 1 - twice:
            parts.append(_p.full([m - 1 - twice], 1, dtype=g.dtype, device=g.device))
        w = _p.broadcast_in_dim(_p.concatenate(parts, 0), list(g.shape), [last])
        g = _p.mul(g, w)
    return g
