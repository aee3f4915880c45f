"""ChannelShuffle (torch.nn.modules.channelshuffle)."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return "groups=%s" % self.groups
