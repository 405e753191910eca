"""``TransformerEncoderLayer`` and ``TransformerEncoder``, as PyTorch's."""
from __future__ import annotations

import copy

from ... import api as fnx
from .. import functional as F
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoderLayer", "TransformerEncoder",
           "generate_square_subsequent_mask"]


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The additive causal mask: 0 on and below the diagonal, -inf above.

    >>> import fnx
    >>> fnx.nn.Transformer.generate_square_subsequent_mask(3)
    tensor([[0., -inf, -inf],
            [0., 0., -inf],
            [0., 0., 0.]])
    """
    return fnx.triu(fnx.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


class Transformer:
    """Namespace for ``Transformer.generate_square_subsequent_mask`` (the full
    encoder-decoder ``nn.Transformer`` is not provided)."""
    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection, dropout
    and layer norm (after, or before with ``norm_first``).

    >>> import fnx
    >>> layer = fnx.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32,
    ...                                        batch_first=True)
    >>> layer(fnx.ones(2, 5, 16)).shape
    fnx.Size([2, 5, 16])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
            activation = _ACTIVATIONS[activation]
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm``."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        for mod in self.layers:
            out = mod(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        if self.norm is not None:
            out = self.norm(out)
        return out
