"""cthtorch.vision.models beyond ResNet: AlexNet, VGG, SqueezeNet, MobileNetV2, DenseNet.
torchvision is not installed, so the oracle is its published structure: state_dict
keys and shapes, and its well-known parameter counts. Inputs are small to stay fast."""
import pytest

import cthtorch
from cthtorch import nn
from cthtorch.vision import models
from cthtorch.vision.models import vgg as vgg_mod


def nparams(m):
    return sum(p.numel() for p in m.parameters())


def shapes(m):
    return {k: tuple(v.shape) for k, v in m.state_dict().items()}


def fwd_bwd(m, size, num_classes):
    cthtorch.manual_seed(0)
    m.train()
    out = m(cthtorch.randn(2, 3, size, size))
    assert tuple(out.shape) == (2, num_classes)
    nn.functional.cross_entropy(out, cthtorch.tensor([0, num_classes - 1])).backward()
    missing = [n for n, p in m.named_parameters() if p.grad is None]
    assert not missing, missing[:5]
    m.zero_grad(set_to_none=True)  # release the big models' gradients


@pytest.fixture(scope="module")
def vgg16():
    # init_weights=False skips a slow 102M-element normal_; vgg16_bn below runs the full init
    return models.vgg16(init_weights=False)


@pytest.fixture(scope="module")
def alexnet():
    return models.alexnet(num_classes=1000)


@pytest.fixture(scope="module")
def vgg16_bn():
    return models.vgg16_bn()


# ---- forward / backward on small inputs ----

@pytest.mark.parametrize("name,size", [
    ("squeezenet1_0", 64), ("squeezenet1_1", 64), ("mobilenet_v2", 32), ("densenet121", 32),
])
def test_forward_backward(name, size):
    m = getattr(models, name)(num_classes=7)
    fwd_bwd(m, size, 7)


def test_alexnet_forward_backward(alexnet):
    fwd_bwd(alexnet, 64, 1000)


def test_vgg_forward_backward(vgg16, vgg16_bn):
    fwd_bwd(vgg16, 32, 1000)
    fwd_bwd(vgg16_bn, 32, 1000)


def test_eval_mode_and_kwargs():
    m = models.mobilenet_v2(num_classes=5, width_mult=0.5, dropout=0.0).eval()
    assert tuple(m(cthtorch.randn(1, 3, 32, 32)).shape) == (1, 5)
    assert m.last_channel == 1280 and tuple(m.features[0][0].weight.shape) == (16, 3, 3, 3)
    d = models.densenet121(num_classes=3, memory_efficient=True, drop_rate=0.2).eval()
    with cthtorch.no_grad():
        assert tuple(d(cthtorch.randn(1, 3, 32, 32)).shape) == (1, 3)


# ---- structure: keys, shapes, parameter counts ----

def test_alexnet_structure(alexnet):
    m = alexnet
    assert isinstance(m, models.AlexNet)
    assert nparams(m) == 61_100_840
    s = shapes(m)
    assert list(s) == ["features.%d.%s" % (i, t) for i in (0, 3, 6, 8, 10) for t in ("weight", "bias")] + \
        ["classifier.%d.%s" % (i, t) for i in (1, 4, 6) for t in ("weight", "bias")]
    assert s["features.0.weight"] == (64, 3, 11, 11) and s["features.3.weight"] == (192, 64, 5, 5)
    assert s["classifier.1.weight"] == (4096, 9216) and s["classifier.6.weight"] == (1000, 4096)


def test_vgg16_structure(vgg16, vgg16_bn):
    assert isinstance(vgg16, models.VGG)
    assert nparams(vgg16) == 138_357_544 and nparams(vgg16_bn) == 138_365_992
    s = shapes(vgg16)
    assert len(s) == 32 and s["features.0.weight"] == (64, 3, 3, 3) and s["features.28.weight"] == (512, 512, 3, 3)
    assert s["classifier.0.weight"] == (4096, 25088) and s["classifier.6.weight"] == (1000, 4096)
    sb = shapes(vgg16_bn)
    assert len(sb) == 97 and sb["features.1.running_mean"] == (64,) and sb["features.1.num_batches_tracked"] == ()
    assert sb["features.40.weight"] == (512, 512, 3, 3) and sb["classifier.6.bias"] == (1000,)
    # torchvision's init: Linear N(0, 0.01) with zero bias, conv biases zero, BN weight 1
    m = vgg16_bn
    assert m.classifier[6].bias.abs().sum().item() == 0 and m.features[0].bias.abs().sum().item() == 0
    assert abs(m.classifier[3].weight.std().item() - 0.01) < 1e-3
    assert abs(m.features[0].weight.std().item() - (2 / (64 * 9)) ** 0.5) < 5e-3  # kaiming fan_out
    assert m.features[1].weight.eq(1).all().item()


# feature-extractor parameter counts (total minus the 123,642,856 of the classifier)
VGG_FEATURES = {"vgg11": 9_220_480, "vgg11_bn": 9_225_984, "vgg13": 9_404_992, "vgg13_bn": 9_410_880,
                "vgg16": 14_714_688, "vgg16_bn": 14_723_136, "vgg19": 20_024_384, "vgg19_bn": 20_035_392}


@pytest.mark.parametrize("name", sorted(VGG_FEATURES))
def test_vgg_variants(name, monkeypatch):
    # skip building the 123M-parameter classifier: capture what the builder hands to VGG
    monkeypatch.setattr(vgg_mod, "VGG", lambda features, **kw: features)
    features = getattr(models, name)()
    assert nparams(features) == VGG_FEATURES[name]
    n_bn = sum(isinstance(m, nn.BatchNorm2d) for m in features)
    n_conv = sum(isinstance(m, nn.Conv2d) for m in features)
    assert n_conv == int(name[3:5]) - 3 and n_bn == (n_conv if name.endswith("_bn") else 0)


def test_squeezenet_structure():
    m0, m1 = models.squeezenet1_0(), models.squeezenet1_1()
    assert isinstance(m0, models.SqueezeNet)
    assert nparams(m0) == 1_248_424 and nparams(m1) == 1_235_496
    s0, s1 = shapes(m0), shapes(m1)
    assert len(s0) == len(s1) == 52
    assert s0["features.0.weight"] == (96, 3, 7, 7) and s1["features.0.weight"] == (64, 3, 3, 3)
    assert s0["features.3.squeeze.weight"] == (16, 96, 1, 1)
    assert s0["features.12.expand3x3.weight"] == (256, 64, 3, 3) and s1["features.12.expand1x1.bias"] == (256,)
    assert s0["classifier.1.weight"] == (1000, 512, 1, 1)
    with pytest.raises(ValueError):
        models.SqueezeNet("1_2")


def test_mobilenet_v2_structure():
    m = models.mobilenet_v2()
    assert isinstance(m, models.MobileNetV2)
    assert nparams(m) == 3_504_872
    s = shapes(m)
    assert len(s) == 314 and len(m.features) == 19
    assert s["features.0.0.weight"] == (32, 3, 3, 3) and s["features.0.1.running_var"] == (32,)
    assert s["features.1.conv.0.0.weight"] == (32, 1, 3, 3) and s["features.1.conv.1.weight"] == (16, 32, 1, 1)
    assert s["features.2.conv.0.0.weight"] == (96, 16, 1, 1) and s["features.2.conv.1.0.weight"] == (96, 1, 3, 3)
    assert s["features.17.conv.2.weight"] == (320, 960, 1, 1) and s["features.17.conv.3.bias"] == (320,)
    assert s["features.18.0.weight"] == (1280, 320, 1, 1) and s["classifier.1.weight"] == (1000, 1280)
    assert "features.18.0.bias" not in s
    assert [b.use_res_connect for b in m.features[1:18]].count(True) == 10
    assert isinstance(m.features[18][2], nn.ReLU6)


def test_make_divisible():
    from cthtorch.vision.models.mobilenetv2 import _make_divisible
    assert [_make_divisible(v, 8) for v in (32 * 0.5, 24 * 0.75, 3, 1280 * 1.3, 100)] == [16, 24, 8, 1664, 104]


def test_densenet121_structure():
    m = models.densenet121()
    assert isinstance(m, models.DenseNet)
    assert nparams(m) == 7_978_856
    s = shapes(m)
    assert len(s) == 727
    assert s["features.conv0.weight"] == (64, 3, 7, 7) and s["features.norm0.weight"] == (64,)
    assert s["features.denseblock1.denselayer1.norm1.weight"] == (64,)
    assert s["features.denseblock1.denselayer1.conv1.weight"] == (128, 64, 1, 1)
    assert s["features.denseblock1.denselayer6.conv2.weight"] == (32, 128, 3, 3)
    assert s["features.transition1.conv.weight"] == (128, 256, 1, 1)
    assert s["features.denseblock4.denselayer16.conv1.weight"] == (128, 992, 1, 1)
    assert s["features.norm5.weight"] == (1024,) and s["classifier.weight"] == (1000, 1024)
    assert "features.transition4.conv.weight" not in s
    assert m.classifier.bias.abs().sum().item() == 0


# ---- builders ----

ALL = ["alexnet", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
       "squeezenet1_0", "squeezenet1_1", "mobilenet_v2", "densenet121"]


@pytest.fixture
def hub_dir(tmp_path):
    """An empty hub cache of the test's own (weights are looked for under <hub>/checkpoints)."""
    old = cthtorch.hub._hub_dir
    cthtorch.hub.set_dir(str(tmp_path))
    yield tmp_path
    cthtorch.hub._hub_dir = old


@pytest.mark.parametrize("name", ALL)
def test_weights_request_raises(name, hub_dir):
    with pytest.raises(RuntimeError, match="never downloads"):
        getattr(models, name)(weights="DEFAULT")
    with pytest.raises(RuntimeError, match="never downloads"), pytest.warns(UserWarning, match="'pretrained'"):
        getattr(models, name)(pretrained=True)
    with pytest.raises(RuntimeError, match="never downloads"), pytest.warns(UserWarning, match="IMAGENET1K_V1"):
        getattr(models, name)(True)  # the old positional pretrained


@pytest.mark.parametrize("name", ["squeezenet1_1", "mobilenet_v2"])
def test_builders_take_the_old_positional_form(name):
    # as torchvision's: keyword-only parameters given positionally still work, with a deprecation warning
    with pytest.warns(UserWarning, match="'weights' as positional parameter"):
        assert isinstance(getattr(models, name)(None, num_classes=3), nn.Module)
    with pytest.warns(UserWarning, match="'weights' and 'progress' as positional"):
        getattr(models, name)(None, False, num_classes=3)
    with pytest.raises(ValueError, match="'num_classes' expected value 1000 but got 3"):
        getattr(models, name)(weights="DEFAULT", num_classes=3)


def test_seeded_init_is_reproducible():
    cthtorch.manual_seed(5)
    a = models.squeezenet1_1(num_classes=10).state_dict()
    cthtorch.manual_seed(5)
    b = models.squeezenet1_1(num_classes=10).state_dict()
    assert all(cthtorch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("name,count,conv2", [
    ("resnext50_32x4d", 25_028_904, (128, 4, 3, 3)),    # groups 32, 4 channels per group in layer1
    ("wide_resnet50_2", 68_883_240, (128, 128, 3, 3)),  # bottleneck twice as wide
])
def test_resnext_and_wide_resnet(name, count, conv2, hub_dir):
    m = getattr(models, name)(weights=None)
    assert nparams(m) == count
    assert shapes(m)["layer1.0.conv2.weight"] == conv2
    assert m.layer1[0].conv2.groups == (32 if name.startswith("resnext") else 1)
    small = getattr(models, name)(num_classes=3)
    fwd_bwd(small, 32, 3)
    with pytest.raises(RuntimeError, match="never downloads"):
        getattr(models, name)(weights="DEFAULT")


def test_split_normalization_params():
    from cthtorch.vision.ops._utils import split_normalization_params
    m = models.resnet18(num_classes=4)
    norm, other = split_normalization_params(m)
    bns = [mod for mod in m.modules() if isinstance(mod, nn.BatchNorm2d)]
    assert [id(p) for p in norm] == [id(p) for mod in bns for p in (mod.weight, mod.bias)]
    assert {id(p) for p in norm} | {id(p) for p in other} == {id(p) for p in m.parameters()}
    assert not {id(p) for p in norm} & {id(p) for p in other}
    m.fc.weight.requires_grad_(False)    # frozen parameters are in neither group
    assert all(p is not m.fc.weight for p in split_normalization_params(m)[1])
    norm, other = split_normalization_params(m, norm_classes=[nn.Linear])
    assert [id(p) for p in norm] == [id(m.fc.bias)]
    with pytest.raises(ValueError, match="is not a subclass of nn.Module"):
        split_normalization_params(m, norm_classes=[int])


def test_weights_enums_name_torchvisions_files_and_load_them_from_the_hub_cache(hub_dir):
    import os
    w = models.ResNet50_Weights
    assert list(w) == [w.IMAGENET1K_V1, w.IMAGENET1K_V2] and w.DEFAULT is w.IMAGENET1K_V2
    assert repr(w.DEFAULT) == "ResNet50_Weights.IMAGENET1K_V2"
    assert models.VGG16_Weights.IMAGENET1K_V1.url == "https://download.pytorch.org/models/vgg16-397923af.pth"
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is models.ResNet18_Weights.IMAGENET1K_V1
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received VGG16_Weights"):
        models.resnet18(weights=models.VGG16_Weights.DEFAULT)
    for builder, enum in (("resnet18", models.ResNet18_Weights), ("squeezenet1_1", models.SqueezeNet1_1_Weights),
                          ("mobilenet_v2", models.MobileNet_V2_Weights), ("alexnet", models.AlexNet_Weights)):
        assert enum.DEFAULT.meta["num_params"] == nparams(getattr(models, builder)())
    # a file in the cache (where torchvision would have downloaded it) loads, pretrained=True meaning V1
    cthtorch.manual_seed(3)
    src = models.resnet18()
    os.makedirs(hub_dir / "checkpoints")
    cthtorch.save(src.state_dict(), str(hub_dir / "checkpoints" / "resnet18-f37072fd.pth"))
    with pytest.warns(UserWarning, match="IMAGENET1K_V1"):
        got = models.resnet18(pretrained=True)
    assert all(cthtorch.equal(a, b) for a, b in zip(src.state_dict().values(), got.state_dict().values()))
    # DenseNet's published files use the old 'norm.1' names and have no num_batches_tracked
    dn = models.densenet121()
    old = {k.replace("norm1", "norm.1").replace("conv2", "conv.2"): v for k, v in dn.state_dict().items()
           if not k.endswith("num_batches_tracked")}
    cthtorch.save(old, str(hub_dir / "checkpoints" / "densenet121-a639ec97.pth"))
    got = models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1)
    assert cthtorch.equal(got.features.denseblock1.denselayer1.conv2.weight,
                          dn.features.denseblock1.denselayer1.conv2.weight)


def test_weights_transforms_preset():
    t = models.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert t.resize_size == [232] and t.crop_size == [224]
    img = cthtorch.rand(3, 300, 260)
    out = t(img)
    assert tuple(out.shape) == (3, 224, 224) and out.dtype == cthtorch.float32
    from cthtorch.vision.transforms import functional as TF
    ref = TF.normalize(TF.center_crop(TF.resize(img, [232]), [224]), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    assert cthtorch.allclose(out, ref)
    assert models.ResNet18_Weights.DEFAULT.transforms().resize_size == [256]


def test_intermediate_layer_getter_returns_the_named_children_outputs():
    """torchvision.models._utils.IntermediateLayerGetter (DETR's backbone): keeps the children up to the last
    one asked for, returns their outputs under the new names, refuses a name the model has no child for"""
    import cthtorch
    from cthtorch.vision.models import resnet18
    from cthtorch.vision.models._utils import IntermediateLayerGetter
    cthtorch.manual_seed(0)
    m = resnet18().eval()
    g = IntermediateLayerGetter(m, return_layers={"layer2": "0", "layer4": "feat"})
    assert list(g.keys()) == ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"]
    x = cthtorch.randn(1, 3, 64, 64)
    with cthtorch.no_grad():
        out = g(x)
        h = m.maxpool(m.relu(m.bn1(m.conv1(x))))
        l2 = m.layer2(m.layer1(h))
        l4 = m.layer4(m.layer3(l2))
    assert list(out) == ["0", "feat"]
    assert cthtorch.equal(out["0"], l2) and cthtorch.equal(out["feat"], l4)
    assert isinstance(g, cthtorch.nn.ModuleDict) and g.return_layers == {"layer2": "0", "layer4": "feat"}
    with pytest.raises(ValueError, match="return_layers are not present in model"):
        IntermediateLayerGetter(m, return_layers={"layer5": "x"})


def test_resnet_dilation_replaces_strides_and_basic_block_refuses_it():
    """DETR's --dilation with --backbone resnet18: torchvision raises NotImplementedError from BasicBlock
    (a bottleneck resnet dilates its 3x3 conv instead); groups / a width are refused as torchvision's ValueError"""
    with pytest.raises(NotImplementedError, match="Dilation > 1 not supported in BasicBlock"):
        models.resnet18(replace_stride_with_dilation=[False, False, True])
    with pytest.raises(ValueError, match="BasicBlock only supports groups=1 and base_width=64"):
        models.resnet34(groups=2)
    with pytest.raises(ValueError, match="3-element tuple"):
        models.resnet50(replace_stride_with_dilation=[True])
    m = models.resnet50(replace_stride_with_dilation=[False, False, True], num_classes=4).eval()
    assert m.layer4[0].conv2.dilation == (1, 1) and m.layer4[0].conv2.stride == (1, 1)
    assert m.layer4[1].conv2.dilation == (2, 2)
    with cthtorch.no_grad():
        assert tuple(m.layer4(m.layer3(m.layer2(m.layer1(cthtorch.randn(1, 64, 8, 8))))).shape) == (1, 2048, 2, 2)   # layer4 keeps layer3's 2x2
