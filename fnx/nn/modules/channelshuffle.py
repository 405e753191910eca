"""``ChannelShuffle`` (ShuffleNet's channel interleaving)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the channels into ``groups`` groups and interleave them.

    >>> import fnx
    >>> cs = fnx.nn.ChannelShuffle(2)
    >>> cs
    ChannelShuffle(groups=2)
    >>> cs(fnx.arange(4.0).view(1, 4, 1, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
