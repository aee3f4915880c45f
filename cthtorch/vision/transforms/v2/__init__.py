"""torchvision.transforms.v2: transforms over whole samples (images with their masks, boxes and labels)."""
from cthtorch.vision.transforms.v2 import functional  # noqa: F401
from cthtorch.vision.transforms.functional import InterpolationMode  # noqa: F401
from cthtorch.vision.transforms.v2._transform import Transform  # noqa: F401
from cthtorch.vision.transforms.v2._container import Compose, RandomApply, RandomChoice, RandomOrder  # noqa: F401
from cthtorch.vision.transforms.v2._type_conversion import (ToImage, PILToTensor, ToPureTensor,  # noqa: F401
                                                            ToPILImage, ToTensor, Identity, ToDtype,
                                                            ConvertImageDtype, Normalize, Lambda,
                                                            LinearTransformation)
from cthtorch.vision.transforms.v2._geometry import (Resize, CenterCrop, RandomCrop, RandomResizedCrop,  # noqa: F401
                                                     RandomHorizontalFlip, RandomVerticalFlip, Pad, RandomAffine,
                                                     RandomRotation, RandomPerspective, ElasticTransform,
                                                     ScaleJitter, RandomShortestSize, RandomResize, FiveCrop,
                                                     TenCrop)
from cthtorch.vision.transforms.v2._color import (ColorJitter, Grayscale, RandomGrayscale, GaussianBlur,  # noqa: F401
                                                  RandomInvert, RandomAutocontrast, RandomEqualize,
                                                  RandomPosterize, RandomSolarize, RandomAdjustSharpness,
                                                  RandomChannelPermutation, RGB, GaussianNoise)
from cthtorch.vision.transforms.v2._augment import RandomErasing, CutMix, MixUp, JPEG  # noqa: F401
from cthtorch.vision.transforms.v2._auto_augment import (AutoAugmentPolicy, AutoAugment, RandAugment,  # noqa: F401
                                                         TrivialAugmentWide, AugMix)
from cthtorch.vision.transforms.v2._bounding_boxes import (ConvertBoundingBoxFormat, ClampBoundingBoxes,  # noqa: F401
                                                           SanitizeBoundingBoxes)
from cthtorch.vision.transforms.v2._detection import (RandomIoUCrop, RandomZoomOut,  # noqa: F401
                                                      RandomPhotometricDistort)
from cthtorch.vision.transforms.v2._temporal import UniformTemporalSubsample  # noqa: F401
