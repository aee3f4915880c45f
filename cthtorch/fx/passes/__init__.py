from . import shape_prop  # noqa: F401
