"""Autocast: the API and its thread-local state, PyTorch's cast policy per op (output dtypes
written out below), values against NumPy with the casts written out, autograd through the
casts, the weight cast cache, and autocast under fnx.compile.

The cuda tests need a cuda device (a JAX GPU, or FNX_CUDA_ON_CPU=1).
"""
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

import fnx
import fnx.testing as ft
from fnx.cuda.amp import GradScaler as CudaGradScaler
from fnx.cuda.amp import autocast as cuda_autocast
from fnx.coverage import coverage_rows
from fnx.dispatch.dispatcher import _ops
from fnx.dispatch.modes import DispatchMode
from fnx.ir.autocast_policy import POLICY

aten = fnx.ops.aten
BF16 = ml_dtypes.bfloat16
needs_cuda = pytest.mark.skipif(not fnx.cuda.is_available(),
                                reason="no cuda device (no JAX GPU; set FNX_CUDA_ON_CPU=1)")


def _names(text):
    return ["aten::" + n for n in text.split()]


# --------------------------------------------------------------------------- expected dtypes
# (input dtype, dtype of every floating output) of each policy op fnx defines, under autocast
# with the device's default dtype. Lower-precision ops get float32 inputs; the rest get
# 16-bit inputs, so a cast to float32 shows.

CPU_EXPECTED = {
    **dict.fromkeys(_names("""
        addmm baddbmm bmm mm matmul linear prelu scaled_dot_product_attention
        conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding conv_transpose1d
        conv_transpose2d.input conv_transpose3d.input"""), ("float32", "bfloat16")),
    **dict.fromkeys(_names("""
        adaptive_avg_pool3d avg_pool3d binary_cross_entropy binary_cross_entropy_with_logits cdist
        cross_entropy_loss grid_sampler grid_sampler_2d grid_sampler_3d huber_loss kl_div l1_loss
        max_pool3d mse_loss adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d
        max_unpool2d max_unpool3d
        nll_loss prod prod.dim_int reflection_pad1d reflection_pad2d replication_pad1d
        replication_pad2d replication_pad3d smooth_l1_loss"""), ("bfloat16", "float32")),
    **dict.fromkeys(_names("""
        cholesky cholesky_inverse cholesky_solve inverse linalg_cholesky linalg_cholesky_ex
        linalg_cond linalg_cond.p_str linalg_eigh linalg_eigvalsh linalg_householder_product
        linalg_inv linalg_inv_ex linalg_lstsq linalg_matrix_rank.atol_rtol_float linalg_qr
        linalg_solve linalg_svd linalg_svdvals linalg_tensorinv linalg_tensorsolve pinverse qr
        svd triangular_solve geqrf ormqr"""), ("bfloat16", "float32")),
    **dict.fromkeys(_names("linalg_eig linalg_eigvals"), ("bfloat16", "complex64")),
    # fft (fp32 on cpu): real-to-complex and complex transforms give complex64, the
    # complex-to-real ones float32
    **dict.fromkeys(_names("""
        fft_fft fft_fft2 fft_fftn fft_ifft fft_ifft2 fft_ifftn fft_rfft fft_rfft2 fft_rfftn
        fft_ihfft"""), ("bfloat16", "complex64")),
    **dict.fromkeys(_names("fft_hfft fft_irfft fft_irfft2 fft_irfftn"), ("bfloat16", "float32")),
    "aten::linalg_vecdot": ("float32", "bfloat16"),
    **dict.fromkeys(_names("quantile quantile.scalar nanquantile nanquantile.scalar"),
                    ("bfloat16", "float32")),
    "aten::polar": ("bfloat16", "complex64"),
    "aten::index_copy": ("bfloat16", "bfloat16"),
    "aten::view_as_complex": ("bfloat16", "complex64"),
    "aten::fake_quantize_per_tensor_affine": ("bfloat16", "float32"),
    # promote: all inputs bfloat16 stay bfloat16 (mixed inputs: test_promote_widens)
    **dict.fromkeys(_names("cat stack"), ("bfloat16", "bfloat16")),
}

CUDA_EXPECTED = {
    **dict.fromkeys(_names("""
        addmm baddbmm bmm mm mv matmul einsum linear prelu scaled_dot_product_attention
        conv1d conv2d conv3d conv_transpose1d conv_transpose2d.input conv_transpose3d.input
        convolution"""), ("float32", "float16")),
    **dict.fromkeys(_names("""
        acos asin cosh erfinv exp expm1 log log10 log1p log2 reciprocal rsqrt sinh tan
        pow.Scalar pow.Tensor_Scalar pow.Tensor_Tensor softplus layer_norm native_layer_norm
        rms_norm group_norm cosine_similarity nll_loss kl_div l1_loss smooth_l1_loss
        huber_loss mse_loss binary_cross_entropy_with_logits cdist logsumexp
        upsample_nearest2d upsample_bilinear2d upsample_nearest1d upsample_nearest3d
        _upsample_nearest_exact1d _upsample_nearest_exact2d _upsample_nearest_exact3d
        upsample_linear1d upsample_trilinear3d upsample_bicubic2d _upsample_bilinear2d_aa
        _upsample_bicubic2d_aa upsample_nearest1d.vec _upsample_nearest_exact1d.vec
        upsample_nearest2d.vec _upsample_nearest_exact2d.vec upsample_nearest3d.vec
        _upsample_nearest_exact3d.vec upsample_linear1d.vec upsample_bilinear2d.vec
        _upsample_bilinear2d_aa.vec upsample_trilinear3d.vec upsample_bicubic2d.vec
        _upsample_bicubic2d_aa.vec
        softmax.int log_softmax.int sum sum.dim_IntList prod prod.dim_int cumsum cumprod
        linalg_vector_norm norm.Scalar norm.ScalarOpt_dim"""), ("float16", "float32")),
    **dict.fromkeys(_names("atan2 dot index_put scatter_add tensordot addcdiv addcmul "
                           "grid_sampler"),
                    ("float16", "float16")),
    **dict.fromkeys(_names("linalg_multi_dot linalg_vecdot"), ("float32", "float16")),
    **dict.fromkeys(_names("linalg_matrix_norm linalg_matrix_norm.str_ord"),
                    ("float16", "float32")),
}


def _defined(device):
    return sorted(n for n in POLICY[device] if n in _ops and POLICY[device][n] != "banned")


def _convert(x, dtype):
    if isinstance(x, fnx.Tensor) and x.dtype == fnx.float32:
        return x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(v, dtype) for v in x)
    return x


def _outputs(r):
    if isinstance(r, fnx.Tensor):
        return [r]
    if isinstance(r, (list, tuple)):
        return [t for x in r for t in _outputs(x)]
    return []


def _run_sample(name, device, in_dtype):
    op = _ops[name]
    info = ft.entry_for(op)
    s = info.sample_inputs(device, fnx.float32)[0]
    dt = getattr(fnx, in_dtype)
    args = _convert(list(s.all_args()), dt)
    kwargs = {k: _convert(v, dt) for k, v in s.kwargs.items()}
    with fnx.autocast(device):
        return _outputs(op(*args, **kwargs))


def test_expected_tables_cover_every_policy_op_fnx_defines():
    assert sorted(CPU_EXPECTED) == _defined("cpu")
    assert sorted(CUDA_EXPECTED) == _defined("cuda")


@pytest.mark.parametrize("name", sorted(CPU_EXPECTED))
def test_cpu_policy_output_dtypes(name):
    in_dtype, want = CPU_EXPECTED[name]
    outs = [t for t in _run_sample(name, "cpu", in_dtype)
            if t.dtype.is_floating_point or t.dtype.is_complex]
    # matrix_rank's only result is an integer: its cast shows in nothing but running
    assert outs or name == "aten::linalg_matrix_rank.atol_rtol_float"
    assert all(str(t.dtype) == f"fnx.{want}" for t in outs), (name, [t.dtype for t in outs])


@needs_cuda
@pytest.mark.parametrize("name", sorted(CUDA_EXPECTED))
def test_cuda_policy_output_dtypes(name):
    in_dtype, want = CUDA_EXPECTED[name]
    outs = [t for t in _run_sample(name, "cuda", in_dtype) if t.dtype.is_floating_point]
    assert outs and all(str(t.dtype) == f"fnx.{want}" for t in outs), \
        (name, [t.dtype for t in outs])
    assert all(t.device.type == "cuda" for t in outs)


def test_ops_outside_the_lists_are_untouched():
    a32, b16 = fnx.randn(3, 4), fnx.randn(3, 4).to(fnx.bfloat16)
    with fnx.autocast("cpu"):
        assert (a32 + a32).dtype == fnx.float32
        assert (b16 + b16).dtype == fnx.bfloat16
        assert fnx.nn.functional.gelu(a32).dtype == fnx.float32
        assert fnx.relu(b16).dtype == fnx.bfloat16
        # on cpu, softmax and sum are not in PyTorch's lists (on cuda they run in float32)
        assert fnx.softmax(b16, -1).dtype == fnx.bfloat16
        assert b16.sum().dtype == fnx.bfloat16
        assert a32.exp().dtype == fnx.float32


def test_only_floating_tensors_on_the_device_are_cast():
    i = fnx.tensor([[1, 2], [3, 4]])
    d = fnx.randn(2, 2, dtype=fnx.float64)
    f = fnx.randn(2, 2)
    with fnx.autocast("cpu"):
        assert (i @ i).dtype == fnx.int64
        assert (d @ d).dtype == fnx.float64            # float64 is never cast
    # cuda autocast leaves cpu tensors alone (set directly: a region warns without cuda)
    fnx.set_autocast_enabled("cuda", True)
    try:
        assert (f @ f).dtype == fnx.float32
        assert fnx.is_autocast_enabled("cuda") and not fnx.is_autocast_enabled("cpu")
    finally:
        fnx.set_autocast_enabled("cuda", False)


def test_promote_widens():
    a32 = fnx.randn(2, 3)
    b16 = fnx.randn(2, 3).to(fnx.bfloat16)
    d64 = fnx.randn(2, 3, dtype=fnx.float64)
    with fnx.autocast("cpu"):
        assert fnx.cat([a32, b16]).dtype == fnx.float32
        assert fnx.stack([b16, a32]).dtype == fnx.float32
        assert fnx.cat([b16, b16]).dtype == fnx.bfloat16
        # float64 inputs take no part in the promotion and are not cast: cat then
        # promotes bfloat16 with float64 by the usual rules
        assert fnx.cat([b16, d64]).dtype == fnx.float64


def test_banned_op_raises_pytorchs_message_only_on_cuda():
    p, t = fnx.rand(4) * 0.8 + 0.1, fnx.rand(4)
    with fnx.autocast("cpu"):      # on cpu it is an fp32 op
        assert fnx.nn.functional.binary_cross_entropy(p.bfloat16(), t).dtype == fnx.float32


@needs_cuda
def test_banned_op_raises_on_cuda():
    p, t = (fnx.rand(4) * 0.8 + 0.1).cuda(), fnx.rand(4).cuda()
    with fnx.autocast("cuda"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            fnx.nn.functional.binary_cross_entropy(p, t)
        # the suggested replacement runs, in float32
        assert fnx.nn.functional.binary_cross_entropy_with_logits(p, t).dtype == fnx.float32


# --------------------------------------------------------------------------- values

def _bf16(a):
    return np.asarray(a, np.float32).astype(BF16).astype(np.float32)


def test_matmul_values_are_bfloat16_rounded_inputs_float32_accumulation(rng):
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16, 5)).astype(np.float32)
    with fnx.autocast("cpu"):
        out = fnx.tensor(a) @ fnx.tensor(b)
    want = _bf16(_bf16(a) @ _bf16(b))
    got = out.float().numpy()
    np.testing.assert_allclose(got, want, rtol=2 ** -7, atol=1e-6)
    # closer to the rounded computation than to the float32 one
    assert np.abs(got - want).max() <= np.abs(got - a @ b).max()


def test_linear_values(rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((3, 6)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    with fnx.autocast("cpu"):
        out = fnx.nn.functional.linear(fnx.tensor(x), fnx.tensor(w), fnx.tensor(bias))
    want = _bf16(_bf16(x) @ _bf16(w).T + _bf16(bias))
    np.testing.assert_allclose(out.float().numpy(), want, rtol=2 ** -7, atol=1e-6)


def test_fp32_op_values_from_16bit_input(rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    xb = fnx.tensor(x).bfloat16()
    y = fnx.tensor(rng.standard_normal((5, 7)).astype(np.float32)).bfloat16()
    with fnx.autocast("cpu"):
        out = fnx.nn.functional.mse_loss(xb, y)
    want = np.mean((_bf16(x) - y.float().numpy()) ** 2)
    assert out.dtype == fnx.float32
    np.testing.assert_allclose(out.item(), want, rtol=1e-6)


@needs_cuda
def test_cuda_softmax_values_in_float32(rng):
    x = rng.standard_normal((3, 9)).astype(np.float32)
    x16 = x.astype(np.float16).astype(np.float32)
    with fnx.autocast("cuda"):
        out = fnx.softmax(fnx.tensor(x).cuda().half(), -1)
    e = np.exp(x16 - x16.max(-1, keepdims=True))
    np.testing.assert_allclose(out.cpu().numpy(), e / e.sum(-1, keepdims=True), rtol=1e-6)


@needs_cuda
def test_cuda_interpolate_runs_in_float32(rng):
    # F.interpolate calls the .vec overloads: they are cast as the default ones (PyTorch)
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    x16 = x.astype(np.float16).astype(np.float32)
    with fnx.autocast("cuda"):
        out = fnx.nn.functional.interpolate(fnx.tensor(x).cuda().half(), scale_factor=2)
    assert out.dtype == fnx.float32
    np.testing.assert_array_equal(out.cpu().numpy(), x16.repeat(2, 2).repeat(2, 3))


# --------------------------------------------------------------------------- API and state

def test_defaults_nesting_and_disable_inside():
    assert fnx.get_autocast_dtype("cpu") == fnx.bfloat16
    assert fnx.get_autocast_dtype("cuda") == fnx.float16
    a = fnx.randn(2, 2)
    assert not fnx.is_autocast_enabled("cpu")
    with fnx.autocast("cpu"):
        assert fnx.is_autocast_enabled("cpu")
        with fnx.autocast("cpu", dtype=fnx.float16):
            assert fnx.get_autocast_dtype("cpu") == fnx.float16
            assert (a @ a).dtype == fnx.float16
            with fnx.autocast("cpu", enabled=False):
                assert not fnx.is_autocast_enabled("cpu")
                assert (a @ a).dtype == fnx.float32
            assert (a @ a).dtype == fnx.float16
        assert fnx.get_autocast_dtype("cpu") == fnx.bfloat16
        assert (a @ a).dtype == fnx.bfloat16
    assert not fnx.is_autocast_enabled("cpu")
    assert (a @ a).dtype == fnx.float32


def test_decorator_and_aliases():
    @fnx.autocast("cpu")
    def f(a):
        return a @ a

    a = fnx.randn(2, 2)
    assert f(a).dtype == fnx.bfloat16 and (a @ a).dtype == fnx.float32
    with fnx.cpu.amp.autocast():
        assert (a @ a).dtype == fnx.bfloat16
    with fnx.amp.autocast("cpu", dtype=fnx.float16):
        assert (a @ a).dtype == fnx.float16
    assert fnx.cuda.amp.autocast().fast_dtype == fnx.float16
    assert cuda_autocast is fnx.cuda.amp.autocast and CudaGradScaler is fnx.cuda.amp.GradScaler


def test_set_autocast_enabled():
    a = fnx.randn(2, 2)
    fnx.set_autocast_enabled("cpu", True)
    try:
        assert (a @ a).dtype == fnx.bfloat16
    finally:
        fnx.set_autocast_enabled("cpu", False)
    assert (a @ a).dtype == fnx.float32


def test_unsupported_dtype_warns_and_disables():
    a = fnx.randn(2, 2)
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        ctx = fnx.autocast("cpu", dtype=fnx.float32)
    with ctx:
        assert not fnx.is_autocast_enabled("cpu")
        assert (a @ a).dtype == fnx.float32


@pytest.mark.skipif(fnx.cuda.is_available(), reason="cuda is available: autocast stays on")
def test_cuda_autocast_without_cuda_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast"):
        ctx = fnx.autocast("cuda")
    with ctx:
        assert not fnx.is_autocast_enabled("cuda")


def test_bad_device_type():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        fnx.autocast("meta")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        fnx.autocast(fnx.device("cpu"))


def test_state_is_thread_local():
    a = fnx.randn(4, 4)
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["enabled"] = fnx.is_autocast_enabled("cpu")
        seen["dtype"] = (a @ a).dtype
        with fnx.autocast("cpu", dtype=fnx.float16):
            seen["own"] = (a @ a).dtype
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with fnx.autocast("cpu"):
        inside.set()
        release.wait()
        assert (a @ a).dtype == fnx.bfloat16        # the other thread's region left ours
    t.join()
    assert seen == {"enabled": False, "dtype": fnx.float32, "own": fnx.float16}


# --------------------------------------------------------------------------- autograd

def test_grads_come_back_in_the_leafs_dtype(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    xt, wt = fnx.tensor(x, requires_grad=True), fnx.tensor(w, requires_grad=True)
    with fnx.autocast("cpu"):
        y = xt @ wt
        loss = y.float().sum()
    loss.backward()
    assert y.dtype == fnx.bfloat16
    assert xt.grad.dtype == fnx.float32 and wt.grad.dtype == fnx.float32
    # d(sum(x @ w))/dw = x^T 1, computed on the bfloat16 casts
    want_w = _bf16(_bf16(x).T @ np.ones((4, 2), np.float32))
    np.testing.assert_allclose(wt.grad.numpy(), want_w, rtol=2 ** -7)
    want_x = _bf16(np.ones((4, 2), np.float32) @ _bf16(w).T)
    np.testing.assert_allclose(xt.grad.numpy(), want_x, rtol=2 ** -7)


# --------------------------------------------------------------------------- cast cache

class _CountCasts(DispatchMode):
    def __init__(self):
        self.casts = 0

    def handle(self, op, ks, args, kwargs):
        if op is aten._to_copy.default:
            self.casts += 1
        return self.run_below(op, ks, args, kwargs)


def test_weight_is_cast_once_per_region():
    w = fnx.randn(4, 4, requires_grad=True)
    x = fnx.randn(2, 4)         # not a leaf that requires grad: cast every time
    with _CountCasts() as m:
        with fnx.autocast("cpu"):
            y1 = x @ w
            y2 = x @ w
        assert m.casts == 3                     # w once, x twice
        with fnx.autocast("cpu"):
            y3 = x @ w
        assert m.casts == 5                     # a new region casts w again
    # the same cast is reused: both products' backward reach the same ToCopy node
    assert y1.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0]
    assert y3.grad_fn.next_functions[1][0] is not y1.grad_fn.next_functions[1][0]
    (y1.float().sum() + y2.float().sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * _bf16(x.numpy()).T @ np.ones((2, 4)),
                               rtol=2 ** -7)


def test_cast_cache_recasts_a_changed_weight_and_can_be_disabled():
    w = fnx.ones(2, 2, requires_grad=True)
    x = fnx.ones(1, 2)
    with fnx.autocast("cpu"):
        assert (x @ w).float().sum().item() == 4.0
        with fnx.no_grad():
            w.mul_(3.0)                         # an optimizer step inside the region
        assert (x @ w).float().sum().item() == 12.0
    with _CountCasts() as m:
        with fnx.autocast("cpu", cache_enabled=False):
            x @ w
            x @ w
        assert m.casts == 4


def test_cache_is_emptied_when_the_outermost_region_exits():
    w = fnx.randn(2, 2, requires_grad=True)
    with fnx.autocast("cpu"):
        with fnx.autocast("cpu"):
            w @ w
        assert fnx.core.tls.state.autocast_cache      # inner exit keeps it
    assert not fnx.core.tls.state.autocast_cache


# --------------------------------------------------------------------------- compiled

def test_compiled_equals_eager_under_autocast():
    fnx.manual_seed(0)
    lin = fnx.nn.Linear(6, 4)
    x = fnx.randn(5, 6)

    def f(x):
        with fnx.autocast("cpu"):
            h = lin(x)
            return h, fnx.cat([h, x[:, :4]]), fnx.nn.functional.mse_loss(h, x[:, :4].bfloat16())

    eager = f(x)
    compiled = fnx.compile(f)(x)
    assert [t.dtype for t in compiled] == [fnx.bfloat16, fnx.float32, fnx.float32]
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype
        # XLA may sum in another order: float32 ulps, or one bfloat16 ulp
        rtol = 2 ** -7 if c.dtype == fnx.bfloat16 else 1e-6
        np.testing.assert_allclose(c.detach().float().numpy(), e.detach().float().numpy(),
                                   rtol=rtol)


def test_autocast_state_is_part_of_the_compile_guards():
    fnx.manual_seed(0)
    w = fnx.randn(3, 3)
    g = fnx.compile(lambda x: x @ w)
    x = fnx.randn(2, 3)
    assert g(x).dtype == fnx.float32
    with fnx.autocast("cpu"):
        assert g(x).dtype == fnx.bfloat16
        with fnx.autocast("cpu", dtype=fnx.float16):
            assert g(x).dtype == fnx.float16
    assert g(x).dtype == fnx.float32
    assert len(g.entries()) == 3


def test_compiled_backward_under_autocast_matches_eager():
    fnx.manual_seed(0)
    a = fnx.nn.Linear(4, 3)
    b = fnx.nn.Linear(4, 3)
    b.load_state_dict(a.state_dict())
    x = fnx.randn(6, 4)

    def step(m):
        def f(x):
            with fnx.autocast("cpu"):
                loss = m(x).float().pow(2).mean()
            loss.backward()
            return loss.detach()
        return f

    le = step(a)(x)
    lc = fnx.compile(step(b))(x)
    np.testing.assert_allclose(lc.numpy(), le.numpy(), rtol=1e-6)
    assert b.weight.grad.dtype == fnx.float32
    np.testing.assert_allclose(b.weight.grad.numpy(), a.weight.grad.numpy(), rtol=1e-6)


def test_no_warning_for_supported_dtypes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fnx.autocast("cpu", dtype=fnx.float16), fnx.autocast("cpu", dtype=fnx.bfloat16):
            pass


def test_coverage_table_shows_each_ops_policy():
    rows = {r["op"]: r for r in coverage_rows(run=False, level="core")}
    rows.update({r["op"]: r for r in coverage_rows(run=False, level="aten")})
    assert rows["mm.default"]["autocast"] == "cuda lower; cpu lower"
    assert rows["binary_cross_entropy.default"]["autocast"] == "cuda banned; cpu fp32"
    assert rows["softmax.int"]["autocast"] == "cuda fp32 (dtype=)"
    assert rows["cat.default"]["autocast"] == "cpu promote"
    assert rows["add.Tensor"]["autocast"] == ""
