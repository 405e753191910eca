"""The warnings torch's transformer modules give: ``TransformerEncoder`` asked for the
nested-tensor path its layer rules out, and attention given a key padding mask and an
attention mask of different dtypes."""
import warnings

import pytest

import fnx
from fnx import nn


@pytest.mark.parametrize("kwargs, reason", [
    ({}, "batch_first was not True"),
    ({"batch_first": True, "norm_first": True}, "norm_first was True"),
    ({"batch_first": True, "bias": False}, "passed bias=False"),
    ({"batch_first": True, "activation": fnx.tanh}, "activation_relu_or_gelu was not True"),
])
def test_encoder_warns_why_the_nested_tensor_path_is_off(kwargs, reason):
    layer = nn.TransformerEncoderLayer(8, 2, 16, **kwargs)
    with pytest.warns(UserWarning, match=reason):
        enc = nn.TransformerEncoder(layer, 1)
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True


def test_encoder_quiet_when_the_path_is_possible_or_not_asked_for():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1)
        assert enc.use_nested_tensor is True
        layer = nn.TransformerEncoderLayer(8, 2, 16)
        assert nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).use_nested_tensor \
            is False
    with pytest.warns(UserWarning, match="num_heads is odd"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(9, 3, 16, batch_first=True), 1)


def test_mismatched_mask_dtypes_warn():
    mha = nn.MultiheadAttention(8, 2)
    x = fnx.randn(3, 2, 8)
    causal = nn.Transformer.generate_square_subsequent_mask(3)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        mha(x, x, x, attn_mask=causal, key_padding_mask=fnx.zeros(2, 3, dtype=fnx.bool))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mha(x, x, x, attn_mask=causal, key_padding_mask=fnx.zeros(2, 3))
        mha(x, x, x, attn_mask=causal.isinf(), key_padding_mask=fnx.zeros(2, 3, dtype=fnx.bool))
        mha(x, x, x, key_padding_mask=fnx.zeros(2, 3, dtype=fnx.bool))
