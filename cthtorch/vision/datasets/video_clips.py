"""The video datasets (Kinetics, UCF101, HMDB51) cut clips out of decoded videos; cthtorch.vision has no video
decoder, so they raise NotImplementedError when built."""


class _VideoClips:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchvision.datasets.%s decodes video files into clips, and cthtorch.vision has "
                                  "no video backend; decode the clips to image folders or tensors and use "
                                  "ImageFolder/DatasetFolder or a TensorDataset" % type(self).__name__)


class Kinetics(_VideoClips):
    pass


class UCF101(_VideoClips):
    pass


class HMDB51(_VideoClips):
    pass
