"""torchvision.models' task families that cthtorch.vision does not have: importing one raises a
NotImplementedError that names it (rather than a ModuleNotFoundError that reads like a broken install)."""


class NotWrittenError(ImportError, NotImplementedError):
    """Also an ImportError, so code that probes for an optional module with `except ImportError` goes on."""


def refuse(module, what):
    raise NotWrittenError("%s (%s) is not implemented in cthtorch.vision; the classification models, "
                          "torchvision.models.segmentation and torchvision.ops are" % (module, what), name=module)
