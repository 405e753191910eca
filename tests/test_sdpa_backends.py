"""Attention backend selection: fnx.nn.attention.sdpa_kernel and the
fnx.backends.cuda.enable_*_sdp flags (one kernel serves every backend; none enabled is
PyTorch's "No available kernel" error, eager and compiled)."""
import numpy as np
import pytest

import fnx
import fnx.nn.functional as F
from fnx.backends import cuda as bc
from fnx.nn.attention import SDPBackend, sdpa_kernel


def _attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def _flags():
    return (bc.math_sdp_enabled(), bc.flash_sdp_enabled(), bc.mem_efficient_sdp_enabled(),
            bc.cudnn_sdp_enabled())


def test_sdpa_kernel_sets_the_flags_inside_and_restores_them():
    assert _flags() == (True, True, True, True)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]) as ctx:
        assert ctx == {} and _flags() == (False, True, False, True)
        out = F.scaled_dot_product_attention(fnx.tensor(q), fnx.tensor(k), fnx.tensor(v))
    np.testing.assert_allclose(out.numpy(), _attention(q, k, v), rtol=1e-5, atol=1e-6)
    assert _flags() == (True, True, True, True)
    with pytest.raises(AssertionError, match="must be an instance of SDPBackend"):
        with sdpa_kernel(["flash"]):
            pass

    @sdpa_kernel(SDPBackend.MATH)
    def only_math():
        return _flags()
    assert only_math() == (True, False, False, False) and _flags() == (True,) * 4


def test_cuda_flags_and_the_deprecated_context():
    bc.enable_flash_sdp(False)
    try:
        assert _flags() == (True, False, True, True)
        with pytest.warns(FutureWarning, match="sdp_kernel.* is deprecated"):
            with bc.sdp_kernel(enable_math=False, enable_flash=True):
                assert _flags() == (False, True, True, True)
        assert _flags() == (True, False, True, True)
    finally:
        bc.enable_flash_sdp(True)
    bc.allow_fp16_bf16_reduction_math_sdp(False)
    assert not bc.fp16_bf16_reduction_math_sdp_allowed()
    bc.allow_fp16_bf16_reduction_math_sdp(True)


def test_no_enabled_backend_raises_eager_and_compiled():
    q = fnx.ones(1, 2, 4)

    def attend(q):
        return F.scaled_dot_product_attention(q, q, q, is_causal=True)
    compiled = fnx.compile(attend)
    expected = compiled(q)
    with sdpa_kernel([]):
        for fn in (attend, compiled):
            with pytest.raises(RuntimeError, match="No available kernel. Aborting execution"):
                fn(q)
    np.testing.assert_array_equal(compiled(q).numpy(), expected.numpy())
    np.testing.assert_allclose(expected.numpy(), np.ones((1, 2, 4)), rtol=1e-6)
