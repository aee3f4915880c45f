"""torch.utils.benchmark: Timer, Measurement and Compare. The fuzzers are
not implemented and raise NotImplementedError."""
from cthtorch.utils.benchmark.utils.common import Measurement, TaskSpec, select_unit  # noqa: F401
from cthtorch.utils.benchmark.utils.compare import Colorize, Compare  # noqa: F401
from cthtorch.utils.benchmark.utils.timer import Language, Timer, timer  # noqa: F401


class Fuzzer:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("cthtorch.utils.benchmark.Fuzzer is not implemented")
