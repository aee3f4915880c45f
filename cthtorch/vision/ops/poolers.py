"""torchvision.ops.poolers: MultiScaleRoIAlign, roi_align over a feature pyramid, each box read from the level
its size maps to (the FPN paper's eq. 1, LevelMapper)."""
import cthtorch
from cthtorch import nn
from cthtorch.vision.ops._utils import convert_boxes_to_roi_format
from cthtorch.vision.ops.boxes import box_area
from cthtorch.vision.ops.roi_align import roi_align


class LevelMapper:
    """the pyramid level of each box: floor(canonical_level + log2(sqrt(area) / canonical_scale)), clamped to
    [k_min, k_max], as an index from k_min"""

    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        s = cthtorch.sqrt(cthtorch.cat([box_area(boxlist) for boxlist in boxlists]))
        target_lvls = cthtorch.floor(self.lvl0 + cthtorch.log2(s / self.s0) + cthtorch.tensor(self.eps, dtype=s.dtype))
        target_lvls = cthtorch.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return (target_lvls.to(cthtorch.int64) - self.k_min).to(cthtorch.int64)


def initLevelMapper(k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _infer_scale(feature, original_size):
    # the feature map's scale to the image, rounded to a power of two
    possible_scales = []
    for s1, s2 in zip(feature.shape[-2:], original_size):
        approx_scale = float(s1) / float(s2)
        possible_scales.append(2 ** float(cthtorch.tensor(approx_scale).log2().round()))
    return possible_scales[0]


def _setup_scales(features, image_shapes, canonical_scale, canonical_level):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_x = max(shape[0] for shape in image_shapes)
    max_y = max(shape[1] for shape in image_shapes)
    scales = [_infer_scale(feat, (max_x, max_y)) for feat in features]
    lvl_min = -cthtorch.log2(cthtorch.tensor(scales[0], dtype=cthtorch.float32)).item()
    lvl_max = -cthtorch.log2(cthtorch.tensor(scales[-1], dtype=cthtorch.float32)).item()
    return scales, initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                   canonical_level=canonical_level)


def _filter_input(x, featmap_names):
    return [v for k, v in x.items() if k in featmap_names]


def _multiscale_roi_align(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    rois = convert_boxes_to_roi_format(boxes)
    if len(x_filtered) == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    first = x_filtered[0]
    result = cthtorch.zeros((len(rois), first.shape[1]) + output_size, dtype=first.dtype, device=first.device)
    for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales)):
        idx_in_level = cthtorch.where(levels == level)[0]
        pooled = roi_align(per_level_feature, rois[idx_in_level], output_size=output_size, spatial_scale=scale,
                           sampling_ratio=sampling_ratio)
        result[idx_in_level] = pooled.to(result.dtype)
    return result


class MultiScaleRoIAlign(nn.Module):
    def __init__(self, featmap_names, output_size, sampling_ratio, *, canonical_scale=224, canonical_level=4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x, boxes, image_shapes):
        x_filtered = _filter_input(x, self.featmap_names)
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes, self.canonical_scale,
                                                         self.canonical_level)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio, self.scales,
                                     self.map_levels)

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, output_size={self.output_size}, "
                f"sampling_ratio={self.sampling_ratio})")
