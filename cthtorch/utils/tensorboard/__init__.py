"""torch.utils.tensorboard: SummaryWriter over the tensorboard package
(pip install tensorboard); imported only when used."""
try:
    import tensorboard  # noqa: F401
except ModuleNotFoundError as e:
    raise ModuleNotFoundError("cthtorch.utils.tensorboard needs the tensorboard package: "
                              "pip install tensorboard", name=e.name) from None

from cthtorch.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402,F401

__all__ = ["FileWriter", "SummaryWriter"]
