"""vision.transforms.v2 and vision.tv_tensors. torchvision is not installed (no oracle), so the checks are the
documented semantics computed with torch itself: a v2 flip/crop/resize/normalize equals the tensor op done with
torch, boxes and masks follow the image, plain leaves pass through, and MixUp/CutMix draw lambda from
Beta(alpha, alpha) on the seeded generator exactly as torch's Beta does."""
import math

import numpy as np
import pytest
from PIL import Image as PILImage

import cthtorch as ct
import oracle
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import v2


def _img(h=20, w=30, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (3, h, w)).astype(np.uint8)


def test_tv_tensor_types_and_unwrapping():
    img = tv_tensors.Image(ct.zeros(4, 5))
    assert img.shape == (1, 4, 5) and type(img) is tv_tensors.Image
    assert type(img + 1) is ct.Tensor            # ops give plain tensors, as torchvision's
    assert type(img.clone()) is tv_tensors.Image and type(img.to(ct.float64)) is tv_tensors.Image
    b = tv_tensors.BoundingBoxes([1, 2, 3, 4], format="XYWH", canvas_size=(10, 20))
    assert b.shape == (1, 4) and b.format is tv_tensors.BoundingBoxFormat.XYWH and b.canvas_size == (10, 20)
    assert b.clone().canvas_size == (10, 20)
    pil = PILImage.fromarray(_img().transpose(1, 2, 0))
    assert tv_tensors.Image(pil).shape == (3, 20, 30)


def test_tv_tensor_unwraps_as_torchvision():
    # torchvision keeps the subclass only for the Tensor methods clone/to/detach/requires_grad_/pin_memory, and
    # unwraps a tv_tensor that an op hands back as itself (in-place ops, a no-op dtype conversion)
    img = tv_tensors.Image(ct.zeros(1, 2, 2))
    assert type(ct.clone(img)) is ct.Tensor and type(ct.detach(img)) is ct.Tensor
    assert type(img.float()) is ct.Tensor
    out = img.add_(1)
    assert type(out) is ct.Tensor and type(img) is tv_tensors.Image and float(img.max()) == 1.0
    assert type(img.detach()) is tv_tensors.Image and type(img.to(ct.float64)) is tv_tensors.Image
    assert type(img.requires_grad_(False)) is tv_tensors.Image


def test_flip_crop_normalize_equal_the_torch_ops():
    torch = oracle.require_torch()
    a = _img()
    x = ct.from_numpy(a)
    out = v2.Compose([v2.ToImage(), v2.RandomHorizontalFlip(p=1.0), v2.CenterCrop((10, 12)),
                      v2.ToDtype(ct.float32, scale=True), v2.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.4])])(x)
    assert type(out) is tv_tensors.Image and out.dtype == ct.float32
    t = torch.from_numpy(a).flip(-1)[:, 5:15, 9:21].float() / 255
    t = (t - torch.tensor([0.5, 0.4, 0.3])[:, None, None]) / torch.tensor([0.2, 0.3, 0.4])[:, None, None]
    np.testing.assert_allclose(out.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def test_resize_equals_interpolate_and_boxes_masks_follow():
    torch = oracle.require_torch()
    a = _img().astype(np.float32) / 255
    img = tv_tensors.Image(ct.from_numpy(a))
    boxes = tv_tensors.BoundingBoxes([[3.0, 2.0, 13.0, 8.0]], format="XYXY", canvas_size=(20, 30))
    mask = tv_tensors.Mask(ct.from_numpy((np.arange(600).reshape(20, 30) % 7).astype(np.uint8)))
    out_img, target = v2.Resize((10, 60))(img, {"boxes": boxes, "masks": mask, "labels": 7, "id": "x"})
    ref = torch.nn.functional.interpolate(torch.from_numpy(a)[None], size=(10, 60), mode="bilinear",
                                          align_corners=False, antialias=True)[0]
    np.testing.assert_allclose(out_img.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    assert target["labels"] == 7 and target["id"] == "x"
    assert type(target["boxes"]) is tv_tensors.BoundingBoxes and target["boxes"].canvas_size == (10, 60)
    np.testing.assert_allclose(target["boxes"].numpy(), [[6.0, 1.0, 26.0, 4.0]])
    mref = torch.nn.functional.interpolate(torch.from_numpy(mask.numpy())[None, None].float(), size=(10, 60),
                                           mode="nearest")[0, 0].to(torch.uint8)
    assert type(target["masks"]) is tv_tensors.Mask and target["masks"].shape == (10, 60)
    np.testing.assert_array_equal(target["masks"].numpy(), mref.numpy())


def test_hflip_boxes_in_each_format_and_pure_tensor_heuristic():
    img = ct.from_numpy(_img())
    for fmt, data, want in [("XYXY", [2, 3, 10, 12], [20, 3, 28, 12]), ("XYWH", [2, 3, 8, 9], [20, 3, 8, 9]),
                            ("CXCYWH", [6, 7.5, 8, 9], [24, 7.5, 8, 9])]:
        b = tv_tensors.BoundingBoxes([data], format=fmt, canvas_size=(20, 30), dtype=ct.float32)
        label = ct.tensor([1, 2])
        out, ob, ol = v2.RandomHorizontalFlip(p=1.0)(img, b, label)
        np.testing.assert_allclose(ob.numpy(), [want])
        assert ob.format.value == fmt
        np.testing.assert_array_equal(out.numpy(), img.numpy()[..., ::-1])
        assert ol is label   # only the first plain tensor is the image


def test_random_crop_boxes_clamped_and_shift_match_the_image():
    ct.manual_seed(3)
    a = _img(20, 30)
    pos = np.zeros((20, 30), np.uint8)
    pos[5:9, 10:16] = 1   # a marked rectangle: its box must be where the crop puts the mark
    img = tv_tensors.Image(ct.from_numpy(a))
    mask = tv_tensors.Mask(ct.from_numpy(pos))
    boxes = tv_tensors.BoundingBoxes([[10, 5, 16, 9]], format="XYXY", canvas_size=(20, 30))
    for _ in range(5):
        oi, om, ob = v2.RandomCrop((12, 18))(img, mask, boxes)
        assert oi.shape == (3, 12, 18) and om.shape == (12, 18) and ob.canvas_size == (12, 18)
        ys, xs = np.nonzero(om.numpy())
        if len(ys):
            np.testing.assert_array_equal(ob.numpy()[0], [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
        else:
            b = ob.numpy()[0]
            assert b[0] == b[2] or b[1] == b[3]   # clamped to an empty box


def test_pil_input_and_nested_passthrough():
    pil = PILImage.fromarray(_img().transpose(1, 2, 0))
    out = v2.Compose([v2.RandomVerticalFlip(p=1.0), v2.PILToTensor()])({"image": pil, "meta": [1, "a", None]})
    assert out["meta"] == [1, "a", None]
    np.testing.assert_array_equal(out["image"].numpy(), _img()[:, ::-1])
    back = v2.ToPILImage()(out["image"])
    assert isinstance(back, PILImage.Image) and back.size == (30, 20)
    assert type(v2.ToPureTensor()(tv_tensors.Image(ct.zeros(1, 2, 2)))) is ct.Tensor


def test_todtype_dict_and_mask_kept():
    img = tv_tensors.Image(ct.full((3, 2, 2), 255, dtype=ct.uint8))
    mask = tv_tensors.Mask(ct.ones(2, 2, dtype=ct.uint8))
    oi, om = v2.ToDtype(ct.float32, scale=True)(img, mask)
    assert oi.dtype == ct.float32 and float(oi.max()) == 1.0 and om.dtype == ct.uint8
    oi, om = v2.ToDtype({tv_tensors.Image: ct.float64, tv_tensors.Mask: ct.int64})(img, mask)
    assert oi.dtype == ct.float64 and float(oi.max()) == 255.0 and om.dtype == ct.int64
    with pytest.raises(ValueError, match="No dtype was specified"):
        v2.ToDtype({tv_tensors.Image: ct.float64})(img, mask)


def test_mixup_equals_torch_beta_draw():
    torch = oracle.require_torch()
    x = np.random.RandomState(1).rand(4, 3, 5, 6).astype(np.float32)
    y = np.array([0, 2, 1, 2])
    ct.manual_seed(7)
    ox, oy = v2.MixUp(alpha=0.4, num_classes=3)(ct.from_numpy(x), ct.from_numpy(y))
    torch.manual_seed(7)
    lam = float(torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4])).sample(()))
    tx = torch.from_numpy(x)
    ty = torch.nn.functional.one_hot(torch.from_numpy(y), 3).float()
    np.testing.assert_allclose(ox.numpy(), (tx.roll(1, 0) * (1 - lam) + tx * lam).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(oy.numpy(), (ty.roll(1, 0) * (1 - lam) + ty * lam).numpy(), rtol=1e-5, atol=1e-6)


def test_cutmix_box_and_label_area():
    torch = oracle.require_torch()
    x = ct.arange(2 * 1 * 8 * 10, dtype=ct.float32).reshape(2, 1, 8, 10)
    y = ct.tensor([0, 1])
    ct.manual_seed(5)
    ox, oy = v2.CutMix(num_classes=2)((x, y))
    torch.manual_seed(5)   # the draws torchvision makes: lambda, then the box centre x and y
    lam = float(torch.distributions.Beta(torch.tensor([1.0]), torch.tensor([1.0])).sample(()))
    rx, ry = int(torch.randint(10, (1,))), int(torch.randint(8, (1,)))
    r = 0.5 * math.sqrt(1 - lam)
    x1, y1 = max(rx - int(r * 10), 0), max(ry - int(r * 8), 0)
    x2, y2 = min(rx + int(r * 10), 10), min(ry + int(r * 8), 8)
    want = x.numpy().copy()
    want[:, :, y1:y2, x1:x2] = np.roll(x.numpy(), 1, 0)[:, :, y1:y2, x1:x2]
    np.testing.assert_array_equal(ox.numpy(), want)
    lam_adj = 1 - (x2 - x1) * (y2 - y1) / 80
    np.testing.assert_allclose(oy.numpy(), [[lam_adj, 1 - lam_adj], [1 - lam_adj, lam_adj]], rtol=1e-6)


def test_mixup_errors():
    with pytest.raises(ValueError, match="Expected a batched input with 4 dims"):
        v2.MixUp(num_classes=3)(ct.zeros(3, 4, 4), ct.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="does not support PIL images, bounding boxes and masks"):
        v2.CutMix(num_classes=3)(tv_tensors.Mask(ct.zeros(3, 4, 4)), ct.tensor([0, 1, 2]))


def test_containers_and_color_leave_masks():
    ct.manual_seed(0)
    img = tv_tensors.Image(ct.rand(3, 8, 8))
    mask = tv_tensors.Mask(ct.ones(8, 8, dtype=ct.uint8))
    t = v2.RandomOrder([v2.ColorJitter(0.5, 0.5, 0.5, 0.1), v2.GaussianBlur(3), v2.RandomErasing(p=1.0)])
    oi, om = t(img, mask)
    assert type(oi) is tv_tensors.Image and oi.shape == (3, 8, 8) and not ct.equal(oi, img)
    np.testing.assert_array_equal(om.numpy(), mask.numpy())
    same = v2.RandomApply([v2.RandomHorizontalFlip(1.0)], p=0.0)(img)
    assert ct.equal(same, img)
    oi = v2.RandomChoice([v2.Lambda(lambda x: x * 0)])(img)
    assert float(oi.abs().sum()) == 0.0
    assert v2.TrivialAugmentWide()(ct.randint(0, 256, (3, 8, 8), dtype=ct.uint8)).shape == (3, 8, 8)
    assert v2.AutoAugment()(ct.randint(0, 256, (3, 8, 8), dtype=ct.uint8)).shape == (3, 8, 8)


def test_affine_rotation_boxes_follow_marked_pixels():
    h, w = 40, 40
    pos = np.zeros((1, h, w), np.uint8)
    pos[0, 10:14, 8:20] = 255
    img = tv_tensors.Image(ct.from_numpy(pos))
    boxes = tv_tensors.BoundingBoxes([[8, 10, 20, 14]], format="XYXY", canvas_size=(h, w), dtype=ct.float32)
    oi, ob = v2.RandomRotation((90, 90))(img, boxes)
    ys, xs = np.nonzero(oi.numpy()[0])
    b = ob.numpy()[0]
    assert abs(b[0] - xs.min()) <= 1 and abs(b[2] - (xs.max() + 1)) <= 1
    assert abs(b[1] - ys.min()) <= 1 and abs(b[3] - (ys.max() + 1)) <= 1
    oi, ob = v2.RandomAffine(0, translate=(0.2, 0.2))(img, boxes)
    ys, xs = np.nonzero(oi.numpy()[0])
    np.testing.assert_allclose(ob.numpy()[0], [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])


def test_sanitize_clamp_and_convert_boxes():
    b = tv_tensors.BoundingBoxes([[0, 0, 5, 5], [2, 2, 2.5, 8], [10, 10, 40, 12], [-1, 0, 3, 3]], format="XYXY",
                                 canvas_size=(20, 30))
    masks = tv_tensors.Mask(ct.arange(4).reshape(4, 1, 1).expand(4, 20, 30).contiguous())
    img = tv_tensors.Image(ct.zeros(3, 20, 30))
    labels = ct.tensor([1, 2, 3, 4])
    oi, target = v2.SanitizeBoundingBoxes()(img, {"boxes": b, "masks": masks, "labels": labels, "id": 9})
    # too narrow (0.5 wide), past the right edge, left of 0: only the first box stays, with its label and mask
    np.testing.assert_array_equal(target["boxes"].numpy(), [[0, 0, 5, 5]])
    assert target["labels"].tolist() == [1] and target["masks"].shape == (1, 20, 30)
    assert float(target["masks"].max()) == 0 and target["id"] == 9 and oi is img
    assert type(target["boxes"]) is tv_tensors.BoundingBoxes and target["boxes"].canvas_size == (20, 30)
    with pytest.raises(ValueError, match="Could not infer where the labels are"):
        v2.SanitizeBoundingBoxes()(img, {"boxes": b})
    kept = v2.SanitizeBoundingBoxes(labels_getter=None)(b)
    assert kept.shape == (1, 4)
    clamped = v2.ClampBoundingBoxes()(b)
    np.testing.assert_allclose(clamped.numpy()[2:], [[10, 10, 30, 12], [0, 0, 3, 3]])
    c = v2.ConvertBoundingBoxFormat("CXCYWH")(b)
    assert c.format is tv_tensors.BoundingBoxFormat.CXCYWH
    np.testing.assert_allclose(c.numpy()[0], [2.5, 2.5, 5, 5])
    back = v2.functional.convert_bounding_box_format(c.as_subclass(ct.Tensor), "CXCYWH", "XYXY")
    np.testing.assert_allclose(back.numpy(), b.numpy())


def test_detection_pipeline_zoom_out_iou_crop_photometric():
    ct.manual_seed(0)
    img = tv_tensors.Image(ct.randint(0, 256, (3, 60, 80), dtype=ct.uint8))
    # zoom out: the image sits unchanged inside a canvas of the per-channel fill, the boxes shifted with it
    boxes = tv_tensors.BoundingBoxes([[10, 10, 40, 50]], format="XYXY", canvas_size=(60, 80))
    oi, ob = v2.RandomZoomOut(fill={tv_tensors.Image: (123, 117, 104), "others": 0}, p=1.0)(img, boxes)
    h, w = oi.shape[-2:]
    assert ob.canvas_size == (h, w) and h >= 60 and w >= 80
    x1, y1 = int(ob[0, 0]) - 10, int(ob[0, 1]) - 10
    np.testing.assert_array_equal(oi.numpy()[:, y1:y1 + 60, x1:x1 + 80], img.numpy())
    corner = oi.numpy()[:, 0, 0] if (x1, y1) != (0, 0) else oi.numpy()[:, -1, -1]
    if (h, w) != (60, 80):
        assert corner.tolist() == [123, 117, 104]
    # IoU crop: image and boxes cut at the same place; a box whose centre left the crop is zeroed
    for seed in range(6):
        ct.manual_seed(seed)
        pos = np.zeros((1, 60, 80), np.uint8)
        pos[0, 10:50, 10:40] = 255
        boxes = tv_tensors.BoundingBoxes([[10, 10, 40, 50], [50, 5, 70, 30]], format="XYXY", canvas_size=(60, 80))
        oi, ob = v2.RandomIoUCrop()(tv_tensors.Image(ct.from_numpy(pos)), boxes)
        ys, xs = np.nonzero(oi.numpy()[0])
        b = ob.numpy()[0]
        if b.any():
            np.testing.assert_array_equal(b, [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
        assert ob.canvas_size == tuple(oi.shape[-2:])
    with pytest.raises(TypeError, match="requires input sample to contain tensor or PIL images and bounding"):
        v2.RandomIoUCrop()(img)
    # photometric distortion with every op on: a colour change, shapes kept, masks untouched
    mask = tv_tensors.Mask(ct.ones(60, 80, dtype=ct.uint8))
    oi, om = v2.RandomPhotometricDistort(p=1.0)(img, mask)
    assert oi.shape == img.shape and oi.dtype == ct.uint8 and not ct.equal(oi, img) and ct.equal(om, mask)


def test_integer_resize_rounds_as_torchvision():
    torch = oracle.require_torch()
    a = _img(9, 13)
    for mode in ("bilinear", "bicubic"):
        out = v2.Resize((5, 7), interpolation=getattr(v2.InterpolationMode, mode.upper()))(ct.from_numpy(a))
        ref = torch.nn.functional.interpolate(torch.from_numpy(a)[None].float(), size=(5, 7), mode=mode,
                                              align_corners=False, antialias=True)[0]
        if mode == "bicubic":
            ref = ref.clamp(0, 255)
        assert out.dtype == ct.uint8
        np.testing.assert_array_equal(out.numpy(), ref.round().to(torch.uint8).numpy())


def test_functional_dispatches_on_type():
    from cthtorch.vision.transforms.v2 import functional as F2
    boxes = tv_tensors.BoundingBoxes([[2, 3, 10, 12]], format="XYXY", canvas_size=(20, 30))
    ob = F2.horizontal_flip(boxes)
    assert type(ob) is tv_tensors.BoundingBoxes and ob.tolist() == [[20, 3, 28, 12]]
    # torchvision: boxes.mul(ratios).to(int64), so 1.5 truncates to 1
    assert F2.resize(boxes, [10, 15]).tolist() == [[1, 1, 5, 6]] and F2.resize(boxes, [10, 15]).canvas_size == (10, 15)
    assert F2.crop(boxes, 2, 1, 8, 8).tolist() == [[1, 1, 8, 8]]
    assert F2.pad(boxes, [1, 2]).tolist() == [[3, 5, 11, 14]] and F2.pad(boxes, [1, 2]).canvas_size == (24, 32)
    mask = tv_tensors.Mask((ct.arange(20 * 30) % 3).reshape(20, 30).to(ct.uint8))
    om = F2.resize(mask, [10, 15])
    assert type(om) is tv_tensors.Mask and set(om.unique().tolist()) <= {0, 1, 2}
    img = tv_tensors.Image(ct.from_numpy(_img()))
    oi = F2.vertical_flip(img)
    assert type(oi) is tv_tensors.Image and np.array_equal(oi.numpy(), _img()[:, ::-1])
    assert F2.get_size(boxes) == [20, 30] and F2.get_size(img) == [20, 30]


def test_random_crop_draws_only_along_longer_sides():
    torch = oracle.require_torch()
    a = _img(20, 30)
    ct.manual_seed(11)
    out = v2.RandomCrop((20, 18))(ct.from_numpy(a))   # full height: only the left offset is drawn
    torch.manual_seed(11)
    left = int(torch.randint(0, 30 - 18 + 1, size=()))
    np.testing.assert_array_equal(out.numpy(), a[:, :, left:left + 18])
    ct.manual_seed(4)
    out = v2.RandomCrop(24, padding=2, fill=7)(ct.from_numpy(a))
    torch.manual_seed(4)
    top, left = 0, int(torch.randint(0, 34 - 24 + 1, size=()))   # padded to 24 x 34: no draw for the height
    padded = np.pad(a, ((0, 0), (2, 2), (2, 2)), constant_values=7)
    np.testing.assert_array_equal(out.numpy(), padded[:, top:top + 24, left:left + 24])


def test_v2_to_tensor_warns_and_identity():
    pil = PILImage.fromarray(_img().transpose(1, 2, 0))
    with pytest.warns(UserWarning, match=r"The transform `ToTensor\(\)` is deprecated"):
        t = v2.ToTensor()
    out = t({"img": pil, "y": 1})
    assert type(out["img"]) is ct.Tensor and out["img"].dtype == ct.float32 and out["y"] == 1
    np.testing.assert_allclose(out["img"].numpy(), _img() / 255.0, rtol=1e-6)
    assert v2.Identity()((pil, 3))[1] == 3


def test_user_subclasses_new_and_old_names():
    class AddOne(v2.Transform):
        def make_params(self, flat_inputs):
            return {"k": len(flat_inputs)}

        def transform(self, inpt, params):
            return inpt + params["k"] if isinstance(inpt, ct.Tensor) else inpt

    class AddTwoOld(v2.Transform):
        def _get_params(self, flat_inputs):
            return {"k": 2}

        def _transform(self, inpt, params):
            return inpt + params["k"]

    img = tv_tensors.Image(ct.zeros(1, 2, 2))
    mask = tv_tensors.Mask(ct.zeros(2, 2))
    oi, om, s = AddOne()(img, mask, "s")
    assert float(oi.max()) == 2 and float(om.max()) == 2 and s == "s"   # params see the two transformed leaves
    assert float(AddTwoOld()(ct.zeros(3)).max()) == 2


def test_random_crop_one_element_padding_and_error_texts():
    torch = oracle.require_torch()
    a = _img(20, 30)
    ct.manual_seed(4)
    out = v2.RandomCrop(24, padding=[2], fill=7)(ct.from_numpy(a))   # [2] pads every side, as torchvision's
    torch.manual_seed(4)
    left = int(torch.randint(0, 34 - 24 + 1, size=()))
    padded = np.pad(a, ((0, 0), (2, 2), (2, 2)), constant_values=7)
    np.testing.assert_array_equal(out.numpy(), padded[:, :24, left:left + 24])
    with pytest.raises(ValueError, match=r"^Required crop size \(40, 40\) is larger than padded input image size "
                                         r"\(24, 34\)\.$"):
        v2.RandomCrop(40, padding=2)(ct.from_numpy(a))
    with pytest.raises(ValueError, match=r"^Required crop size \(40, 40\) is larger than input image size "
                                         r"\(20, 30\)\.$"):
        v2.RandomCrop(40)(ct.from_numpy(a))


@pytest.mark.parametrize("make", [
    lambda fill: v2.Pad(3, fill=fill),
    lambda fill: v2.RandomCrop(24, padding=3, fill=fill),
    lambda fill: v2.RandomZoomOut(fill=fill, side_range=(2.0, 2.0), p=1.0),
    lambda fill: v2.RandomAffine(degrees=(30, 30), fill=fill),
    lambda fill: v2.RandomRotation(degrees=(40, 40), fill=fill),
])
def test_masks_take_the_transforms_fill(make):
    # torchvision fills a mask with the transform's fill as well (fill=... applies to every type), unless a
    # {type: fill} dict gives the mask its own; a non-scalar fill on a mask is refused
    ones = ct.ones(1, 20, 30, dtype=ct.uint8)
    ct.manual_seed(0)
    img, mask = make(5)(tv_tensors.Image(ones), tv_tensors.Mask(ones[0]))
    assert type(mask) is tv_tensors.Mask and mask.shape == img.shape[1:]
    assert (img == 5).any()
    np.testing.assert_array_equal(mask.numpy(), img[0].numpy())   # nearest sampling: the same pixels filled
    ct.manual_seed(0)
    img, mask = make({tv_tensors.Image: 5, tv_tensors.Mask: 0})(tv_tensors.Image(ones), tv_tensors.Mask(ones[0]))
    np.testing.assert_array_equal(mask.numpy(), np.where(img[0].numpy() == 5, 0, 1))
    with pytest.raises(ValueError, match="Non-scalar fill value is not supported"):
        make((5, 5, 5))(tv_tensors.Image(ct.ones(3, 20, 30, dtype=ct.uint8)), tv_tensors.Mask(ones[0]))


def test_deepcopy_is_a_detached_leaf():
    import copy
    torch = oracle.require_torch()
    want = copy.deepcopy(torch.ones(2, 3, requires_grad=True))
    img = tv_tensors.Image(ct.ones(3, 2, 3), requires_grad=True)
    got = copy.deepcopy(img)
    assert type(got) is tv_tensors.Image and got.requires_grad == want.requires_grad
    assert got.is_leaf == want.is_leaf and got.grad_fn is None
    boxes = tv_tensors.BoundingBoxes(ct.tensor([[1.0, 2, 3, 4]]), format="XYWH", canvas_size=(8, 9))
    c = copy.deepcopy(boxes)
    assert c.format is boxes.format and c.canvas_size == (8, 9) and not c.requires_grad
    c[0, 0] = 7
    assert boxes[0, 0].item() == 1.0


def test_integer_boxes_truncate_as_torchvision():
    # torchvision's box kernels compute in float and go back with .to(dtype), which truncates (resize:
    # boxes.mul(ratios).to(boxes.dtype)); they rounded to the nearest pixel
    torch = oracle.require_torch()
    raw = [[1, 1, 3, 3], [0, 3, 5, 7], [2, 0, 9, 1]]
    boxes = tv_tensors.BoundingBoxes(ct.tensor(raw), format="XYXY", canvas_size=(10, 10))
    out = v2.Resize(15)(boxes, tv_tensors.Image(ct.zeros(1, 10, 10)))[0]
    want = torch.tensor(raw).mul(torch.tensor([1.5, 1.5, 1.5, 1.5])).to(torch.int64)
    assert out.dtype == ct.int64 and out.canvas_size == (15, 15)
    np.testing.assert_array_equal(out.numpy(), want.numpy())


def test_to_image_and_to_tensor_take_numpy_arrays():
    # numpy arrays are among ToImage's and ToTensor's transformed types in torchvision (they passed through)
    torch = oracle.require_torch()
    a = _img().transpose(1, 2, 0).copy()   # H, W, C
    out = v2.ToImage()({"img": a, "y": 1})
    assert type(out["img"]) is tv_tensors.Image and out["y"] == 1
    np.testing.assert_array_equal(out["img"].numpy(), torch.from_numpy(a).permute(2, 0, 1).numpy())
    with pytest.warns(UserWarning):
        t = v2.ToTensor()
    got = t(a)
    assert type(got) is ct.Tensor and got.dtype == ct.float32
    np.testing.assert_allclose(got.numpy(), torch.from_numpy(a).permute(2, 0, 1).float().div(255).numpy(), rtol=1e-6)
    assert type(v2.RandomHorizontalFlip(1.0)(a)) is np.ndarray   # other transforms pass arrays through


def test_sanitize_filters_a_tuple_of_labels():
    # torchvision's labels_getter may return several per-box tensors (labels, scores): each is filtered like the
    # boxes; a non-tensor entry is refused
    b = tv_tensors.BoundingBoxes([[0, 0, 5, 5], [2, 2, 2.5, 8], [1, 1, 9, 9]], format="XYXY", canvas_size=(20, 30))
    sample = {"boxes": b, "labels": ct.tensor([1, 2, 3]), "scores": ct.tensor([0.5, 0.6, 0.7]), "id": 4}
    out = v2.SanitizeBoundingBoxes(labels_getter=lambda s: (s["labels"], s["scores"]))(sample)
    assert out["labels"].tolist() == [1, 3] and out["id"] == 4
    np.testing.assert_allclose(out["scores"].numpy(), [0.5, 0.7])
    np.testing.assert_array_equal(out["boxes"].numpy(), [[0, 0, 5, 5], [1, 1, 9, 9]])
    with pytest.raises(ValueError, match="must be a tensor or None, got <class 'list'> instead"):
        v2.SanitizeBoundingBoxes(labels_getter=lambda s: (s["labels"], [1, 2, 3]))(sample)
    with pytest.raises(ValueError, match="and must match the number of labels"):
        v2.SanitizeBoundingBoxes(labels_getter=lambda s: (s["labels"], ct.zeros(2)))(sample)


def test_rgb_gaussian_noise_linear_transformation_and_temporal_subsample():
    torch = oracle.require_torch()
    g = ct.from_numpy(_img(4, 5)[:1])
    rgb = v2.RGB()(tv_tensors.Image(g))
    assert type(rgb) is tv_tensors.Image and rgb.shape == (3, 4, 5)
    np.testing.assert_array_equal(rgb.numpy(), np.repeat(g.numpy(), 3, 0))
    three = ct.from_numpy(_img(4, 5))
    assert ct.equal(v2.RGB()(three), three)
    assert v2.RGB()(PILImage.fromarray(_img(4, 5)[0])).mode == "RGB"
    x = np.random.RandomState(3).rand(3, 6, 6).astype(np.float32)
    torch.manual_seed(11)
    want = (torch.from_numpy(x) + (0.2 + torch.randn(3, 6, 6) * 0.5)).clamp(0, 1)
    ct.manual_seed(11)
    got = v2.GaussianNoise(mean=0.2, sigma=0.5)(ct.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="Input tensor is expected to be in float dtype, got dtype=torch.uint8"):
        v2.GaussianNoise()(three)
    with pytest.raises(ValueError, match="sigma shouldn't be negative. Got -1"):
        v2.GaussianNoise(sigma=-1)(ct.from_numpy(x))
    m = np.random.RandomState(4).rand(12, 12).astype(np.float32)
    mean = np.random.RandomState(5).rand(12).astype(np.float32)
    img = np.random.RandomState(6).rand(2, 3, 2, 2).astype(np.float32)
    out = v2.LinearTransformation(ct.from_numpy(m), ct.from_numpy(mean))(tv_tensors.Image(ct.from_numpy(img)))
    assert type(out) is tv_tensors.Image
    np.testing.assert_allclose(out.numpy(), ((img.reshape(2, 12) - mean) @ m).reshape(img.shape), rtol=1e-5)
    with pytest.raises(TypeError, match="does not support PIL images"):
        v2.LinearTransformation(ct.from_numpy(m), ct.from_numpy(mean))(PILImage.fromarray(_img(2, 2)[0]))
    video = tv_tensors.Video(ct.arange(8 * 3 * 2 * 2).reshape(8, 3, 2, 2))
    sub = v2.UniformTemporalSubsample(3)(video)
    idx = torch.linspace(0, 7, 3).long().tolist()
    assert type(sub) is tv_tensors.Video and idx == [0, 3, 7]
    np.testing.assert_array_equal(sub.numpy(), video.numpy()[idx])
