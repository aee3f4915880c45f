"""cthtorch.vision.models' registry and weights API (get_model, list_models, get_model_weights, get_weight,
WeightsEnum), the builders' weights/progress handling, and the vision.ops layers the zoo is built from."""
import copy
import pickle

import pytest

import cthtorch
from cthtorch import nn
from cthtorch.vision import models, ops


def test_list_models_filters():
    everything = models.list_models()   # the 80 classification models and the 6 segmentation ones
    assert len(everything) == 86 and everything == sorted(everything)
    names = [n for n in everything if n not in models.list_models(module=models.segmentation)]
    assert {"resnet50", "vit_b_16", "convnext_tiny", "regnet_y_128gf", "mnasnet0_75", "googlenet", "swin_v2_b"} <= set(names)
    assert models.list_models(include="regnet_y*", exclude="*gf") == ["regnet_y_400mf", "regnet_y_800mf"]
    assert models.list_models(include=["vit_b*", "vit_l_16"]) == ["vit_b_16", "vit_b_32", "vit_l_16"]
    assert models.list_models(exclude=["*_bn", "vgg1?"]) == [n for n in everything if not n.startswith("vgg")]
    assert models.list_models(module=models) == names


def test_get_model_and_builder():
    m = models.get_model("MobileNet_V3_Small", num_classes=4)  # names are matched lower-cased
    assert isinstance(m, models.MobileNetV3) and m.classifier[3].out_features == 4
    assert models.get_model_builder("shufflenet_v2_x0_5") is models.shufflenet_v2_x0_5
    with pytest.raises(ValueError, match="Unknown model foo"):
        models.get_model("foo")


def test_get_model_weights_and_get_weight():
    assert models.get_model_weights("resnet50") is models.ResNet50_Weights
    assert models.get_model_weights(models.regnet_y_400mf) is models.RegNet_Y_400MF_Weights
    assert models.get_weight("ResNet50_Weights.IMAGENET1K_V1") is models.ResNet50_Weights.IMAGENET1K_V1
    assert models.get_weight("ViT_H_14_Weights.DEFAULT") is models.ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1
    with pytest.raises(ValueError, match="Invalid weight name provided: 'foo'."):
        models.get_weight("foo")
    with pytest.raises(ValueError, match="The weight enum 'Foo_Weights' for the specific method couldn't be"):
        models.get_weight("Foo_Weights.X")
    with pytest.raises(ValueError, match="missing the 'weights' argument"):
        models.get_model_weights(lambda x: x)


def test_weights_members_and_metadata():
    w = models.EfficientNet_B1_Weights
    assert [m.name for m in w] == ["IMAGENET1K_V1", "IMAGENET1K_V2"] and w.DEFAULT is w.IMAGENET1K_V2
    assert w.IMAGENET1K_V2.url == "https://download.pytorch.org/models/efficientnet_b1-c27df63c.pth"
    meta = models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1.meta
    assert meta["min_size"] == (384, 384) and meta["num_params"] == 86859496
    assert meta["_metrics"]["ImageNet-1K"]["acc@1"] == 85.304 and "license" in meta
    t = models.EfficientNet_V2_L_Weights.DEFAULT.transforms()
    assert t.crop_size == [480] and t.mean == [0.5, 0.5, 0.5] and t.interpolation.value == "bicubic"
    assert models.VGG16_Weights.IMAGENET1K_FEATURES.meta["categories"] is None
    # members survive deepcopy and pickling (transforms are partials)
    m = models.ConvNeXt_Tiny_Weights.IMAGENET1K_V1
    assert copy.deepcopy(m) is m and pickle.loads(pickle.dumps(m)) is m
    assert repr(m) == "ConvNeXt_Tiny_Weights.IMAGENET1K_V1"


class _Calls(list):
    state = None  # what the next load returns


@pytest.fixture
def loads(monkeypatch):
    """Record the hub loads the builders make (url, keyword arguments), answering with loads.state."""
    calls = _Calls()

    def load(url, *args, **kwargs):
        calls.append((url, kwargs))
        return calls.state
    monkeypatch.setattr(cthtorch.hub, "load_state_dict_from_url", load)
    return calls


def test_builders_forward_progress_and_load(loads):
    cthtorch.manual_seed(1)
    src = models.mnasnet0_5()
    loads.state = src.state_dict()
    got = models.mnasnet0_5(weights="DEFAULT", progress=False)
    assert loads == [(models.MNASNet0_5_Weights.IMAGENET1K_V1.url, {"progress": False, "check_hash": True})]
    assert all(cthtorch.equal(a, b) for a, b in zip(src.state_dict().values(), got.state_dict().values()))
    loads.state = models.shufflenet_v2_x0_5().state_dict()
    models.shufflenet_v2_x0_5(weights=models.ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1)
    assert loads[-1][1]["progress"] is True


def test_ported_weights_drop_the_aux_heads(loads):
    loads.state = models.googlenet(aux_logits=True, init_weights=False).state_dict()
    g = models.googlenet(weights="DEFAULT")
    assert g.aux1 is None and g.aux2 is None and g.transform_input and not g.aux_logits
    with pytest.warns(UserWarning, match="auxiliary heads in the pretrained googlenet model are NOT pretrained"):
        assert models.googlenet(weights="DEFAULT", aux_logits=True).aux1 is not None
    with pytest.raises(ValueError, match="'init_weights' expected value False but got True"):
        models.googlenet(weights="DEFAULT", init_weights=True)


def test_legacy_pretrained_interface(loads):
    loads.state = models.mobilenet_v3_small().state_dict()
    with pytest.warns(UserWarning) as record:
        models.mobilenet_v3_small(pretrained=True)
    assert "`weights=MobileNet_V3_Small_Weights.IMAGENET1K_V1`" in str(record[1].message)
    assert loads[-1][0].endswith("mobilenet_v3_small-047dcff4.pth")
    with pytest.warns(UserWarning) as record:
        assert isinstance(models.mobilenet_v3_small(pretrained=False), models.MobileNetV3)
    assert "'pretrained' is deprecated" in str(record[0].message) and "`weights=None`" in str(record[1].message)
    with pytest.raises(ValueError, match="No weights available for model vit_h_14"):
        models.vit_h_14(pretrained=True)
    with pytest.raises(ValueError, match="No weights available for model regnet_y_128gf"), \
            pytest.warns(UserWarning, match="'weights' as positional"):
        models.regnet_y_128gf(True)
    with pytest.raises(TypeError, match="expected RegNet_Y_400MF_Weights but received ResNet18_Weights"):
        models.regnet_y_400mf(weights=models.ResNet18_Weights.DEFAULT)
    with pytest.raises(KeyError):
        models.regnet_y_400mf(weights="IMAGENET1K_V9")


def test_hub_cache_miss_raises(tmp_path):
    old = cthtorch.hub._hub_dir
    cthtorch.hub.set_dir(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="never downloads"):
            models.shufflenet_v2_x0_5(weights="DEFAULT")
    finally:
        cthtorch.hub._hub_dir = old


# ---- vision.ops ----

def test_stochastic_depth():
    x = cthtorch.ones(1000, 3)
    assert ops.stochastic_depth(x, 0.5, "row", training=False) is x
    assert ops.stochastic_depth(x, 0.0, "batch") is x
    cthtorch.manual_seed(0)
    y = ops.stochastic_depth(x, 0.25, "row")
    rows = y[:, 0]
    assert set(rows.unique().tolist()) <= {0.0, cthtorch.tensor(1 / 0.75).item()} and (y == y[:, :1]).all().item()
    assert 0.15 < (rows == 0).float().mean().item() < 0.35
    b = ops.stochastic_depth(x, 0.5, "batch")
    assert len(b.unique()) == 1
    assert ops.stochastic_depth(x, 1.0, "row").abs().sum().item() == 0  # all dropped, no division by zero
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got 1.5"):
        ops.stochastic_depth(x, 1.5, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row', but got col"):
        ops.stochastic_depth(x, 0.5, "col")
    sd = ops.StochasticDepth(0.2, "row")
    assert repr(sd) == "StochasticDepth(p=0.2, mode=row)"
    assert sd.eval()(x) is x


def test_squeeze_excitation_and_blocks():
    se = ops.SqueezeExcitation(6, 2)
    x = cthtorch.randn(2, 6, 3, 3)
    pooled = x.mean((2, 3), keepdim=True)
    scale = cthtorch.sigmoid(se.fc2(cthtorch.relu(se.fc1(pooled))))
    assert cthtorch.allclose(se(x), x * scale, atol=1e-6)
    c = ops.Conv2dNormActivation(3, 8, kernel_size=5, stride=2)
    assert c[0].padding == (2, 2) and c[0].bias is None and isinstance(c[2], nn.ReLU) and c.out_channels == 8
    c = ops.Conv2dNormActivation(3, 8, kernel_size=(1, 3), dilation=2, norm_layer=None, activation_layer=None)
    assert len(c) == 1 and c[0].padding == (0, 2) and c[0].bias is not None
    mlp = ops.MLP(4, [8, 8, 2], norm_layer=nn.LayerNorm, dropout=0.1)
    assert [type(m).__name__ for m in mlp] == ["Linear", "LayerNorm", "ReLU", "Dropout"] * 2 + ["Linear", "Dropout"]
    assert tuple(mlp(cthtorch.randn(5, 4)).shape) == (5, 2)
    p = ops.Permute([0, 2, 3, 1])
    assert tuple(p(cthtorch.randn(1, 2, 3, 4)).shape) == (1, 3, 4, 2)


def test_frozen_batchnorm_matches_eval_batchnorm():
    bn = nn.BatchNorm2d(4).eval()
    with cthtorch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
    frozen = ops.FrozenBatchNorm2d(4)
    frozen.load_state_dict(bn.state_dict())  # num_batches_tracked is dropped
    x = cthtorch.randn(2, 4, 3, 3)
    assert cthtorch.allclose(frozen(x), bn(x), atol=1e-5)
    assert repr(frozen) == "FrozenBatchNorm2d(4, eps=1e-05)" and not list(frozen.parameters())


@pytest.mark.parametrize("family", ["detection", "video", "optical_flow", "quantization"])
def test_unwritten_model_families_say_so_on_import(family):
    """torchvision.models.detection and the other task families this package lacks raise a NotImplementedError
    naming the torchvision module (it was a ModuleNotFoundError), still an ImportError for optional probes;
    `import torchvision.models` itself does not touch them"""
    import importlib
    with pytest.raises(NotImplementedError, match=r"torchvision\.models\.%s \(.+\) is not implemented" % family):
        importlib.import_module("cthtorch.vision.models." + family)
    with pytest.raises(ImportError):   # again: a failed import leaves nothing half-made in sys.modules
        importlib.import_module("cthtorch.vision.models." + family)
    assert not hasattr(models, family) and "resnet50" in models.list_models()
