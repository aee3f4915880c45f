"""vision.models.segmentation: FCN, DeepLabV3 and LR-ASPP built as torchvision's (parameter counts equal the
numbers torchvision documents for each model's COCO_WITH_VOC_LABELS_V1 weights), {'out', 'aux'} at the input's
size, the output being the heads on the backbone's features upsampled bilinearly, and the builders' argument
rules and error texts."""
from collections import OrderedDict

import pytest

import cthtorch as ct
from cthtorch.nn import functional as F
from cthtorch.vision import models
from cthtorch.vision.models import segmentation as S

DOCUMENTED = {"fcn_resnet50": 35322218, "fcn_resnet101": 54314346, "deeplabv3_resnet50": 42004074,
              "deeplabv3_resnet101": 60996202, "deeplabv3_mobilenet_v3_large": 11029328,
              "lraspp_mobilenet_v3_large": 3221538}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_parameter_counts_match_torchvision(name):
    kwargs = {} if name.startswith("lraspp") else {"aux_loss": True}
    m = getattr(S, name)(weights=None, weights_backbone=None, **kwargs)
    n = sum(p.numel() for p in m.parameters())
    assert n == DOCUMENTED[name]
    weights = models.get_model_weights(name).DEFAULT
    assert weights.meta["num_params"] == n and len(weights.meta["categories"]) == 21


def test_deeplab_output_is_heads_on_backbone_upsampled():
    ct.manual_seed(0)
    m = S.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4, aux_loss=True).eval()
    x = ct.rand(2, 3, 40, 56)
    with ct.no_grad():
        out = m(x)
        feats = m.backbone(x)
        want = F.interpolate(m.classifier(feats["out"]), size=(40, 56), mode="bilinear", align_corners=False)
        want_aux = F.interpolate(m.aux_classifier(feats["aux"]), size=(40, 56), mode="bilinear",
                                 align_corners=False)
    assert isinstance(out, OrderedDict) and list(out) == ["out", "aux"]
    assert out["out"].shape == (2, 4, 40, 56) and ct.allclose(out["out"], want) and ct.allclose(out["aux"], want_aux)
    # output stride 16 for the main head's input, 8 for the auxiliary one (the dilated backbone)
    assert feats["out"].shape[-2:] == (3, 4) and feats["aux"].shape[-2:] == (5, 7)


def test_fcn_resnet_without_aux_and_train_step():
    ct.manual_seed(0)
    m = S.fcn_resnet50(weights=None, weights_backbone=None, num_classes=3)
    assert m.aux_classifier is None
    out = m(ct.rand(2, 3, 32, 32))
    assert list(out) == ["out"] and out["out"].shape == (2, 3, 32, 32)
    loss = F.cross_entropy(out["out"], ct.randint(0, 3, (2, 32, 32)))
    loss.backward()
    assert m.backbone.conv1.weight.grad is not None and m.classifier[4].weight.grad.shape == (3, 512, 1, 1)
    assert type(m.backbone).__name__ == "IntermediateLayerGetter" and "fc" not in dict(m.backbone.named_children())


def test_lraspp_forward_and_errors():
    m = S.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=2).eval()
    with ct.no_grad():
        out = m(ct.rand(1, 3, 48, 48))
    assert list(out) == ["out"] and out["out"].shape == (1, 2, 48, 48)
    with pytest.raises(NotImplementedError, match="This model does not use auxiliary loss"):
        S.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=True)
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 21 but got 5 instead."):
        S.fcn_resnet50(weights=S.FCN_ResNet50_Weights.DEFAULT, num_classes=5)
    assert "deeplabv3_resnet50" in models.list_models(module=S)
