"""torchvision.utils: make_grid / save_image (the VAE and DCGAN examples), and the drawing helpers of the
detection, segmentation, keypoint and optical-flow tutorials (draw_bounding_boxes, draw_segmentation_masks,
draw_keypoints, flow_to_image)."""
import math
import warnings

import cthtorch


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, (list, tuple)):
        tensor = cthtorch.stack(list(tensor), 0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = cthtorch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = cthtorch.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm_ip(img, lo, hi):
            img.clamp_(min=lo, max=hi)
            img.sub_(lo).div_(max(hi - lo, 1e-5))

        def norm_range(t, r):
            if r is not None:
                norm_ip(t, r[0], r[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))
        if scale_each:
            for t in tensor:
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = cthtorch.full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value,
                         dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    arr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(cthtorch.uint8).numpy()
    Image.fromarray(arr).save(fp, format=format)


def _generate_color_palette(num_objects):
    palette = cthtorch.tensor([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    return [tuple(int(v) for v in (i * palette) % 255) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, dtype=cthtorch.uint8):
    """one RGB tuple per object: a palette for None, one colour repeated, or the list given (names or tuples)"""
    from PIL import ImageColor
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of objects, but got "
                             f"{len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"`colors` must be a tuple or a string, or a list thereof, but got {colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(color) if isinstance(color, str) else color for color in colors]
    if dtype.is_floating_point:
        colors = [tuple(v / 255 for v in color) for color in colors]
    return colors


def _check_image(image, rgb_only, uint8_only=False):
    if not isinstance(image, cthtorch.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if uint8_only and image.dtype != cthtorch.uint8:
        raise ValueError(f"The image dtype must be uint8, got {image.dtype}")
    if not (image.dtype == cthtorch.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if rgb_only and image.size(0) != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if image.size(0) not in {1, 3}:
        raise ValueError("Only grayscale and RGB images are supported")


def _to_pil_uint8(image):
    from PIL import Image
    if image.is_floating_point():
        from cthtorch.vision.transforms.functional import convert_image_dtype
        image = convert_image_dtype(image, cthtorch.uint8)
    return Image.fromarray(image.permute(1, 2, 0).cpu().numpy())


def _from_pil(img, dtype):
    from cthtorch.vision.transforms.functional import convert_image_dtype, pil_to_tensor
    out = pil_to_tensor(img)
    return convert_image_dtype(out, dtype) if dtype.is_floating_point else out


@cthtorch.no_grad()
def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1, font=None, font_size=None):
    """the (C, H, W) uint8 or float image with the (xmin, ymin, xmax, ymax) boxes drawn, labels inside their
    top-left corner; fill paints them with alpha 100"""
    from PIL import ImageDraw, ImageFont
    _check_image(image, rgb_only=False)
    if (boxes[:, 0] > boxes[:, 2]).any() or (boxes[:, 1] > boxes[:, 3]).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use torchvision.ops.box_convert to "
                         "convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. Please specify labels "
                         f"for each box.")
    colors = _parse_colors(colors, num_objects=num_boxes)
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if image.size(0) == 1:
        image = cthtorch.tile(image, (3, 1, 1))
    original_dtype = image.dtype
    img_to_draw = _to_pil_uint8(image)
    img_boxes = boxes.to(cthtorch.int64).tolist()
    draw = ImageDraw.Draw(img_to_draw, "RGBA") if fill else ImageDraw.Draw(img_to_draw)
    for bbox, color, label in zip(img_boxes, colors, labels):
        color = tuple(color)
        if fill:
            draw.rectangle(bbox, width=width, outline=color, fill=color + (100,))
        else:
            draw.rectangle(bbox, width=width, outline=color)
        if label is not None:
            margin = width + 1
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=color, font=txt_font)
    return _from_pil(img_to_draw, original_dtype)


@cthtorch.no_grad()
def draw_segmentation_masks(image, masks, alpha=0.8, colors=None):
    """the RGB image with each boolean (H, W) mask blended in at opacity alpha; pixels under several masks
    are blended with black"""
    _check_image(image, rgb_only=True)
    if masks.ndim == 2:
        masks = masks[None, :, :]
    if masks.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != cthtorch.bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if masks.shape[-2:] != image.shape[-2:]:
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = masks.size()[0]
    overlapping_masks = masks.sum(dim=0) > 1
    if num_masks == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    original_dtype = image.dtype
    colors = [cthtorch.tensor(color, dtype=original_dtype, device=image.device)
              for color in _parse_colors(colors, num_objects=num_masks, dtype=original_dtype)]
    img_to_draw = image.detach().clone()
    for mask, color in zip(masks, colors):
        img_to_draw[:, mask] = color[:, None]
    img_to_draw[:, overlapping_masks] = 0
    out = image * (1 - alpha) + img_to_draw * alpha
    return out.to(original_dtype)


@cthtorch.no_grad()
def draw_keypoints(image, keypoints, connectivity=None, colors=None, radius=2, width=3, visibility=None):
    """the RGB image with each visible keypoint of each (num_instances, K, 2) instance drawn as a disc of
    radius, and the connectivity pairs as lines of width"""
    from PIL import ImageDraw
    _check_image(image, rgb_only=True)
    if keypoints.ndim != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    if visibility is None:
        visibility = cthtorch.ones(keypoints.shape[:-1], dtype=cthtorch.bool)
    if visibility.ndim == 3:
        visibility = visibility.squeeze(-1)
    if visibility.ndim != 2:
        raise ValueError(f"visibility must be of shape (num_instances, K). Got ndim={visibility.ndim}")
    if visibility.shape != keypoints.shape[:-1]:
        raise ValueError("keypoints and visibility must have the same dimensionality for num_instances and K. "
                         f"Got visibility.shape = {visibility.shape} and keypoints.shape = {keypoints.shape}")
    original_dtype = image.dtype
    img_to_draw = _to_pil_uint8(image)
    draw = ImageDraw.Draw(img_to_draw)
    img_kpts = keypoints.to(cthtorch.int64).tolist()
    img_vis = visibility.cpu().bool().tolist()
    for kpt_inst, vis_inst in zip(img_kpts, img_vis):
        for kpt_coord, kp_vis in zip(kpt_inst, vis_inst):
            if not kp_vis:
                continue
            x, y = kpt_coord[0], kpt_coord[1]
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors, outline=None, width=0)
        for a, b in connectivity or ():
            if not vis_inst[a] or not vis_inst[b]:
                continue
            draw.line(((kpt_inst[a][0], kpt_inst[a][1]), (kpt_inst[b][0], kpt_inst[b][1])), width=width)
    return _from_pil(img_to_draw, original_dtype)


def _make_colorwheel():
    # Baker et al.'s optical-flow colour wheel: red-yellow-green-cyan-blue-magenta in 15, 6, 4, 11, 13, 6 steps
    # per segment: its length, the channel held at 255, the channel ramping and whether it ramps up
    segments = [(15, 0, 1, True), (6, 1, 0, False), (4, 1, 2, True), (11, 2, 1, False), (13, 2, 0, True),
                (6, 0, 2, False)]
    colorwheel = cthtorch.zeros((sum(seg[0] for seg in segments), 3))
    col = 0
    for n, full, ramp_ch, up in segments:
        ramp = cthtorch.floor(255 * cthtorch.arange(0, n) / n)
        colorwheel[col:col + n, full] = 255
        colorwheel[col:col + n, ramp_ch] = ramp if up else 255 - ramp
        col += n
    return colorwheel


def _normalized_flow_to_image(normalized_flow):
    N, _, H, W = normalized_flow.shape
    flow_image = cthtorch.zeros((N, 3, H, W), dtype=cthtorch.uint8, device=normalized_flow.device)
    colorwheel = _make_colorwheel().to(normalized_flow.device)
    num_cols = colorwheel.shape[0]
    norm = cthtorch.sum(normalized_flow ** 2, dim=1).sqrt()
    a = cthtorch.atan2(-normalized_flow[:, 1, :, :], -normalized_flow[:, 0, :, :]) / cthtorch.pi
    fk = (a + 1) / 2 * (num_cols - 1)
    k0 = cthtorch.floor(fk).to(cthtorch.long)
    k1 = k0 + 1
    k1[k1 == num_cols] = 0
    f = fk - k0
    for c in range(colorwheel.shape[1]):
        tmp = colorwheel[:, c]
        col = (1 - f) * (tmp[k0] / 255.0) + f * (tmp[k1] / 255.0)
        col = 1 - norm * (1 - col)
        flow_image[:, c, :, :] = cthtorch.floor(255 * col)
    return flow_image


@cthtorch.no_grad()
def flow_to_image(flow):
    """(2, H, W) or (N, 2, H, W) float flow as uint8 RGB: direction is hue, magnitude (over the largest) saturation"""
    if flow.dtype != cthtorch.float:
        raise ValueError(f"Flow should be of dtype torch.float, got {flow.dtype}.")
    orig_shape = flow.shape
    if flow.ndim == 3:
        flow = flow[None]
    if flow.ndim != 4 or flow.shape[1] != 2:
        raise ValueError(f"Input flow should have shape (2, H, W) or (N, 2, H, W), got {orig_shape}.")
    max_norm = cthtorch.sum(flow ** 2, dim=1).sqrt().max()
    epsilon = cthtorch.finfo(flow.dtype).eps
    img = _normalized_flow_to_image(flow / (max_norm + epsilon))
    return img[0] if len(orig_shape) == 3 else img
