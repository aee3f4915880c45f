"""torchvision.utils' drawing helpers (cthtorch/vision/utils.py): draw_bounding_boxes, draw_segmentation_masks,
draw_keypoints and flow_to_image, checked pixel by pixel against what the drawing must produce (outlines,
blends, discs, the Middlebury colour wheel's known colours), and their argument errors."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
from cthtorch.vision import utils as vutils


def test_draw_bounding_boxes_outline_and_fill():
    img = ct.zeros(3, 20, 30, dtype=ct.uint8)
    out = vutils.draw_bounding_boxes(img, ct.tensor([[2, 3, 10, 12], [15, 5, 25, 18]]), colors=["red", (0, 0, 255)])
    assert out.dtype == ct.uint8 and out.shape == (3, 20, 30)
    o = out.permute(1, 2, 0).numpy()
    assert (o[3, 2:11] == [255, 0, 0]).all() and (o[3:13, 10] == [255, 0, 0]).all()
    assert (o[5, 15:26] == [0, 0, 255]).all() and (o[18, 15:26] == [0, 0, 255]).all()
    assert (o[4:12, 3:10] == 0).all()                      # inside left alone
    assert img.sum().item() == 0                           # the input is not drawn on
    filled = vutils.draw_bounding_boxes(img.float() / 255, ct.tensor([[2., 3, 10, 12]]), colors="white", fill=True)
    assert filled.dtype == ct.float32
    # alpha 100 of white over black: round(255 * 100 / 255) = 100
    assert filled[0, 6, 6].item() == pytest.approx(100 / 255, abs=1 / 255)
    gray = vutils.draw_bounding_boxes(ct.zeros(1, 8, 8, dtype=ct.uint8), ct.tensor([[1, 1, 5, 5]]), labels=["a"])
    assert gray.shape == (3, 8, 8)


def test_draw_bounding_boxes_errors():
    img = ct.zeros(3, 8, 8, dtype=ct.uint8)
    with pytest.raises(TypeError, match="Tensor expected"):
        vutils.draw_bounding_boxes(np.zeros((3, 8, 8)), ct.zeros(0, 4))
    with pytest.raises(ValueError, match="The image dtype must be uint8 or float, got torch.int32"):
        vutils.draw_bounding_boxes(img.int(), ct.zeros(0, 4))
    with pytest.raises(ValueError, match="Pass individual images, not batches"):
        vutils.draw_bounding_boxes(img[None], ct.zeros(0, 4))
    with pytest.raises(ValueError, match="Only grayscale and RGB images are supported"):
        vutils.draw_bounding_boxes(ct.zeros(2, 8, 8, dtype=ct.uint8), ct.zeros(0, 4))
    with pytest.raises(ValueError, match="Boxes need to be in"):
        vutils.draw_bounding_boxes(img, ct.tensor([[5, 0, 1, 4]]))
    with pytest.raises(ValueError, match=r"Number of boxes \(1\) and labels \(2\) mismatch"):
        vutils.draw_bounding_boxes(img, ct.tensor([[0, 0, 1, 4]]), labels=["a", "b"])
    with pytest.raises(ValueError, match="Number of colors must be equal or larger"):
        vutils.draw_bounding_boxes(img, ct.tensor([[0, 0, 1, 4]] * 2), colors=["red"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert vutils.draw_bounding_boxes(img, ct.zeros(0, 4)) is img
    assert "No box was drawn" in str(w[0].message)


def test_draw_segmentation_masks_blend():
    img = ct.full((3, 4, 5), 100, dtype=ct.uint8)
    m = ct.zeros(2, 4, 5, dtype=ct.bool)
    m[0, :2] = True
    m[1, 1:3, :2] = True
    out = vutils.draw_segmentation_masks(img, m, alpha=0.5, colors=["red", (0, 255, 0)])
    assert out.dtype == ct.uint8
    o = out.permute(1, 2, 0).numpy()
    assert (o[0, 0] == [177, 50, 50]).all()                # 100 * .5 + 255 * .5 = 177.5 -> 177
    assert (o[2, 0] == [50, 177, 50]).all()
    assert (o[1, 0] == [50, 50, 50]).all()                 # under both masks: blended with black
    assert (o[3] == 100).all()
    f = vutils.draw_segmentation_masks(img.float() / 255, m[0], alpha=1.0, colors="blue")
    assert f.dtype == ct.float32 and ct.equal(f[:, 0, 0], ct.tensor([0., 0, 1]))
    with pytest.raises(ValueError, match="Pass an RGB image. Other Image formats are not supported"):
        vutils.draw_segmentation_masks(img[:1], m)
    with pytest.raises(ValueError, match="The masks must be of dtype bool. Got torch.uint8"):
        vutils.draw_segmentation_masks(img, m.to(ct.uint8))
    with pytest.raises(ValueError, match="The image and the masks must have the same height and width"):
        vutils.draw_segmentation_masks(img, m[:, :3])


def test_draw_keypoints_discs_and_lines():
    img = ct.zeros(3, 20, 20, dtype=ct.uint8)
    kp = ct.tensor([[[5., 5.], [15., 5.], [10., 15.]]])
    out = vutils.draw_keypoints(img, kp, connectivity=[(0, 1)], colors="red", radius=1, width=1,
                                visibility=ct.tensor([[True, True, False]]))
    o = out.permute(1, 2, 0).numpy()
    # discs first, then the lines over them (as torchvision draws): the discs show above and below the line
    assert (o[4, 5] == [255, 0, 0]).all() and (o[6, 15] == [255, 0, 0]).all()
    assert (o[15, 10] == 0).all()                          # invisible keypoint not drawn
    assert (o[5, 10] == 255).all()                         # the connection, PIL's default white ink
    with pytest.raises(ValueError, match=r"keypoints must be of shape \(num_instances, K, 2\)"):
        vutils.draw_keypoints(img, kp[0])
    with pytest.raises(ValueError, match="visibility must be of shape"):
        vutils.draw_keypoints(img, kp, visibility=ct.ones(1, 3, 1, 1, dtype=ct.bool))


def test_flow_to_image_colour_wheel():
    flow = ct.zeros(2, 1, 3)
    flow[0, 0, 0] = 2.0     # rightwards, the largest: atan2(-0., -1) = -pi, the wheel's first colour (red)
    flow[0, 0, 1] = -2.0    # leftwards: wheel index 27 (cyan-blue)
    img = vutils.flow_to_image(flow)
    assert img.dtype == ct.uint8 and img.shape == (3, 1, 3)
    o = img.permute(1, 2, 0).numpy()[0]
    np.testing.assert_array_equal(o[0], [255, 0, 0])
    np.testing.assert_array_equal(o[1], [0, 209, 255])
    np.testing.assert_array_equal(o[2], [255, 255, 255])   # no motion: white
    assert vutils.flow_to_image(flow[None]).shape == (1, 3, 1, 3)
    with pytest.raises(ValueError, match="Flow should be of dtype torch.float, got torch.float64."):
        vutils.flow_to_image(flow.double())
    with pytest.raises(ValueError, match=r"Input flow should have shape \(2, H, W\) or \(N, 2, H, W\)"):
        vutils.flow_to_image(ct.zeros(3, 2, 2))
