"""torchvision's datasets that cthtorch.vision does not read yet: building one raises NotImplementedError
naming it, so a program stops at once with the reason instead of at an AttributeError."""


class _NotReadYet:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchvision.datasets.%s is not implemented in cthtorch.vision; read its files "
                                  "with a custom Dataset, or an ImageFolder/DatasetFolder where its layout is one "
                                  "folder per class" % type(self).__name__)


def _named(*names):
    return [type(name, (_NotReadYet,), {"__module__": __name__}) for name in names]


(LSUN, LSUNClass, SBU, Flickr8k, SBDataset, INaturalist, PhotoTour, PCAM,
 RenderedSST2, CLEVRClassification, KittiFlow, Sintel, FlyingChairs, FlyingThings3D, HD1K, Kitti2012Stereo,
 Kitti2015Stereo, CarlaStereo, Middlebury2014Stereo, CREStereo, FallingThingsStereo, SceneFlowStereo, SintelStereo,
 InStereo2k, ETH3DStereo) = _named(
    "LSUN", "LSUNClass", "SBU", "Flickr8k", "SBDataset", "INaturalist",
    "PhotoTour", "PCAM", "RenderedSST2", "CLEVRClassification", "KittiFlow", "Sintel", "FlyingChairs",
    "FlyingThings3D", "HD1K", "Kitti2012Stereo", "Kitti2015Stereo", "CarlaStereo", "Middlebury2014Stereo",
    "CREStereo", "FallingThingsStereo", "SceneFlowStereo", "SintelStereo", "InStereo2k", "ETH3DStereo")
