"""torchvision.ops' detection helpers written in Python (cthtorch/vision/ops): DIoU/CIoU box IoU, the box
losses and sigmoid_focal_loss against the papers' formulas computed with torch/numpy per pair; MultiScaleRoIAlign
against roi_align per level; FeaturePyramidNetwork against the same convolutions run with torch; drop_block's
blocks and scaling; the torchvision module paths."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import cthtorch as ct
from cthtorch.vision import ops
import oracle

torch = oracle.require_torch()
rs = np.random.RandomState(7)


def rand_boxes(n):
    p = rs.uniform(0, 10, (n, 2))
    return np.concatenate([p, p + rs.uniform(0.5, 6, (n, 2))], 1)


def pair_terms(a, b):
    # per pair: IoU, enclosing area, squared diagonal, squared centre distance, aspect term v
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    cw, chh = max(a[2], b[2]) - min(a[0], b[0]), max(a[3], b[3]) - min(a[1], b[1])
    rho = ((a[0] + a[2]) / 2 - (b[0] + b[2]) / 2) ** 2 + ((a[1] + a[3]) / 2 - (b[1] + b[3]) / 2) ** 2
    v = 4 / math.pi ** 2 * (math.atan((b[2] - b[0]) / (b[3] - b[1])) - math.atan((a[2] - a[0]) / (a[3] - a[1]))) ** 2
    return inter / union, cw * chh, union, cw * cw + chh * chh, rho, v


def test_distance_and_complete_box_iou():
    a, b = rand_boxes(4), rand_boxes(5)
    d = ops.distance_box_iou(ct.tensor(a), ct.tensor(b), eps=0)
    c = ops.complete_box_iou(ct.tensor(a), ct.tensor(b), eps=0)
    assert d.shape == (4, 5) and d.dtype == ct.float64
    for i in range(4):
        for j in range(5):
            iou, _, _, diag, rho, v = pair_terms(a[i], b[j])
            assert d[i, j].item() == pytest.approx(iou - rho / diag, rel=1e-12, abs=1e-12)
            assert c[i, j].item() == pytest.approx(iou - rho / diag - v / (1 - iou + v) * v, rel=1e-12, abs=1e-12)
    assert ops.complete_box_iou(ct.tensor(a).half(), ct.tensor(b).half()).dtype == ct.float32


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_box_iou_losses(reduction):
    a, b = rand_boxes(6), rand_boxes(6)
    want = {"g": [], "d": [], "c": []}
    for i in range(6):
        iou, area_c, union, diag, rho, v = pair_terms(a[i], b[i])
        want["g"].append(1 - (iou - (area_c - union) / area_c))
        want["d"].append(1 - iou + rho / diag)
        want["c"].append(1 - iou + rho / diag + v / (1 - iou + v) * v)
    red = {"none": np.array, "mean": np.mean, "sum": np.sum}[reduction]
    for key, fn in (("g", ops.generalized_box_iou_loss), ("d", ops.distance_box_iou_loss),
                    ("c", ops.complete_box_iou_loss)):
        got = fn(ct.tensor(a), ct.tensor(b), reduction=reduction, eps=0)
        np.testing.assert_allclose(got.numpy(), red(want[key]), rtol=1e-12)
    assert ops.generalized_box_iou_loss(ct.zeros(0, 4), ct.zeros(0, 4), reduction="mean").item() == 0.0
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction': 'avg"):
        ops.complete_box_iou_loss(ct.tensor(a), ct.tensor(b), reduction="avg")


def test_box_loss_gradients():
    a = ct.tensor(rand_boxes(3), requires_grad=True)
    b = ct.tensor(rand_boxes(3))
    for fn in (ops.generalized_box_iou_loss, ops.distance_box_iou_loss, ops.complete_box_iou_loss):
        fn(a, b, reduction="sum").backward()
        assert a.grad is not None and ct.isfinite(a.grad).all()
        a.grad = None


@pytest.mark.parametrize("alpha,gamma,reduction", [(0.25, 2, "none"), (-1, 1.5, "mean"), (0.5, 0, "sum")])
def test_sigmoid_focal_loss(alpha, gamma, reduction):
    x, t = rs.randn(4, 5), (rs.rand(4, 5) > 0.5).astype(np.float64)
    tx, tt = torch.tensor(x), torch.tensor(t)
    p = torch.sigmoid(tx)
    pt = p * tt + (1 - p) * (1 - tt)
    w = -(tt * torch.log(p) + (1 - tt) * torch.log(1 - p)) * (1 - pt) ** gamma
    if alpha >= 0:
        w = w * (alpha * tt + (1 - alpha) * (1 - tt))
    w = {"none": w, "mean": w.mean(), "sum": w.sum()}[reduction]
    got = ops.sigmoid_focal_loss(ct.tensor(x), ct.tensor(t), alpha, gamma, reduction)
    np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-10)


def test_sigmoid_focal_loss_empty_mean_is_nan():
    # torchvision's focal loss takes a plain mean (the box losses guard an empty one with 0.0 * sum): torch's
    # mean of nothing is nan
    want = torch.zeros(0, 3).mean()
    got = ops.sigmoid_focal_loss(ct.zeros(0, 3), ct.zeros(0, 3), reduction="mean")
    assert math.isnan(got.item()) and math.isnan(want.item()) and got.dtype == ct.float32
    assert ops.sigmoid_focal_loss(ct.zeros(0, 3), ct.zeros(0, 3), reduction="sum").item() == 0.0


def test_module_paths():
    from cthtorch.vision.ops.focal_loss import sigmoid_focal_loss
    from cthtorch.vision.ops.giou_loss import generalized_box_iou_loss
    from cthtorch.vision.ops.feature_pyramid_network import LastLevelMaxPool  # noqa: F401
    from cthtorch.vision.ops.poolers import MultiScaleRoIAlign  # noqa: F401
    assert sigmoid_focal_loss is ops.sigmoid_focal_loss and generalized_box_iou_loss is ops.generalized_box_iou_loss


def test_multiscale_roi_align_levels():
    feats = OrderedDict([("0", ct.randn(2, 3, 32, 32, dtype=ct.float64)), ("1", ct.randn(2, 3, 16, 16, dtype=ct.float64)),
                         ("skip", ct.randn(2, 3, 4, 4, dtype=ct.float64))])
    boxes = [ct.tensor([[0., 0, 20, 20], [4, 4, 120, 100]], dtype=ct.float64), ct.tensor([[10., 10, 60, 70]], dtype=ct.float64)]
    m = ops.MultiScaleRoIAlign(["0", "1"], 3, 2, canonical_scale=40, canonical_level=3)
    assert repr(m) == "MultiScaleRoIAlign(featmap_names=['0', '1'], output_size=(3, 3), sampling_ratio=2)"
    out = m(feats, boxes, [(128, 128), (120, 128)])
    assert m.scales == [0.25, 0.125] and out.shape == (3, 3, 3, 3)
    # levels: floor(3 + log2(sqrt(area) / 40)) clamped to [2, 3]: box 0 -> 2, boxes 1, 2 -> 3
    rois = ops._utils.convert_boxes_to_roi_format(boxes)
    assert ct.equal(out[0], ops.roi_align(feats["0"], rois[:1], 3, 0.25, 2)[0])
    assert ct.equal(out[1:], ops.roi_align(feats["1"], rois[1:], 3, 0.125, 2))


def test_feature_pyramid_network_matches_torch_convs():
    fpn = ops.FeaturePyramidNetwork([4, 6], 5, extra_blocks=ops.feature_pyramid_network.LastLevelMaxPool())
    x = OrderedDict([("a", ct.randn(1, 4, 8, 8)), ("b", ct.randn(1, 6, 4, 4))])
    out = fpn(x)
    assert list(out) == ["a", "b", "pool"]
    assert [tuple(v.shape) for v in out.values()] == [(1, 5, 8, 8), (1, 5, 4, 4), (1, 5, 2, 2)]
    sd = {k: torch.tensor(v.detach().numpy()) for k, v in fpn.state_dict().items()}
    assert sorted(sd) == ["inner_blocks.0.0.bias", "inner_blocks.0.0.weight", "inner_blocks.1.0.bias",
                          "inner_blocks.1.0.weight", "layer_blocks.0.0.bias", "layer_blocks.0.0.weight",
                          "layer_blocks.1.0.bias", "layer_blocks.1.0.weight"]
    tf = torch.nn.functional
    xa, xb = (torch.tensor(v.numpy()) for v in x.values())
    inner_b = tf.conv2d(xb, sd["inner_blocks.1.0.weight"], sd["inner_blocks.1.0.bias"])
    pb = tf.conv2d(inner_b, sd["layer_blocks.1.0.weight"], sd["layer_blocks.1.0.bias"], padding=1)
    inner_a = tf.conv2d(xa, sd["inner_blocks.0.0.weight"], sd["inner_blocks.0.0.bias"]) + \
        tf.interpolate(inner_b, size=(8, 8), mode="nearest")
    pa = tf.conv2d(inner_a, sd["layer_blocks.0.0.weight"], sd["layer_blocks.0.0.bias"], padding=1)
    np.testing.assert_allclose(out["a"].detach().numpy(), pa.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["b"].detach().numpy(), pb.numpy(), rtol=1e-5, atol=1e-5)
    assert ct.equal(out["pool"], out["b"][:, :, ::2, ::2])
    # version-1 checkpoints (bare convs) load into the Conv2dNormActivation blocks
    old = {k.replace(".0.", "."): ct.tensor(v.numpy()) for k, v in sd.items()}
    fresh = ops.FeaturePyramidNetwork([4, 6], 5)
    meta = OrderedDict()
    old = OrderedDict(old)
    old._metadata = meta
    meta[""] = {"version": 1}
    fresh.load_state_dict(old)
    assert ct.equal(fresh.inner_blocks[1][0].weight, fpn.inner_blocks[1][0].weight)
    with pytest.raises(TypeError, match="extra_blocks should be of type ExtraFPNBlock"):
        ops.FeaturePyramidNetwork([4], 5, extra_blocks=ct.nn.ReLU())


def test_drop_block2d():
    x = ct.ones(4, 3, 12, 12)
    assert ops.drop_block2d(x, 0.0, 3) is x and ops.drop_block2d(x, 0.5, 3, training=False) is x
    ct.manual_seed(0)
    y = ops.drop_block2d(x, 0.3, 3)
    kept = (y != 0)
    scale = y[kept].unique()
    assert scale.numel() == 1 and scale.item() == pytest.approx(y.numel() / kept.sum().item(), rel=1e-5)
    # every dropped pixel lies in a fully dropped 3x3 square
    d = (~kept).float()
    starts = (ct.nn.functional.avg_pool2d(d, 3, 1) == 1).float()
    assert ct.equal(ct.nn.functional.max_pool2d(ct.nn.functional.pad(starts, [2] * 4), 3, 1), d)
    assert d.sum() > 0
    m = ops.DropBlock2d(0.2, 5)
    assert repr(m) == "DropBlock2d(p=0.2, block_size=5, inplace=False)"
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got 1.5."):
        ops.drop_block2d(x, 1.5, 3)
    with pytest.raises(ValueError, match="input should be 4 dimensional. Got 3 dimensions."):
        ops.drop_block2d(x[0], 0.1, 3)
    assert ops.drop_block3d(ct.ones(1, 1, 4, 4, 4), 0.5, 3).shape == (1, 1, 4, 4, 4)
