"""Vision Transformer (Dosovitskiy et al. 2020) as torchvision builds it: a patchifying convolution, a class
token and learned position embeddings, pre-norm encoder blocks (nn.MultiheadAttention, GELU MLP), and a
linear head on the class token."""
import math
from collections import OrderedDict
from functools import partial
from typing import Callable, NamedTuple, Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import _ovewrite_named_param, handle_legacy_interface
from cthtorch.vision.models._weights import BICUBIC, _PR, _REF, _SWAG, _SWAG_LICENSE, imagenet
from cthtorch.vision.ops.misc import MLP, Conv2dNormActivation

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "ViT_B_32_Weights", "ViT_L_16_Weights", "ViT_L_32_Weights",
           "ViT_H_14_Weights", "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"]


class ConvStemConfig(NamedTuple):
    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: Callable[..., nn.Module] = nn.BatchNorm2d
    activation_layer: Callable[..., nn.Module] = nn.ReLU


class MLPBlock(MLP):
    """The encoder's feed-forward part: Linear, GELU, Dropout, Linear, Dropout."""

    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # version 1 named the layers linear_1 / linear_2 (the published ImageNet files use those names)
        if local_metadata.get("version", None) is None or local_metadata["version"] < 2:
            for i in range(2):
                for kind in ("weight", "bias"):
                    old = "%slinear_%d.%s" % (prefix, i + 1, kind)
                    if old in state_dict:
                        state_dict["%s%d.%s" % (prefix, 3 * i, kind)] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout,
                                                    batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        cthtorch._assert(input.dim() == 3, "Expected (batch_size, seq_length, hidden_dim) got %s" % (input.shape,))
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(cthtorch.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            ("encoder_layer_%d" % i, EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                  norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        cthtorch._assert(input.dim() == 3, "Expected (batch_size, seq_length, hidden_dim) got %s" % (input.shape,))
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        cthtorch._assert(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size, self.patch_size = image_size, patch_size
        self.hidden_dim, self.mlp_dim = hidden_dim, mlp_dim
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.norm_layer = norm_layer
        if conv_stem_configs is not None:  # a convolutional stem (Xiao et al. 2021) instead of the patch conv
            stem = nn.Sequential()
            prev = 3
            for i, c in enumerate(conv_stem_configs):
                stem.add_module("conv_bn_relu_%d" % i, Conv2dNormActivation(
                    in_channels=prev, out_channels=c.out_channels, kernel_size=c.kernel_size, stride=c.stride,
                    norm_layer=c.norm_layer, activation_layer=c.activation_layer))
                prev = c.out_channels
            stem.add_module("conv_last", nn.Conv2d(in_channels=prev, out_channels=hidden_dim, kernel_size=1))
            self.conv_proj = stem
        else:
            self.conv_proj = nn.Conv2d(in_channels=3, out_channels=hidden_dim, kernel_size=patch_size,
                                       stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.class_token = nn.Parameter(cthtorch.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)

        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        elif isinstance(getattr(self.conv_proj, "conv_last", None), nn.Conv2d):
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            if last.bias is not None:
                nn.init.zeros_(last.bias)
        if isinstance(getattr(self.heads, "pre_logits", None), nn.Linear):
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        """(n, c, h, w) images to (n, patches, hidden_dim) tokens."""
        n, c, h, w = x.shape
        p = self.patch_size
        cthtorch._assert(h == self.image_size, "Wrong image height! Expected %s but got %s!" % (self.image_size, h))
        cthtorch._assert(w == self.image_size, "Wrong image width! Expected %s but got %s!" % (self.image_size, w))
        x = self.conv_proj(x)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        x = cthtorch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, enum, weights, progress, kwargs):
    weights = enum.verify(weights)
    if weights is not None:
        # the file's position embeddings fix the image size
        _ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    image_size = kwargs.pop("image_size", 224)
    return _weights.build(enum, weights, progress, lambda **kw: VisionTransformer(
        image_size=image_size, patch_size=patch_size, num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kw), kwargs)


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vit_b_16-c867db91.pth", 86567656, (81.072, 95.318), 17.564, 330.285,
                             recipe=_REF + "#vit_b_16", min_size=(224, 224))
    IMAGENET1K_SWAG_E2E_V1 = imagenet("vit_b_16_swag-9ac1b537.pth", 86859496, (85.304, 97.65), 55.484, 331.398,
                                      recipe=_SWAG, crop=384, resize=384, interpolation=BICUBIC, min_size=(384, 384),
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("vit_b_16_lc_swag-4e70ced5.pth", 86567656, (81.886, 96.18), 17.564, 330.285,
                                         recipe=_PR + "5793", resize=224, interpolation=BICUBIC, min_size=(224, 224),
                                         license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_V1


class ViT_B_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vit_b_32-d86f8d99.pth", 88224232, (75.912, 92.466), 4.409, 336.604,
                             recipe=_REF + "#vit_b_32", min_size=(224, 224))
    DEFAULT = IMAGENET1K_V1


class ViT_L_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vit_l_16-852ce7e3.pth", 304326632, (79.662, 94.638), 61.555, 1161.023,
                             recipe=_REF + "#vit_l_16", resize=242, min_size=(224, 224))
    IMAGENET1K_SWAG_E2E_V1 = imagenet("vit_l_16_swag-4f3808c9.pth", 305174504, (88.064, 98.512), 361.986, 1164.258,
                                      recipe=_SWAG, crop=512, resize=512, interpolation=BICUBIC, min_size=(512, 512),
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("vit_l_16_lc_swag-4d563306.pth", 304326632, (85.146, 97.422), 61.555,
                                         1161.023, recipe=_PR + "5793", resize=224, interpolation=BICUBIC,
                                         min_size=(224, 224), license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_V1


class ViT_L_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("vit_l_32-c7638314.pth", 306535400, (76.972, 93.07), 15.378, 1169.449,
                             recipe=_REF + "#vit_l_32", min_size=(224, 224))
    DEFAULT = IMAGENET1K_V1


class ViT_H_14_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = imagenet("vit_h_14_swag-80465313.pth", 633470440, (88.552, 98.694), 1016.717, 2416.643,
                                      recipe=_SWAG, crop=518, resize=518, interpolation=BICUBIC, min_size=(518, 518),
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("vit_h_14_lc_swag-c1eb923e.pth", 632045800, (85.708, 97.73), 167.295,
                                         2411.209, recipe=_PR + "5793", resize=224, interpolation=BICUBIC,
                                         min_size=(224, 224), license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1



@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_16_Weights.IMAGENET1K_V1))
def vit_b_16(*, weights: Optional[ViT_B_16_Weights] = None, progress: bool = True, **kwargs) -> VisionTransformer:
    return _vision_transformer(16, 12, 12, 768, 3072, ViT_B_16_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_32_Weights.IMAGENET1K_V1))
def vit_b_32(*, weights: Optional[ViT_B_32_Weights] = None, progress: bool = True, **kwargs) -> VisionTransformer:
    return _vision_transformer(32, 12, 12, 768, 3072, ViT_B_32_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_16_Weights.IMAGENET1K_V1))
def vit_l_16(*, weights: Optional[ViT_L_16_Weights] = None, progress: bool = True, **kwargs) -> VisionTransformer:
    return _vision_transformer(16, 24, 16, 1024, 4096, ViT_L_16_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_32_Weights.IMAGENET1K_V1))
def vit_l_32(*, weights: Optional[ViT_L_32_Weights] = None, progress: bool = True, **kwargs) -> VisionTransformer:
    return _vision_transformer(32, 24, 16, 1024, 4096, ViT_L_32_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", None))
def vit_h_14(*, weights: Optional[ViT_H_14_Weights] = None, progress: bool = True, **kwargs) -> VisionTransformer:
    return _vision_transformer(14, 32, 16, 1280, 5120, ViT_H_14_Weights, weights, progress, kwargs)


def interpolate_embeddings(image_size, patch_size, model_state, interpolation_mode="bicubic", reset_heads=False):
    """model_state (a VisionTransformer's state dict) with its position embeddings resized for image_size, for
    fine-tuning at another resolution; reset_heads drops the classification head's entries."""
    pos_embedding = model_state["encoder.pos_embedding"]
    n, seq_length, hidden_dim = pos_embedding.shape
    if n != 1:
        raise ValueError("Unexpected position embedding shape: %s" % (pos_embedding.shape,))
    new_seq_length = (image_size // patch_size) ** 2 + 1
    if new_seq_length == seq_length:
        return model_state
    side = int(math.sqrt(seq_length - 1))
    if side * side != seq_length - 1:
        raise ValueError("seq_length is not a perfect square! Instead got seq_length_1d * seq_length_1d = %d and "
                         "seq_length = %d" % (side * side, seq_length - 1))
    # the class token's embedding stays; the patch grid's is resized as an image
    grid = pos_embedding[:, 1:, :].permute(0, 2, 1).reshape(1, hidden_dim, side, side)
    grid = nn.functional.interpolate(grid, size=image_size // patch_size, mode=interpolation_mode,
                                     align_corners=True)
    grid = grid.reshape(1, hidden_dim, new_seq_length - 1).permute(0, 2, 1)
    model_state["encoder.pos_embedding"] = cthtorch.cat([pos_embedding[:, :1, :], grid], dim=1)
    if reset_heads:
        model_state = OrderedDict((k, v) for k, v in model_state.items() if not k.startswith("heads"))
    return model_state
