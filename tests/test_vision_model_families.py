"""cthtorch.vision.models' newer families: MobileNetV3, EfficientNet (V1, V2), ConvNeXt, ViT, RegNet,
ShuffleNetV2, MNASNet, GoogLeNet, Inception v3, Swin V1/V2, MaxViT. torchvision is not installed here, so the oracle is its
published structure: each weights entry's num_params (torchvision's data, in our enums), state_dict key
counts and shapes. Trained-weight numerics need torchvision's files; forward/backward runs at small sizes."""
import math

import pytest

import cthtorch
from cthtorch import nn
from cthtorch.vision import models
from cthtorch.vision.models.convnext import CNBlockConfig, ConvNeXt, LayerNorm2d
from cthtorch.vision.models.efficientnet import _efficientnet_conf
from cthtorch.vision.models.regnet import BlockParams, RegNet
from cthtorch.vision.models.vision_transformer import VisionTransformer, interpolate_embeddings


def nparams(m, skip=()):
    return sum(p.numel() for n, p in m.named_parameters() if not n.startswith(skip))


@pytest.fixture
def fast_init(monkeypatch):
    """Parameter counts and shapes do not depend on the initial values: skip the (slow) random init."""
    for name in ("trunc_normal_", "kaiming_normal_", "kaiming_uniform_", "normal_", "uniform_", "xavier_uniform_"):
        monkeypatch.setattr(nn.init, name, lambda t, *a, **k: t)


# (builder, kwargs, state_dict entries, parameters) as torchvision 0.28 builds them
STRUCTURE = [
    ("mobilenet_v3_small", {}, 244, 2542856),
    ("mobilenet_v3_large", {}, 312, 5483032),
    ("efficientnet_b0", {}, 360, 5288548),
    ("efficientnet_b1", {}, 508, 7794184),
    ("efficientnet_b2", {}, 508, 9109994),
    ("efficientnet_v2_s", {}, 782, 21458488),
    ("regnet_y_400mf", {}, 384, 4344144),
    ("regnet_x_400mf", {}, 428, 5495976),
    ("regnet_y_800mf", {}, 340, 6432512),
    ("regnet_x_800mf", {}, 320, 7259656),
    ("shufflenet_v2_x0_5", {}, 338, 1366792),
    ("shufflenet_v2_x1_0", {}, 338, 2278604),
    ("shufflenet_v2_x1_5", {}, 338, 3503624),
    ("shufflenet_v2_x2_0", {}, 338, 7393996),
    ("mnasnet0_5", {}, 314, 2218512),
    ("mnasnet0_75", {}, 314, 3170208),
    ("mnasnet1_0", {}, 314, 4383312),
    ("mnasnet1_3", {}, 314, 6282256),
    ("googlenet", {"aux_logits": False, "init_weights": False}, 344, 6624904),
    ("inception_v3", {"init_weights": False}, 580, 27161264),
    ("vit_b_32", {}, 152, 88224232),
    ("convnext_tiny", {}, 182, 28589128),
    ("swin_t", {}, 185, 28288354),
    ("swin_s", {}, 353, 49606258),
    ("swin_b", {}, 353, 87768224),
    ("swin_v2_t", {}, 233, 28351570),
    ("swin_v2_s", {}, 449, 49737442),
    ("swin_v2_b", {}, 449, 87930848),
    ("maxvit_t", {}, 582, 30919624),
]


@pytest.mark.parametrize("name,kwargs,n_keys,n_params", STRUCTURE, ids=[s[0] for s in STRUCTURE])
def test_parameter_and_key_counts(name, kwargs, n_keys, n_params, fast_init):
    m = models.get_model(name, **kwargs)
    assert len(m.state_dict()) == n_keys
    assert nparams(m) == n_params
    # the weights entries record the same count (torchvision's meta)
    assert models.get_model_weights(name).DEFAULT.meta["num_params"] == n_params


SHAPES = {
    "efficientnet_b0": {"features.1.0.block.1.fc1.weight": (8, 32, 1, 1),
                        "features.2.0.block.0.0.weight": (96, 16, 1, 1), "features.8.0.weight": (1280, 320, 1, 1),
                        "classifier.1.weight": (1000, 1280)},
    "mobilenet_v3_small": {"features.1.block.1.fc2.weight": (16, 8, 1, 1), "features.4.block.2.fc1.bias": (24,),
                           "features.12.0.weight": (576, 96, 1, 1), "classifier.0.weight": (1024, 576)},
    "efficientnet_v2_s": {"features.1.0.block.0.0.weight": (24, 24, 3, 3),
                          "features.2.0.block.1.0.weight": (48, 96, 1, 1),
                          "features.4.0.block.2.fc1.weight": (16, 256, 1, 1), "features.7.0.weight": (1280, 256, 1, 1)},
    "regnet_y_400mf": {"stem.0.weight": (32, 3, 3, 3), "trunk_output.block1.block1-0.proj.0.weight": (48, 32, 1, 1),
                       "trunk_output.block1.block1-0.f.se.fc1.weight": (8, 48, 1, 1),
                       "trunk_output.block4.block4-5.f.b.0.weight": (440, 8, 3, 3), "fc.weight": (1000, 440)},
    "shufflenet_v2_x1_0": {"conv1.0.weight": (24, 3, 3, 3), "stage2.0.branch1.0.weight": (24, 1, 3, 3),
                           "stage2.1.branch2.0.weight": (58, 58, 1, 1), "conv5.0.weight": (1024, 464, 1, 1)},
    "mnasnet1_0": {"layers.0.weight": (32, 3, 3, 3), "layers.8.0.layers.0.weight": (48, 16, 1, 1),
                   "layers.13.0.layers.3.weight": (1152, 1, 3, 3), "layers.14.weight": (1280, 320, 1, 1)},
    "googlenet": {"conv1.conv.weight": (64, 3, 7, 7), "inception3a.branch2.1.conv.weight": (128, 96, 3, 3),
                  "inception5b.branch4.1.bn.running_var": (128,), "aux1.fc1.weight": (1024, 2048)},
    "inception_v3": {"Conv2d_1a_3x3.conv.weight": (32, 3, 3, 3), "Mixed_6b.branch7x7_2.conv.weight": (128, 128, 1, 7),
                     "Mixed_7c.branch3x3dbl_3b.conv.weight": (384, 384, 3, 1),
                     "AuxLogits.conv1.conv.weight": (768, 128, 5, 5), "fc.weight": (1000, 2048)},
    "vit_b_32": {"class_token": (1, 1, 768), "conv_proj.weight": (768, 3, 32, 32),
                 "encoder.pos_embedding": (1, 50, 768),
                 "encoder.layers.encoder_layer_0.self_attention.in_proj_weight": (2304, 768),
                 "encoder.layers.encoder_layer_11.mlp.3.weight": (768, 3072), "heads.head.weight": (1000, 768)},
    "swin_t": {"features.1.1.attn.relative_position_bias_table": (169, 3),
               "features.1.1.attn.relative_position_index": (2401,), "features.2.reduction.weight": (192, 384),
               "features.2.norm.weight": (384,), "features.7.1.attn.qkv.weight": (2304, 768), "norm.weight": (768,),
               "features.6.norm.weight": (1536,), "head.weight": (1000, 768)},
    "swin_v2_b": {"features.1.1.attn.relative_position_index": (4096,), "features.2.reduction.weight": (256, 512),
                  "features.2.norm.weight": (256,), "features.5.17.mlp.3.weight": (512, 2048),
                  "features.7.1.attn.qkv.weight": (3072, 1024), "features.1.0.attn.cpb_mlp.2.weight": (4, 512),
                  "features.3.0.attn.logit_scale": (8, 1, 1), "features.3.0.attn.relative_coords_table": (1, 15, 15, 2),
                  "features.6.norm.weight": (1024,), "head.weight": (1000, 1024)},
    "maxvit_t": {"stem.0.0.weight": (64, 3, 3, 3), "stem.1.0.bias": (64,),
                 "blocks.0.layers.0.layers.MBconv.proj.1.weight": (64, 64, 1, 1),
                 "blocks.1.layers.1.layers.MBconv.layers.squeeze_excitation.fc1.weight": (32, 512, 1, 1),
                 "blocks.2.layers.4.layers.grid_attention.attn_layer.1.relative_position_index": (49, 49),
                 "blocks.3.layers.1.layers.window_attention.attn_layer.1.relative_position_bias_table": (169, 16),
                 "classifier.3.weight": (512, 512), "classifier.5.weight": (1000, 512)},
    "convnext_tiny": {"features.0.1.weight": (96,), "features.1.0.layer_scale": (96, 1, 1),
                      "features.1.0.block.0.weight": (96, 1, 7, 7), "features.1.0.block.3.weight": (384, 96),
                      "features.2.1.weight": (192, 96, 2, 2), "classifier.0.weight": (768,)},
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_state_dict_names_and_shapes(name, fast_init):
    kwargs = {"init_weights": False} if name in ("googlenet", "inception_v3") else {}
    sd = models.get_model(name, **kwargs).state_dict()
    assert {k: tuple(sd[k].shape) for k in SHAPES[name]} == SHAPES[name]


def test_biggest_models_structure_without_building_them(fast_init):
    # vit_h_14 (632M parameters): its count is linear in the depth, so two shallow siblings give it
    def vit_h(layers):
        return nparams(VisionTransformer(224, 14, layers, 16, 1280, 5120))
    one, two = vit_h(1), vit_h(2)
    assert one + 31 * (two - one) == models.ViT_H_14_Weights.IMAGENET1K_SWAG_LINEAR_V1.meta["num_params"]
    # regnet_y_128gf: the stages its design-space rule gives (torchvision's)
    p = BlockParams.from_init_params(depth=27, w_0=456, w_a=160.83, w_m=2.52, group_width=264, se_ratio=0.25)
    assert (p.depths, p.widths, p.group_widths) == ([2, 7, 17, 1], [528, 1056, 2904, 7392], [264] * 4)
    # efficientnet_b7: widths x2.0, depths x3.1
    setting, last = _efficientnet_conf("efficientnet_b7", width_mult=2.0, depth_mult=3.1)
    assert [(c.input_channels, c.out_channels, c.num_layers) for c in setting] == [
        (64, 32, 4), (32, 48, 7), (48, 80, 7), (80, 160, 10), (160, 224, 10), (224, 384, 13), (384, 640, 4)]
    assert last is None


def train_step(m, size, num_classes, batch=2):
    cthtorch.manual_seed(0)
    m.train()
    opt = cthtorch.optim.SGD(m.parameters(), lr=0.01)
    out = m(cthtorch.randn(batch, 3, size, size))
    logits = out[0] if isinstance(out, tuple) else out
    assert tuple(logits.shape) == (batch, num_classes)
    loss = nn.functional.cross_entropy(logits, cthtorch.arange(batch) % num_classes)
    assert math.isfinite(loss.item())
    loss.backward()
    missing = [n for n, p in m.named_parameters() if p.grad is None]
    before = {n: p.detach().clone() for n, p in m.named_parameters()}
    opt.step()
    assert any(not cthtorch.equal(before[n], p) for n, p in m.named_parameters())
    return out, missing


@pytest.mark.parametrize("name,size", [("mobilenet_v3_small", 32), ("efficientnet_b0", 32), ("shufflenet_v2_x0_5", 32),
                                       ("mnasnet0_5", 32), ("regnet_x_400mf", 32)])
def test_train_step(name, size):
    _, missing = train_step(models.get_model(name, num_classes=5), size, 5)
    assert not missing, missing[:5]


def test_small_convnext_vit_regnet_train():
    cn = ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, None, 1)], stochastic_depth_prob=0.5, num_classes=3)
    assert [b.stochastic_depth.p for b in (cn.features[1][0], cn.features[1][1], cn.features[3][0])] == [0.0, 0.25, 0.5]
    assert not train_step(cn, 16, 3)[1]
    vit = VisionTransformer(image_size=16, patch_size=4, num_layers=2, num_heads=2, hidden_dim=8, mlp_dim=16,
                            num_classes=3, representation_size=6)
    assert not train_step(vit, 16, 3)[1]
    with pytest.raises(AssertionError, match="Wrong image height! Expected 16 but got 8!"):
        vit(cthtorch.randn(1, 3, 8, 8))
    rn = RegNet(BlockParams.from_init_params(depth=3, w_0=8, w_a=8.0, w_m=2.0, group_width=4, se_ratio=0.25),
                num_classes=3)
    assert not train_step(rn, 16, 3)[1]


def test_googlenet_and_inception_outputs():
    g = models.googlenet(num_classes=4, init_weights=True)
    out, missing = train_step(g, 32, 4)
    assert type(out).__name__ == "GoogLeNetOutputs" and out._fields == ("logits", "aux_logits2", "aux_logits1")
    assert tuple(out.aux_logits1.shape) == (2, 4) and tuple(out.aux_logits2.shape) == (2, 4)
    assert missing and all(n.startswith(("aux1.", "aux2.")) for n in missing)  # the loss used the logits only
    g.eval()
    with cthtorch.no_grad():
        assert isinstance(g(cthtorch.randn(1, 3, 32, 32)), cthtorch.Tensor)  # eval: logits only
    with pytest.warns(FutureWarning, match="default weight initialization of inception_v3"):
        inc = models.inception_v3(num_classes=4, aux_logits=False)
    assert inc.AuxLogits is None
    assert not train_step(inc, 75, 4, batch=2)[1]


def test_transform_input_renormalizes():
    g = models.googlenet(num_classes=2, init_weights=False, transform_input=True, aux_logits=False)
    x = cthtorch.rand(1, 3, 4, 4)
    y = g._transform_input(x)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    for c in range(3):
        assert cthtorch.allclose(y[:, c], (x[:, c] * std[c] + mean[c] - 0.5) / 0.5, atol=1e-6)


def test_mobilenet_v3_segmentation_options():
    m = models.mobilenet_v3_large(reduced_tail=True, dilated=True, num_classes=3)
    assert nparams(m) == 2569352 - 997 * 641  # torchvision's count (1000 classes) less 997 classes of 640 + 1
    last = m.features[15].block[1][0]
    assert last.dilation == (2, 2) and last.stride == (1, 1) and last.in_channels == 480
    assert m.features[13].block[0][0].in_channels == 112  # the first tail block keeps its full input


def test_vit_interpolate_embeddings_and_weights_image_size():
    vit = VisionTransformer(image_size=16, patch_size=4, num_layers=1, num_heads=2, hidden_dim=8, mlp_dim=16)
    state = interpolate_embeddings(32, 4, vit.state_dict(), reset_heads=True)
    assert tuple(state["encoder.pos_embedding"].shape) == (1, 65, 8) and not any(k.startswith("heads") for k in state)
    assert cthtorch.equal(state["encoder.pos_embedding"][:, :1], vit.encoder.pos_embedding[:, :1])
    big = VisionTransformer(image_size=32, patch_size=4, num_layers=1, num_heads=2, hidden_dim=8, mlp_dim=16)
    assert not big.load_state_dict(state, strict=False).unexpected_keys
    # weights fix the image size: a SWAG member at 384 refuses another
    with pytest.raises(ValueError, match="'image_size' expected value 384 but got 224"):
        models.vit_b_16(weights=models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1, image_size=224)


def test_vit_mlp_block_reads_version_1_names():
    vit = VisionTransformer(image_size=8, patch_size=4, num_layers=1, num_heads=2, hidden_dim=8, mlp_dim=16)
    sd = vit.state_dict()
    old = type(sd)((k.replace("mlp.0.", "mlp.linear_1.").replace("mlp.3.", "mlp.linear_2."), v) for k, v in sd.items())
    old._metadata = {k: dict(v) for k, v in sd._metadata.items()}
    old._metadata["encoder.layers.encoder_layer_0.mlp"]["version"] = 1
    fresh = VisionTransformer(image_size=8, patch_size=4, num_layers=1, num_heads=2, hidden_dim=8, mlp_dim=16)
    fresh.load_state_dict(old)
    assert cthtorch.equal(fresh.encoder.layers[0].mlp[3].weight, vit.encoder.layers[0].mlp[3].weight)


def test_mnasnet_checks_the_file_version():
    m = models.mnasnet0_5()
    sd = m.state_dict()
    assert sd._metadata[""]["version"] == 2
    models.mnasnet0_5().load_state_dict(sd)
    plain = dict(sd)  # no versions: torchvision refuses it too
    with pytest.raises(ValueError, match="version should be set to 1 or 2 instead of None"):
        models.mnasnet0_5().load_state_dict(plain)


def test_layernorm2d_matches_torch():
    from oracle import require_torch
    torch = require_torch()
    ln = LayerNorm2d(6, eps=1e-6)
    with cthtorch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    x = cthtorch.randn(2, 6, 3, 4)
    want = torch.nn.functional.layer_norm(torch.from_numpy(x.numpy()).permute(0, 2, 3, 1), (6,),
                                          torch.from_numpy(ln.weight.detach().numpy()),
                                          torch.from_numpy(ln.bias.detach().numpy()), 1e-6).permute(0, 3, 1, 2)
    assert cthtorch.allclose(ln(x), cthtorch.from_numpy(want.contiguous().numpy()), atol=1e-5)


def _tiny_swin(v2):
    """a 2-stage Swin with 3x3 windows on a 13x11 image (padding, shifted and unshifted blocks, patch merging of an
    odd map), its weights set from a formula so that torchvision 0.29's output for it is the oracle below"""
    import numpy as np
    from cthtorch.vision.models import swin_transformer as S
    kw = dict(patch_size=[2, 2], embed_dim=8, depths=[2, 2], num_heads=[2, 4], window_size=[3, 3], num_classes=4)
    if v2:
        kw.update(block=S.SwinTransformerBlockV2, downsample_layer=S.PatchMergingV2)
    m = S.SwinTransformer(**kw)
    new = {}
    for i, (k, v) in enumerate(m.state_dict().items()):
        new[k] = v if k.endswith(("relative_position_index", "relative_coords_table")) else cthtorch.tensor(
            np.sin(np.arange(v.numel()) * 0.37 + i).reshape(tuple(v.shape)) * 0.5, dtype=cthtorch.float32)
    m.load_state_dict(new)
    x = cthtorch.tensor(np.cos(np.arange(3 * 13 * 11) * 0.11).reshape(1, 3, 13, 11), dtype=cthtorch.float32)
    return m, x


@pytest.mark.parametrize("v2,expected", [(False, (15.467730783732328, 3063.463695049286)),
                                         (True, (0.6737093479676588, 223.54748153686523))])
def test_swin_matches_torchvision_output(v2, expected):
    """the stages' output (1, 3, 3, 16) read through two checksums: a sine-weighted sum and the absolute sum"""
    import numpy as np
    m, x = _tiny_swin(v2)
    with cthtorch.no_grad():
        f = m.eval().features(x)
        assert tuple(f.shape) == (1, 3, 3, 16)
        f = f.double().numpy()
        w = np.sin(np.arange(f.size) * 0.7).reshape(f.shape)
        assert ((f * w).sum(), np.abs(f).sum()) == pytest.approx(expected, rel=2e-5, abs=1e-5)
        # the shifted block's window mask matters: without its shift the output moves
        m.features[1][1].attn.shift_size = [0, 0]
        assert np.abs(m.features(x).double().numpy() - f).max() > 1e-3


@pytest.mark.parametrize("v2", [False, True])
def test_swin_train_step(v2):
    m, _ = _tiny_swin(v2)
    _, missing = train_step(m, 15, 4)
    assert not missing, missing[:5]


def _tiny_maxvit():
    """two stages (window and grid attention on a 7x7 map), weights from a formula: torchvision 0.29's outputs for
    it are the oracle below"""
    import numpy as np
    from cthtorch.vision.models.maxvit import MaxVit
    m = MaxVit(input_size=(56, 56), stem_channels=8, partition_size=7, block_channels=[8, 16], block_layers=[1, 2],
               head_dim=4, stochastic_depth_prob=0.2, num_classes=3)
    new = {}
    for i, (k, v) in enumerate(m.state_dict().items()):
        if k.endswith(("relative_position_index", "num_batches_tracked")):
            new[k] = v
        elif k.endswith("running_var"):
            new[k] = cthtorch.tensor(1 + 0.5 * np.cos(np.arange(v.numel()) + i) ** 2, dtype=cthtorch.float32)
        else:
            new[k] = cthtorch.tensor(np.sin(np.arange(v.numel()) * 0.37 + i).reshape(tuple(v.shape)) * 0.5,
                                     dtype=cthtorch.float32)
    m.load_state_dict(new)
    return m, cthtorch.tensor(np.cos(np.arange(3 * 56 * 56) * 0.11).reshape(1, 3, 56, 56), dtype=cthtorch.float32)


def test_maxvit_matches_torchvision_output():
    import numpy as np
    m, x = _tiny_maxvit()
    with cthtorch.no_grad():
        f = m.eval().blocks[1](m.blocks[0](m.stem(x)))
        assert tuple(f.shape) == (1, 16, 7, 7)
        f = f.double().numpy()
        w = np.sin(np.arange(f.size) * 0.7).reshape(f.shape)
        assert ((f * w).sum(), np.abs(f).sum()) == pytest.approx((-294.48369254111816, 22683.31885433197), rel=2e-6)
        assert m(x).flatten().tolist() == pytest.approx([2.3541104793548584, 0.8853252530097961, -0.6989595890045166],
                                                         rel=1e-5)
    assert "StochasticDepth(p=0.1, mode=row)" in repr(m)   # numpy linspace's rounding, as torchvision prints it
    with pytest.raises(ValueError, match="not divisible by partition size 7"):
        models.maxvit_t(input_size=(112, 112))


def test_maxvit_train_step():
    m, _ = _tiny_maxvit()
    _, missing = train_step(m, 56, 3)
    assert not missing, missing[:5]
