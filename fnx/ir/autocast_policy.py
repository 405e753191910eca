"""Autocast's cast policy, as data: which ops cast their inputs to what, per device type.

PyTorch 2.13's lists (ATen's autocast registrations), one entry per overload
(``name`` is ``name.default``). The kernels that apply a policy are built from this
table (``fnx.keys.autocast``), the coverage table shows it (``python -m fnx.coverage``),
and an op not named here passes through the Autocast keys untouched. The lists also name
ops fnx does not define: they get the policy as soon as they exist.

Policies, as PyTorch names them:

- ``lower_precision_fp``: floating-point inputs on the device are cast to the autocast
  dtype (float16/bfloat16): matrix multiplies and convolutions, where 16-bit inputs with
  float32 accumulation are fast.
- ``fp32``: inputs are cast to float32: ops whose range or accuracy suffers in 16 bits.
- ``fp32_set_opt_dtype``: ops with a ``dtype=`` argument (softmax, sum, ...): when the
  first input is eligible and no dtype is given, they run with ``dtype=float32``.
- ``fp32_append_dtype``: ``norm``: computes in float32 when the first input is eligible.
- ``promote``: ops combining several inputs run in the widest of their floating types.
- ``banned``: raise; PyTorch's message says what to use instead.
"""
from __future__ import annotations

__all__ = ["POLICIES", "POLICY", "policy_of", "BANNED_MESSAGES"]

POLICIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype",
            "promote", "banned")


def _names(text: str) -> tuple:
    return tuple(text.split())


# The lists CUDA (and XPU) share in ATen.
_CUDA_LOWER = _names("""
    _convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d
    conv_transpose2d.input conv_transpose3d.input convolution prelu addmm addmv addr matmul
    einsum mm mv linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot
    _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell
    _scaled_dot_product_flash_attention scaled_dot_product_attention
    cudnn_convolution cudnn_convolution_transpose""")
_CUDA_FP32 = _names("""
    acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan
    pow.Tensor_Scalar pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm
    rms_norm group_norm frobenius_norm.dim nuclear_norm nuclear_norm.dim cosine_similarity
    poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div
    l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss
    soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
    dist pdist cdist renorm logsumexp upsample_nearest1d _upsample_nearest_exact1d
    upsample_nearest2d _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d
    upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa upsample_trilinear3d
    upsample_bicubic2d _upsample_bicubic2d_aa
    upsample_nearest1d.vec _upsample_nearest_exact1d.vec upsample_nearest2d.vec
    _upsample_nearest_exact2d.vec upsample_nearest3d.vec _upsample_nearest_exact3d.vec
    upsample_linear1d.vec upsample_bilinear2d.vec _upsample_bilinear2d_aa.vec
    upsample_trilinear3d.vec upsample_bicubic2d.vec _upsample_bicubic2d_aa.vec""")
# PyTorch's ``.vec`` upsample overloads (F.interpolate's) are composite: they call the
# default overloads, whose autocast kernels cast; fnx's are ops of their own, so they are
# listed too, for the same result.
_CUDA_SET_OPT_DTYPE = _names("""
    prod prod.dim_int softmax.int log_softmax.int cumprod cumsum linalg_vector_norm
    linalg_matrix_norm linalg_matrix_norm.str_ord sum sum.dim_IntList""")
_CUDA_APPEND_DTYPE = _names("norm.Scalar norm.ScalarOpt_dim")
_CUDA_PROMOTE = _names("""
    addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot
    scatter_add""")

_CPU_LOWER = _names("""
    conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding bmm mm linalg_vecdot
    baddbmm addmm _addmm_activation addbmm linear _convolution.deprecated matmul conv_tbc
    mkldnn_rnn_layer conv_transpose1d conv_transpose2d.input conv_transpose3d.input prelu
    scaled_dot_product_attention _native_multi_head_attention""")
_CPU_FP32 = _names("""
    avg_pool3d binary_cross_entropy grid_sampler polar prod prod.dim_int prod.dim_Dimname
    quantile quantile.scalar nanquantile nanquantile.scalar stft stft.center cdist
    grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex
    cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d
    max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d
    replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss
    nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss
    l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
    multi_margin_loss ctc_loss.IntList ctc_loss.Tensor kl_div multilabel_margin_loss
    binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn
    fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond
    linalg_cond.p_str linalg_matrix_rank linalg_matrix_rank.tol_tensor
    linalg_matrix_rank.atol_rtol_tensor linalg_matrix_rank.atol_rtol_float linalg_solve
    linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv
    linalg_householder_product linalg_tensorinv linalg_tensorsolve
    fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
    fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
    multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig
    linalg_eigh linalg_lstsq linalg_inv_ex""")
_CPU_PROMOTE = _names("stack cat index_copy index_copy.dimname")


def _table(**lists) -> dict:
    table = {}
    for policy, names in lists.items():
        for name in names:
            table["aten::" + name.replace(".default", "")] = policy
    return table


#: ``POLICY[device_type]["aten::name.overload"]`` is the op's policy on that device type.
POLICY = {
    "cuda": _table(lower_precision_fp=_CUDA_LOWER, fp32=_CUDA_FP32,
                   fp32_set_opt_dtype=_CUDA_SET_OPT_DTYPE, fp32_append_dtype=_CUDA_APPEND_DTYPE,
                   promote=_CUDA_PROMOTE, banned=("binary_cross_entropy",)),
    "cpu": _table(lower_precision_fp=_CPU_LOWER, fp32=_CPU_FP32, promote=_CPU_PROMOTE),
}

BANNED_MESSAGES = {
    "aten::binary_cross_entropy": (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
        "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
        "layer.\nIn this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
        "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast."),
}


def policy_of(op, device_type: str):
    """The op's policy on ``device_type`` (a name in ``POLICIES``), or None.

    >>> import fnx
    >>> policy_of(fnx.ops.aten.mm.default, "cpu"), policy_of(fnx.ops.aten.add.Tensor, "cpu")
    ('lower_precision_fp', None)
    """
    return POLICY[device_type].get(op.qualname)
