"""Activation layers and ``MultiheadAttention`` (where PyTorch keeps it too).

The layers that only apply a function elementwise, on one input (values as PyTorch 2.13
gives them):

>>> import fnx
>>> from fnx import nn
>>> x = fnx.tensor([-2.0, 0.5, 3.0])
>>> nn.ReLU6()(x), nn.SELU()(x)
(tensor([0.0000, 0.5000, 3.0000]), tensor([-1.5202,  0.5254,  3.1521]))
>>> nn.SiLU()(x), nn.Mish()(x)
(tensor([-0.2384,  0.3112,  2.8577]), tensor([-0.2525,  0.3752,  2.9865]))
>>> nn.Hardsigmoid()(x), nn.Hardswish()(x)
(tensor([0.1667, 0.5833, 1.0000]), tensor([-0.3333,  0.2917,  3.0000]))
>>> nn.Tanh()(x), nn.Sigmoid()(x)
(tensor([-0.9640,  0.4621,  0.9951]), tensor([0.1192, 0.6225, 0.9526]))
>>> nn.Tanhshrink()(x), nn.Softsign()(x)
(tensor([-1.0360,  0.0379,  2.0049]), tensor([-0.6667,  0.3333,  0.7500]))
>>> nn.LogSigmoid()(x), nn.ReLU6(inplace=True)
(tensor([-2.1269, -0.4741, -0.0486]), ReLU6(inplace=True))
"""
from __future__ import annotations

from ... import api as fnx
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
           "Mish", "Tanh", "Sigmoid", "Hardtanh", "Hardsigmoid", "Hardswish", "Hardshrink",
           "Softshrink", "Tanhshrink", "Softsign", "Softplus", "LogSigmoid", "Threshold",
           "GLU", "Softmax", "Softmax2d", "Softmin", "LogSoftmax", "MultiheadAttention", "RReLU"]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation with only an ``inplace`` flag."""
    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class _Plain(Module):
    """An activation without arguments."""
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class ReLU(_Inplace):
    """``max(x, 0)``.

    >>> import fnx
    >>> fnx.nn.ReLU()(fnx.tensor([-1.0, 2.0])), fnx.nn.ReLU(inplace=True)
    (tensor([0., 2.]), ReLU(inplace=True))
    """
    _fn = F.relu


def _elementwise(name, fn, formula, inplace):
    """A layer class applying ``fn`` to its input, with PyTorch's ``inplace`` flag when
    ``fn`` has one (the examples are in the module docstring)."""
    return type(name, (_Inplace if inplace else _Plain,),
                {"_fn": fn, "__doc__": formula, "__module__": __name__, "__qualname__": name})


ReLU6 = _elementwise("ReLU6", F.relu6, "``min(max(x, 0), 6)``.", inplace=True)
SELU = _elementwise("SELU", F.selu, "``scale * elu(x, alpha)`` with the self-normalizing "
                    "constants of Klambauer et al. (2017).", inplace=True)
SiLU = _elementwise("SiLU", F.silu, "``x * sigmoid(x)`` (swish).", inplace=True)
Mish = _elementwise("Mish", F.mish, "``x * tanh(softplus(x))``.", inplace=True)
Hardsigmoid = _elementwise("Hardsigmoid", F.hardsigmoid, "``clamp(x / 6 + 1 / 2, 0, 1)``.",
                           inplace=True)
Hardswish = _elementwise("Hardswish", F.hardswish, "``x * hardsigmoid(x)``.", inplace=True)
Tanh = _elementwise("Tanh", F.tanh, "``tanh(x)``.", inplace=False)
Sigmoid = _elementwise("Sigmoid", F.sigmoid, "``1 / (1 + exp(-x))``.", inplace=False)
Tanhshrink = _elementwise("Tanhshrink", F.tanhshrink, "``x - tanh(x)``.", inplace=False)
Softsign = _elementwise("Softsign", F.softsign, "``x / (1 + |x|)``.", inplace=False)
LogSigmoid = _elementwise("LogSigmoid", F.logsigmoid, "``log(sigmoid(x))``, without overflow.",
                          inplace=False)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                           else "")


class RReLU(Module):
    """Randomized leaky ReLU: while training, each negative element is scaled by a slope
    drawn from ``U(lower, upper)``; in eval mode by ``(lower + upper) / 2``.

    >>> import fnx
    >>> m = fnx.nn.RReLU(0.1, 0.3).eval()
    >>> m, m(fnx.tensor([-1.0, 1.0]))
    (RReLU(lower=0.1, upper=0.3), tensor([-0.2000,  1.0000]))
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class PReLU(Module):
    """Leaky ReLU with a learned slope (one, or one per channel), initialized to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(fnx.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh approximation.

    >>> import fnx
    >>> fnx.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if max_val <= min_val:
            raise ValueError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class _Shrink(Module):
    _fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Shrink):
    _fn = F.hardshrink


class Softshrink(_Shrink):
    _fn = F.softshrink


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """Softmax along ``dim``.

    >>> import fnx
    >>> fnx.nn.Softmax(dim=-1)(fnx.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """
    _fn = F.softmax


class Softmax2d(Module):
    """Softmax over the channels of each location: dim -3 of a ``(N, C, H, W)`` or
    ``(C, H, W)`` input.

    >>> import fnx
    >>> fnx.nn.Softmax2d()(fnx.zeros(1, 2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3)


class Softmin(_SoftmaxBase):
    _fn = F.softmin


class LogSoftmax(_SoftmaxBase):
    _fn = F.log_softmax


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``: inputs ``(L, N, E)``
    (``(N, L, E)`` with ``batch_first``); returns ``(output, attention weights or None)``.

    >>> import fnx
    >>> mha = fnx.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = fnx.ones(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (fnx.Size([3, 5, 8]), fnx.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(fnx.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(fnx.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(fnx.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(fnx.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(fnx.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(fnx.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(fnx.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (query.transpose(1, 0), key.transpose(1, 0),
                                 value.transpose(1, 0))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
