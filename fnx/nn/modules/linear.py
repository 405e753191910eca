"""``Identity``, ``Linear``, ``LazyLinear``, ``Bilinear``."""
from __future__ import annotations

import math

from ... import api as fnx
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Identity", "Linear", "LazyLinear", "Bilinear"]


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


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input: until then
    its weight and bias are ``UninitializedParameter``s (the same objects are filled in,
    so an optimizer made before the first call trains them); then it becomes a ``Linear``
    (``fnx.nn.modules.lazy``).

    >>> import fnx
    >>> m = fnx.nn.LazyLinear(2)
    >>> m
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> m(fnx.ones(5, 3)).shape, m
    (fnx.Size([5, 2]), Linear(in_features=3, out_features=2, bias=True))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        # (Linear's own 0-input parameters are replaced before any initialization)
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """Give the parameters their shapes from ``input`` and PyTorch's initialization."""
        if not self.has_uninitialized_params():
            return
        if input.ndim == 0:
            raise RuntimeError("LazyLinear: the input must have at least one dim to infer "
                               "in_features from")
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))
        self.reset_parameters()


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
