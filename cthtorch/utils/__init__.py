"""cthtorch.utils: data loading and hooks."""
from cthtorch.utils import hooks  # noqa: F401
