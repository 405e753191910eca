"""``Identity``, ``Linear``, ``Bilinear``."""
from __future__ import annotations

import math

from ... import api as fnx
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input; takes (and ignores) any arguments.

    >>> import fnx
    >>> x = fnx.ones(2)
    >>> fnx.nn.Identity(54, unused="x")(x) is x
    True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` ``[out_features, in_features]``,
    initialized as PyTorch (kaiming-uniform weight, U(-1/sqrt(in), 1/sqrt(in)) bias).

    >>> import fnx
    >>> m = fnx.nn.Linear(3, 2)
    >>> m
    Linear(in_features=3, out_features=2, bias=True)
    >>> m(fnx.ones(5, 3)).shape, m.weight.shape
    (fnx.Size([5, 2]), fnx.Size([2, 3]))
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(fnx.empty(out_features, in_features, device=device,
                                          dtype=dtype))
        if bias:
            self.bias = Parameter(fnx.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y = x1 @ weight @ x2 + bias`` with ``weight`` ``[out, in1, in2]``.

    >>> import fnx
    >>> fnx.nn.Bilinear(3, 4, 5)(fnx.ones(2, 3), fnx.ones(2, 4)).shape
    fnx.Size([2, 5])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(fnx.empty(out_features, in1_features, in2_features,
                                          device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(fnx.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
