"""MaxViT (Tu et al. 2022) as torchvision builds it: a conv stem, then stages of layers that each run an MBConv
(with squeeze-excitation), self-attention within non-overlapping windows (local) and self-attention across a
sparse grid of the same size (global), both with a relative position bias; a pooled LayerNorm/tanh head."""
from collections import OrderedDict
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import _ovewrite_named_param, handle_legacy_interface
from cthtorch.vision.models._weights import _REF, BICUBIC, imagenet
from cthtorch.vision.ops.misc import Conv2dNormActivation, SqueezeExcitation
from cthtorch.vision.ops.stochastic_depth import StochasticDepth

__all__ = ["MaxVit", "MaxVit_T_Weights", "maxvit_t"]


def _get_conv_output_shape(input_size, kernel_size, stride, padding):
    return ((input_size[0] - kernel_size + 2 * padding) // stride + 1,
            (input_size[1] - kernel_size + 2 * padding) // stride + 1)


def _make_block_input_shapes(input_size, n_blocks):
    """the feature map size each stage runs at: the stem and every stage halve it (3x3, stride 2, pad 1)"""
    shapes, size = [], _get_conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        size = _get_conv_output_shape(size, 3, 2, 1)
        shapes.append(size)
    return shapes


def _get_relative_position_index(height, width):
    """(N, N) with N = height * width: for each pair of positions, the row of the (2h-1)(2w-1) offset table"""
    coords = cthtorch.stack(cthtorch.meshgrid([cthtorch.arange(height), cthtorch.arange(width)], indexing="ij"))
    flat = cthtorch.flatten(coords, 1)
    rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += height - 1
    rel[:, :, 1] += width - 1
    rel[:, :, 0] *= 2 * width - 1
    return rel.sum(-1)


class MBConv(nn.Module):
    """pre-norm inverted bottleneck: 1x1 expand, 3x3 depthwise (carrying the stride), squeeze-excitation, 1x1
    project; the shortcut average-pools and projects when the shape changes"""

    def __init__(self, in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                 norm_layer, p_stochastic_dropout=0.0):
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)] + proj
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid = int(out_channels * expansion_ratio)
        sqz = int(out_channels * squeeze_ratio)
        self.stochastic_depth = StochasticDepth(p_stochastic_dropout, mode="row") if p_stochastic_dropout \
            else nn.Identity()
        self.layers = nn.Sequential(OrderedDict([
            ("pre_norm", norm_layer(in_channels)),
            ("conv_a", Conv2dNormActivation(in_channels, mid, kernel_size=1, stride=1, padding=0,
                                            activation_layer=activation_layer, norm_layer=norm_layer, inplace=None)),
            ("conv_b", Conv2dNormActivation(mid, mid, kernel_size=3, stride=stride, padding=1,
                                            activation_layer=activation_layer, norm_layer=norm_layer, groups=mid,
                                            inplace=None)),
            ("squeeze_excitation", SqueezeExcitation(mid, sqz, activation=nn.SiLU)),
            ("conv_c", nn.Conv2d(mid, out_channels, kernel_size=1, bias=True)),
        ]))

    def forward(self, x):
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """attention over the P tokens of each of G groups of a (B, G, P, D) input, plus a learned bias per relative
    offset and head"""

    def __init__(self, feat_dim, head_dim, max_seq_len):
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(max_seq_len ** 0.5)
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim ** -0.5   # torchvision scales by the feature width, not the head width
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            cthtorch.empty(((2 * self.size - 1) * (2 * self.size - 1), self.n_heads), dtype=cthtorch.float32))
        self.register_buffer("relative_position_index", _get_relative_position_index(self.size, self.size))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self):
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        return bias.view(self.max_seq_len, self.max_seq_len, -1).permute(2, 0, 1).contiguous().unsqueeze(0)

    def forward(self, x):
        B, G, P, D = x.shape
        H, DH = self.n_heads, self.head_dim
        q, k, v = cthtorch.chunk(self.to_qkv(x), 3, dim=-1)
        q, k, v = (t.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4) for t in (q, k, v))
        attn = cthtorch.softmax(q @ (k * self.scale_factor).transpose(-2, -1) + self.get_relative_positional_bias(),
                                dim=-1)
        return self.merge((attn @ v).permute(0, 1, 3, 2, 4).reshape(B, G, P, D))


class SwapAxes(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def forward(self, x):
        return cthtorch.swapaxes(x, self.a, self.b)


class WindowPartition(nn.Module):
    """(B, C, H, W) -> (B, H/p * W/p, p*p, C): the p x p windows as groups of tokens"""

    def forward(self, x, p):
        B, C, H, W = x.shape
        x = x.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(B, (H // p) * (W // p), p * p, C)


class WindowDepartition(nn.Module):
    """WindowPartition's inverse"""

    def forward(self, x, p, h_partitions, w_partitions):
        B, G, PP, C = x.shape
        x = x.reshape(B, h_partitions, w_partitions, p, p, C).permute(0, 5, 1, 3, 2, 4)
        return x.reshape(B, C, h_partitions * p, w_partitions * p)


class PartitionAttentionLayer(nn.Module):
    """pre-norm attention and MLP over windows ('window': p x p neighbourhoods) or a grid ('grid': the tokens
    H/p apart, gathered by partitioning into H/p-sized windows and swapping the group and token axes)"""

    def __init__(self, in_channels, head_dim, partition_size, partition_type, grid_size, mlp_ratio, activation_layer,
                 norm_layer, attention_dropout, mlp_dropout, p_stochastic_dropout):
        super().__init__()
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type not in ("grid", "window"):
            raise ValueError("partition_type must be either 'grid' or 'window'")
        if partition_type == "window":
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        self.partition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.departition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.attn_layer = nn.Sequential(norm_layer(in_channels),
                                        RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size ** 2),
                                        nn.Dropout(attention_dropout))
        self.mlp_layer = nn.Sequential(nn.LayerNorm(in_channels), nn.Linear(in_channels, in_channels * mlp_ratio),
                                       activation_layer(), nn.Linear(in_channels * mlp_ratio, in_channels),
                                       nn.Dropout(mlp_dropout))
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x):
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        if self.grid_size[0] % self.p != 0 or self.grid_size[1] % self.p != 0:
            raise AssertionError("Grid size must be divisible by partition size. Got grid size of {} and partition "
                                 "size of {}".format(self.grid_size, self.p))
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, stride, norm_layer,
                 activation_layer, head_dim, mlp_ratio, mlp_dropout, attention_dropout, p_stochastic_dropout,
                 partition_size, grid_size):
        super().__init__()
        attention = partial(PartitionAttentionLayer, out_channels, head_dim, partition_size, grid_size=grid_size,
                            mlp_ratio=mlp_ratio, activation_layer=activation_layer, norm_layer=nn.LayerNorm,
                            attention_dropout=attention_dropout, mlp_dropout=mlp_dropout,
                            p_stochastic_dropout=p_stochastic_dropout)
        self.layers = nn.Sequential(OrderedDict([
            ("MBconv", MBConv(in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                              norm_layer, p_stochastic_dropout=p_stochastic_dropout)),
            ("window_attention", attention(partition_type="window")),
            ("grid_attention", attention(partition_type="grid")),
        ]))

    def forward(self, x):
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """a stage: its first layer halves the resolution"""

    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, norm_layer, activation_layer,
                 head_dim, mlp_ratio, mlp_dropout, attention_dropout, partition_size, input_grid_size, n_layers,
                 p_stochastic):
        super().__init__()
        if not len(p_stochastic) == n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got p_stochastic={p_stochastic}.")
        self.layers = nn.ModuleList()
        self.grid_size = _get_conv_output_shape(input_grid_size, kernel_size=3, stride=2, padding=1)
        for idx, p in enumerate(p_stochastic):
            self.layers.append(MaxVitLayer(
                in_channels=in_channels if idx == 0 else out_channels, out_channels=out_channels,
                squeeze_ratio=squeeze_ratio, expansion_ratio=expansion_ratio, stride=2 if idx == 0 else 1,
                norm_layer=norm_layer, activation_layer=activation_layer, head_dim=head_dim, mlp_ratio=mlp_ratio,
                mlp_dropout=mlp_dropout, attention_dropout=attention_dropout, partition_size=partition_size,
                grid_size=self.grid_size, p_stochastic_dropout=p))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    def __init__(self, input_size, stem_channels, partition_size, block_channels, block_layers, head_dim,
                 stochastic_depth_prob, norm_layer=None, activation_layer=nn.GELU, squeeze_ratio=0.25,
                 expansion_ratio=4, mlp_ratio=4, mlp_dropout=0.0, attention_dropout=0.0, num_classes=1000):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        sizes = _make_block_input_shapes(input_size, len(block_channels))
        for idx, size in enumerate(sizes):
            if size[0] % partition_size != 0 or size[1] % partition_size != 0:
                raise ValueError(f"Input size {size} of block {idx} is not divisible by partition size "
                                 f"{partition_size}. Consider changing the partition size or the input size.\n"
                                 f"Current configuration yields the following block input sizes: {sizes}.")
        self.stem = nn.Sequential(
            Conv2dNormActivation(3, stem_channels, 3, stride=2, norm_layer=norm_layer,
                                 activation_layer=activation_layer, bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None, activation_layer=None,
                                 bias=True))
        input_size = _get_conv_output_shape(input_size, 3, 2, 1)
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        total = sum(block_layers)
        # stochastic depth rises linearly from 0 to stochastic_depth_prob over all layers, rounded as numpy's
        # linspace rounds it (i * step, the last exactly the end), which torchvision's module reprs show
        step = stochastic_depth_prob / (total - 1) if total > 1 else 0.0
        p_all = [i * step for i in range(total - 1)] + [float(stochastic_depth_prob) if total > 1 else 0.0]
        start = 0
        for in_ch, out_ch, n in zip([stem_channels] + block_channels[:-1], block_channels, block_layers):
            self.blocks.append(MaxVitBlock(
                in_ch, out_ch, squeeze_ratio, expansion_ratio, norm_layer, activation_layer, head_dim, mlp_ratio,
                mlp_dropout, attention_dropout, partition_size, input_grid_size=input_size, n_layers=n,
                p_stochastic=p_all[start:start + n]))
            input_size = self.blocks[-1].grid_size
            start += n
        width = block_channels[-1]
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(width),
                                        nn.Linear(width, width), nn.Tanh(), nn.Linear(width, num_classes, bias=False))
        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)


class MaxVit_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("maxvit_t-bc5ab103.pth", 30919624, (83.700, 96.722), 5.558, 118.769,
                             recipe=_REF + "#maxvit", crop=224, resize=224, interpolation=BICUBIC, min_size=(224, 224))
    DEFAULT = IMAGENET1K_V1


def _maxvit(stem_channels, block_channels, block_layers, stochastic_depth_prob, partition_size, head_dim, weights,
            progress, kwargs):
    weights = MaxVit_T_Weights.verify(weights)
    if weights is not None:
        _ovewrite_named_param(kwargs, "input_size", weights.meta["min_size"])
    sd = kwargs.pop("stochastic_depth_prob", stochastic_depth_prob)

    def make(**kw):
        input_size = kw.pop("input_size", (224, 224))
        return MaxVit(input_size=input_size, stem_channels=stem_channels, block_channels=block_channels,
                      block_layers=block_layers, stochastic_depth_prob=sd, head_dim=head_dim,
                      partition_size=partition_size, **kw)
    return _weights.build(MaxVit_T_Weights, weights, progress, make, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MaxVit_T_Weights.IMAGENET1K_V1))
def maxvit_t(*, weights: Optional[MaxVit_T_Weights] = None, progress: bool = True, **kwargs) -> MaxVit:
    return _maxvit(64, [64, 128, 256, 512], [2, 2, 5, 2], 0.2, 7, 32, weights, progress, kwargs)
