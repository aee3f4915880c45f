"""Small layers: UpsamplingNearest2d/UpsamplingBilinear2d, ChannelShuffle."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.layers import Upsample
from cthtorch.nn.modules.module import Module

__all__ = ["UpsamplingNearest2d", "UpsamplingBilinear2d", "ChannelShuffle"]


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return "groups=%s" % self.groups
