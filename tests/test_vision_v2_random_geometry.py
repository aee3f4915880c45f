"""v2's RandomPerspective, ElasticTransform, ScaleJitter, RandomShortestSize, RandomResize, FiveCrop/TenCrop,
RandomChannelPermutation and JPEG: the draws replayed on torch's generator in torchvision's order, images
warped or resized by the functional kernels, masks with nearest interpolation, boxes moved with the image
(checked against a homography solved in numpy, or against the marked pixels they enclose)."""
import io

import numpy as np
import pytest
from PIL import Image as PILImage

import cthtorch as ct
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F1
from cthtorch.vision.transforms import v2


def _img(h=20, w=30, seed=0):
    return ct.from_numpy(np.random.RandomState(seed).randint(0, 256, (3, h, w)).astype(np.uint8))


def _homography(src, dst):
    """3x3 H with H @ [x, y, 1] ~ [x', y', 1] for the four point pairs (numpy solve)"""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst):
        rows += [[x, y, 1, 0, 0, 0, -u * x, -u * y], [0, 0, 0, x, y, 1, -v * x, -v * y]]
        rhs += [u, v]
    h = np.linalg.solve(np.array(rows, float), np.array(rhs, float))
    return np.append(h, 1.0).reshape(3, 3)


def test_random_perspective_draws_and_moves_boxes():
    from oracle import require_torch
    torch = require_torch()
    h, w = 20, 30
    img = _img(h, w)
    boxes = tv_tensors.BoundingBoxes([[4.0, 3.0, 12.0, 9.0], [15.0, 10.0, 27.0, 18.0]], format="XYXY",
                                     canvas_size=(h, w))
    mask = tv_tensors.Mask((_img(h, w, 1)[0] > 128).to(ct.uint8))
    for seed in range(6):
        torch.manual_seed(seed)
        applied = bool(torch.rand(1) < 0.5)
        if applied:
            bw, bh = int(0.5 * (w // 2)) + 1, int(0.5 * (h // 2)) + 1
            r = lambda lo, hi: int(torch.randint(lo, hi, size=(1,)))  # noqa: E731
            end = [[r(0, bw), r(0, bh)], [r(w - bw, w), r(0, bh)], [r(w - bw, w), r(h - bh, h)],
                   [r(0, bw), r(h - bh, h)]]
        ct.manual_seed(seed)
        oi, ob, om = v2.RandomPerspective()(tv_tensors.Image(img), boxes, mask)
        assert type(oi) is tv_tensors.Image and type(ob) is tv_tensors.BoundingBoxes and type(om) is tv_tensors.Mask
        if not applied:
            assert ct.equal(oi, img) and ct.equal(ob, boxes)
            continue
        start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
        np.testing.assert_array_equal(oi.numpy(), F1.perspective(img, start, end, fill=0).numpy())
        assert set(np.unique(om.numpy())) <= {0, 1}     # nearest: no blended mask values
        H = _homography(start, end)
        for b, got in zip(boxes.numpy(), ob.numpy()):
            corners = np.array([[b[0], b[1], 1], [b[2], b[1], 1], [b[0], b[3], 1], [b[2], b[3], 1]]).T
            p = H @ corners
            p = p[:2] / p[2]
            want = np.clip([p[0].min(), p[1].min(), p[0].max(), p[1].max()], 0, [w, h, w, h])
            np.testing.assert_allclose(got, want, atol=1e-3)
    with pytest.raises(ValueError, match="distortion_scale value should be between 0 and 1"):
        v2.RandomPerspective(1.5)


def test_elastic_transform_draws_like_v1_and_keeps_boxes_with_no_displacement():
    from cthtorch.vision.transforms import transforms as T1
    img = _img(44, 46)    # the blur's reflect padding (20 a side for sigma 5) needs sides above 20
    ct.manual_seed(3)
    disp = T1.ElasticTransform.get_params([50.0, 50.0], [5.0, 5.0], [44, 46])
    ct.manual_seed(3)
    out = v2.ElasticTransform()(tv_tensors.Image(img))
    np.testing.assert_array_equal(out.numpy(), F1.elastic_transform(img, disp, fill=0).numpy())
    boxes = tv_tensors.BoundingBoxes([[2, 3, 9, 11]], format="XYXY", canvas_size=(16, 18))
    ob = v2.ElasticTransform(alpha=0.0, sigma=1.0)(boxes)
    np.testing.assert_array_equal(ob.numpy(), boxes.numpy())
    # a uniform displacement of +d (normalized) samples from further right, so boxes move left
    d = ct.zeros(1, 16, 18, 2)
    d[..., 0] = 2 / 9.0                      # 2 pixels of an 18 wide image ([-1, 1] spans 18)
    moved = v2.ElasticTransform()._boxes(boxes, dict(displacement=d))
    np.testing.assert_allclose(moved.numpy(), [[0, 3, 7, 11]], atol=1e-4)


def test_scale_jitter_shortest_size_and_random_resize_draws():
    from oracle import require_torch
    torch = require_torch()
    img = tv_tensors.Image(_img(20, 30))
    boxes = tv_tensors.BoundingBoxes([[3.0, 2.0, 15.0, 10.0]], format="XYXY", canvas_size=(20, 30))
    mask = tv_tensors.Mask(ct.ones(20, 30, dtype=ct.uint8))
    torch.manual_seed(1)
    scale = 0.1 + torch.rand(1) * 1.9
    r = min(64 / 20, 48 / 30) * scale
    size = (int(20 * float(r)), int(30 * float(r)))
    ct.manual_seed(1)
    oi, ob, om = v2.ScaleJitter((48, 64))(img, boxes, mask)
    assert tuple(oi.shape[-2:]) == size and tuple(om.shape) == size and ob.canvas_size == size
    sy, sx = size[0] / 20, size[1] / 30
    np.testing.assert_allclose(ob.numpy(), [[3 * sx, 2 * sy, 15 * sx, 10 * sy]], rtol=1e-6)
    torch.manual_seed(2)
    pick = [12, 16, 24][int(torch.randint(3, ()))]
    ct.manual_seed(2)
    oi = v2.RandomShortestSize([12, 16, 24], max_size=40)(img)
    r = min(pick / 20, 40 / 30)
    assert tuple(oi.shape[-2:]) == (int(20 * r), int(30 * r))
    torch.manual_seed(4)
    s = int(torch.randint(10, 30, ()))
    ct.manual_seed(4)
    oi, ob = v2.RandomResize(10, 30)(img, boxes)
    assert oi.shape[-2] == s and oi.shape[-1] == int(s * 30 / 20) and ob.canvas_size == tuple(oi.shape[-2:])
    np.testing.assert_array_equal(oi.numpy(), F1.resize(img.as_subclass(ct.Tensor), [s]).numpy())


def test_five_and_ten_crop_give_tuples_and_refuse_boxes():
    img = tv_tensors.Image(_img(10, 12))
    crops = v2.FiveCrop(4)(img)
    assert len(crops) == 5 and all(type(c) is tv_tensors.Image and c.shape == (3, 4, 4) for c in crops)
    np.testing.assert_array_equal(crops[3].numpy(), img.numpy()[:, 6:, 8:])
    crops, label = v2.TenCrop((4, 6), vertical_flip=True)(img, 7)
    assert len(crops) == 10 and label == 7
    np.testing.assert_array_equal(crops[5].numpy(), img.numpy()[:, ::-1][:, :4, :6])
    with pytest.raises(TypeError, match="BoundingBoxes'es and Mask's are not supported by FiveCrop\\(\\)"):
        v2.FiveCrop(4)(img, tv_tensors.Mask(ct.zeros(10, 12)))


def test_random_channel_permutation_and_jpeg():
    from oracle import require_torch
    torch = require_torch()
    x = _img(8, 8)
    torch.manual_seed(5)
    perm = torch.randperm(3).tolist()
    ct.manual_seed(5)
    out, mask = v2.RandomChannelPermutation()(tv_tensors.Image(x), tv_tensors.Mask(ct.ones(8, 8)))
    np.testing.assert_array_equal(out.numpy(), x.numpy()[perm])
    assert ct.equal(mask, ct.ones(8, 8))
    # JPEG: a Pillow round trip at the drawn quality, for PIL images and uint8 tensors alike
    smooth = ct.from_numpy(np.tile(np.linspace(0, 255, 16).astype(np.uint8), (3, 16, 1)))
    torch.manual_seed(6)
    q = int(torch.randint(20, 81, ()))
    ct.manual_seed(6)
    got = v2.JPEG((20, 80))(smooth)
    buf = io.BytesIO()
    PILImage.fromarray(smooth.permute(1, 2, 0).contiguous().numpy()).save(buf, format="JPEG", quality=q)
    want = np.asarray(PILImage.open(io.BytesIO(buf.getvalue()))).transpose(2, 0, 1)
    np.testing.assert_array_equal(got.numpy(), want)
    assert np.abs(got.numpy().astype(int) - smooth.numpy().astype(int)).max() < 40
    pil = v2.JPEG(90)(PILImage.fromarray(smooth.permute(1, 2, 0).contiguous().numpy()))
    assert isinstance(pil, PILImage.Image) and pil.size == (16, 16)
    assert v2.JPEG(50)(ct.stack([smooth, smooth])).shape == (2, 3, 16, 16)
    with pytest.raises(TypeError, match="Input tensor dtype should be uint8, but got torch.float32."):
        v2.JPEG(50)(smooth.float())
    with pytest.raises(ValueError, match="quality must be an integer from 1 to 100"):
        v2.JPEG((0, 50))
    with pytest.raises(TypeError, match="quality can't be bool"):
        v2.JPEG(True)


def test_functional_geometry_dispatches_on_boxes_and_masks():
    from cthtorch.vision.transforms.v2 import functional as F2
    boxes = tv_tensors.BoundingBoxes([[1.0, 2.0, 3.0, 5.0]], format="XYXY", canvas_size=(10, 10))
    # 90 degrees counter-clockwise about the centre: (x, y) -> (y, 10 - x)
    np.testing.assert_allclose(F2.rotate(boxes, 90.0).numpy(), [[2, 7, 5, 9]], atol=1e-5)
    np.testing.assert_allclose(F2.affine(boxes, 0.0, [2, 1], 1.0, [0.0, 0.0]).numpy(), [[3, 3, 5, 6]], atol=1e-5)
    cropped = F2.center_crop(boxes, 4)
    assert cropped.canvas_size == (4, 4)
    np.testing.assert_allclose(cropped.numpy(), [[0, 0, 0, 2]])
    resized = F2.resized_crop(boxes, 2, 1, 4, 4, [8, 8])
    assert resized.canvas_size == (8, 8)
    np.testing.assert_allclose(resized.numpy(), [[0, 0, 4, 6]])
    mask = tv_tensors.Mask((_img(10, 10, 2)[0] > 100).to(ct.uint8))
    rot = F2.rotate(mask, 90.0)
    assert type(rot) is tv_tensors.Mask and rot.shape == (10, 10)
    np.testing.assert_array_equal(rot.numpy(), np.rot90(mask.numpy()))
    start = [[0, 0], [9, 0], [9, 9], [0, 9]]
    end = [[1, 1], [8, 0], [9, 9], [0, 8]]
    warped = F2.perspective(mask, start, end)
    assert type(warped) is tv_tensors.Mask and set(np.unique(warped.numpy())) <= {0, 1}
    img = _img(10, 10)
    np.testing.assert_array_equal(F2.perspective(tv_tensors.Image(img), start, end).numpy(),
                                  F1.perspective(img, start, end).numpy())
    d = ct.zeros(1, 10, 10, 2)
    assert ct.equal(F2.elastic(boxes, d), boxes) and F2.elastic_transform is F2.elastic
    with pytest.raises(NotImplementedError, match="expand=True"):
        F2.rotate(boxes, 30.0, expand=True)
