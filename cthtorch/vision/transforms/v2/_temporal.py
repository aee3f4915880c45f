"""Transforms over the time axis of videos (v2)."""
from cthtorch.vision.transforms.v2._transform import Transform
from cthtorch.vision.transforms.v2.functional import uniform_temporal_subsample


class UniformTemporalSubsample(Transform):
    """num_samples evenly spaced frames of each video (..., T, C, H, W); other leaves pass through"""

    def __init__(self, num_samples):
        super().__init__()
        self.num_samples = num_samples

    def _image(self, img, params):
        return uniform_temporal_subsample(img, self.num_samples)

    def _mask(self, mask, params):
        return mask
