"""Swin Transformer V1 and V2 (Liu et al. 2021, 2022) as torchvision builds them: a 4x4 patch embedding, stages of
shifted-window self-attention blocks (channels-last) joined by 2x2 patch merging, then a norm, average pool and
linear head. V1 adds a learned relative position bias table; V2 uses scaled cosine attention with a log-spaced
continuous position bias MLP, norms after the residual branches, and merges before its norm."""
import math
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import fx, nn
from cthtorch.nn import functional as F
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import handle_legacy_interface
from cthtorch.vision.models._weights import _REF, BICUBIC, imagenet
from cthtorch.vision.ops.misc import MLP, Permute
from cthtorch.vision.ops.stochastic_depth import StochasticDepth

__all__ = ["SwinTransformer", "Swin_T_Weights", "Swin_S_Weights", "Swin_B_Weights", "Swin_V2_T_Weights",
           "Swin_V2_S_Weights", "Swin_V2_B_Weights", "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s",
           "swin_v2_b"]


def _merge_quadrants(x):
    """(..., H, W, C) -> (..., ceil(H/2), ceil(W/2), 4C): each 2x2 patch's four pixels side by side, in the order
    (top-left, bottom-left, top-right, bottom-right); odd sizes padded with zeros first"""
    H, W = x.shape[-3:-1]
    x = F.pad(x, (0, 0, 0, W % 2, 0, H % 2))
    return cthtorch.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :],
                         x[..., 1::2, 1::2, :]], -1)


# leaves of fx tracing, as torchvision wraps them: their shape arithmetic and padding are not traceable
fx.wrap("_merge_quadrants")


class PatchMerging(nn.Module):
    """Halves the resolution and doubles the width: merge 2x2 patches, norm, project 4C -> 2C."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        return self.reduction(self.norm(_merge_quadrants(x)))


class PatchMergingV2(nn.Module):
    """V2's patch merging: the projection first, the norm on its 2C output."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(_merge_quadrants(x)))


def _shift_mask(pH, pW, window_size, shift_size, num_windows, like):
    """-100 between tokens of one window that came from different regions before the cyclic shift, else 0:
    (num_windows, N, N)"""
    regions = like.new_zeros((pH, pW))
    label = 0
    for hs in ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None)):
        for ws in ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None)):
            regions[hs[0]:hs[1], ws[0]:ws[1]] = label
            label += 1
    regions = regions.view(pH // window_size[0], window_size[0], pW // window_size[1], window_size[1])
    regions = regions.permute(0, 2, 1, 3).reshape(num_windows, window_size[0] * window_size[1])
    diff = regions.unsqueeze(1) - regions.unsqueeze(2)
    return diff.masked_fill(diff != 0, -100.0).masked_fill(diff == 0, 0.0)


def shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias, window_size, num_heads,
                             shift_size, attention_dropout=0.0, dropout=0.0, qkv_bias=None, proj_bias=None,
                             logit_scale=None, training=True):
    """Multi-head self-attention within (shifted) windows of a (B, H, W, C) input, torchvision's functional form."""
    B, H, W, C = input.shape
    pad_r = (window_size[1] - W % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - H % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pH, pW, _ = x.shape
    shift_size = list(shift_size)
    # a window that covers the whole (padded) map has nothing to shift
    if window_size[0] >= pH:
        shift_size[0] = 0
    if window_size[1] >= pW:
        shift_size[1] = 0
    shifted = sum(shift_size) > 0
    if shifted:
        x = cthtorch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    nwh, nww = pH // window_size[0], pW // window_size[1]
    num_windows = nwh * nww
    x = x.view(B, nwh, window_size[0], nww, window_size[1], C).permute(0, 1, 3, 2, 4, 5)
    x = x.reshape(B * num_windows, window_size[0] * window_size[1], C)
    if logit_scale is not None and qkv_bias is not None:   # V2 has no key bias
        qkv_bias = qkv_bias.clone()
        third = qkv_bias.numel() // 3
        qkv_bias[third:2 * third].zero_()
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), x.size(1), 3, num_heads, C // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:   # cosine attention with a learned, clamped temperature
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * cthtorch.clamp(logit_scale, max=math.log(100.0)).exp()
    else:
        attn = (q * (C // num_heads) ** -0.5) @ k.transpose(-2, -1)
    attn = attn + relative_position_bias
    if shifted:
        mask = _shift_mask(pH, pW, window_size, shift_size, num_windows, x)
        attn = attn.view(x.size(0) // num_windows, num_windows, num_heads, x.size(1), x.size(1))
        attn = (attn + mask.unsqueeze(1).unsqueeze(0)).view(-1, num_heads, x.size(1), x.size(1))
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = (attn @ v).transpose(1, 2).reshape(x.size(0), x.size(1), C)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(B, nwh, nww, window_size[0], window_size[1], C).permute(0, 1, 3, 2, 4, 5).reshape(B, pH, pW, C)
    if shifted:
        x = cthtorch.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :H, :W, :].contiguous()


fx.wrap("shifted_window_attention")


def _relative_position_index(window_size):
    """for each (query, key) token pair of a window, the row of the (2wh-1)(2ww-1) offset table: flat (N*N,)"""
    coords = cthtorch.stack(cthtorch.meshgrid(cthtorch.arange(window_size[0]), cthtorch.arange(window_size[1]),
                                              indexing="ij")).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += window_size[0] - 1
    rel[:, :, 1] += window_size[1] - 1
    rel[:, :, 0] *= 2 * window_size[1] - 1
    return rel.sum(-1).flatten()


class ShiftedWindowAttention(nn.Module):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size, self.shift_size, self.num_heads = window_size, shift_size, num_heads
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.define_relative_position_index()

    def define_relative_position_bias_table(self):
        self.relative_position_bias_table = nn.Parameter(cthtorch.zeros(
            (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1), self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def define_relative_position_index(self):
        self.register_buffer("relative_position_index", _relative_position_index(self.window_size))

    def _bias_from(self, table):
        n = self.window_size[0] * self.window_size[1]
        return table[self.relative_position_index].view(n, n, -1).permute(2, 0, 1).contiguous().unsqueeze(0)

    def get_relative_position_bias(self):
        return self._bias_from(self.relative_position_bias_table)

    def forward(self, x):
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(), self.window_size,
            self.num_heads, shift_size=self.shift_size, attention_dropout=self.attention_dropout,
            dropout=self.dropout, qkv_bias=self.qkv.bias, proj_bias=self.proj.bias,
            logit_scale=getattr(self, "logit_scale", None), training=self.training)   # V2's cosine attention


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias, proj_bias=proj_bias,
                         attention_dropout=attention_dropout, dropout=dropout)
        self.logit_scale = nn.Parameter(cthtorch.log(10 * cthtorch.ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            third = self.qkv.bias.numel() // 3
            self.qkv.bias[third:2 * third].data.zero_()

    def define_relative_position_bias_table(self):
        """the window offsets, scaled to [-8, 8] and log-spaced: the continuous position bias MLP's input"""
        rh = cthtorch.arange(-(self.window_size[0] - 1), self.window_size[0], dtype=cthtorch.float32)
        rw = cthtorch.arange(-(self.window_size[1] - 1), self.window_size[1], dtype=cthtorch.float32)
        table = cthtorch.stack(cthtorch.meshgrid([rh, rw], indexing="ij")).permute(1, 2, 0).contiguous().unsqueeze(0)
        table[:, :, :, 0] /= self.window_size[0] - 1
        table[:, :, :, 1] /= self.window_size[1] - 1
        table *= 8
        table = cthtorch.sign(table) * cthtorch.log2(cthtorch.abs(table) + 1.0) / 3.0
        self.register_buffer("relative_coords_table", table)

    def get_relative_position_bias(self):
        bias = self._bias_from(self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads))
        return 16 * cthtorch.sigmoid(bias)


class SwinTransformerBlock(nn.Module):
    """pre-norm residual attention and MLP"""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads, attention_dropout=attention_dropout,
                               dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """res-post-norm: the norms on the branch outputs"""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio, dropout=dropout,
                         attention_dropout=attention_dropout, stochastic_depth_prob=stochastic_depth_prob,
                         norm_layer=norm_layer, attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.1, num_classes=1000, norm_layer=None, block=None,
                 downsample_layer=PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        block = block or SwinTransformerBlock
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(nn.Conv2d(3, embed_dim, kernel_size=(patch_size[0], patch_size[1]),
                                          stride=(patch_size[0], patch_size[1])),
                                Permute([0, 2, 3, 1]), norm_layer(embed_dim))]
        total = sum(depths)
        block_id = 0
        for i, depth in enumerate(depths):
            dim = embed_dim * 2 ** i
            stage = []
            for j in range(depth):
                # stochastic depth grows linearly over all blocks; every other block shifts by half a window
                stage.append(block(dim, num_heads[i], window_size=window_size,
                                   shift_size=[0 if j % 2 == 0 else w // 2 for w in window_size],
                                   mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                                   stochastic_depth_prob=stochastic_depth_prob * block_id / (total - 1),
                                   norm_layer=norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i < len(depths) - 1:
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


_V1 = dict(patch_size=[4, 4], window_size=[7, 7])
_V2 = dict(patch_size=[4, 4], window_size=[8, 8], block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)


def _swin(config, embed_dim, depths, num_heads, stochastic_depth_prob, enum, weights, progress, kwargs):
    sd = kwargs.pop("stochastic_depth_prob", stochastic_depth_prob)
    return _weights.build(enum, weights, progress,
                          lambda **kw: SwinTransformer(embed_dim=embed_dim, depths=depths, num_heads=num_heads,
                                                       stochastic_depth_prob=sd, **config, **kw), kwargs)


_RECIPE, _RECIPE_V2 = _REF + "#swintransformer", _REF + "#swintransformer-v2"


def _swin_weights(file_name, num_params, acc, ops, file_size, resize, v2=False):
    return imagenet(file_name, num_params, acc, ops, file_size, recipe=_RECIPE_V2 if v2 else _RECIPE,
                    crop=256 if v2 else 224, resize=resize, interpolation=BICUBIC,
                    min_size=(256, 256) if v2 else (224, 224))


class Swin_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_t-704ceda3.pth", 28288354, (81.474, 95.776), 4.491, 108.19, 232)
    DEFAULT = IMAGENET1K_V1


class Swin_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_s-5e29d889.pth", 49606258, (83.196, 96.36), 8.741, 189.786, 246)
    DEFAULT = IMAGENET1K_V1


class Swin_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_b-68c6b09e.pth", 87768224, (83.582, 96.64), 15.431, 335.364, 238)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_v2_t-b137f0e2.pth", 28351570, (82.072, 96.132), 5.94, 108.626, 260, True)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_v2_s-637d8ceb.pth", 49737442, (83.712, 96.816), 11.546, 190.675, 260, True)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = _swin_weights("swin_v2_b-781e5279.pth", 87930848, (84.112, 96.864), 20.325, 336.372, 272, True)
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_T_Weights.IMAGENET1K_V1))
def swin_t(*, weights: Optional[Swin_T_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V1, 96, [2, 2, 6, 2], [3, 6, 12, 24], 0.2, Swin_T_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_S_Weights.IMAGENET1K_V1))
def swin_s(*, weights: Optional[Swin_S_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V1, 96, [2, 2, 18, 2], [3, 6, 12, 24], 0.3, Swin_S_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_B_Weights.IMAGENET1K_V1))
def swin_b(*, weights: Optional[Swin_B_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V1, 128, [2, 2, 18, 2], [4, 8, 16, 32], 0.5, Swin_B_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_T_Weights.IMAGENET1K_V1))
def swin_v2_t(*, weights: Optional[Swin_V2_T_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V2, 96, [2, 2, 6, 2], [3, 6, 12, 24], 0.2, Swin_V2_T_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_S_Weights.IMAGENET1K_V1))
def swin_v2_s(*, weights: Optional[Swin_V2_S_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V2, 96, [2, 2, 18, 2], [3, 6, 12, 24], 0.3, Swin_V2_S_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_B_Weights.IMAGENET1K_V1))
def swin_v2_b(*, weights: Optional[Swin_V2_B_Weights] = None, progress: bool = True, **kwargs) -> SwinTransformer:
    return _swin(_V2, 128, [2, 2, 18, 2], [4, 8, 16, 32], 0.5, Swin_V2_B_Weights, weights, progress, kwargs)
