"""torch.utils.benchmark: Timer and Measurement. Compare (the results table)
and the fuzzers are not implemented and raise NotImplementedError."""
from cthtorch.utils.benchmark.utils.common import Measurement, TaskSpec, select_unit  # noqa: F401
from cthtorch.utils.benchmark.utils.timer import Language, Timer, timer  # noqa: F401


class Compare:
    def __init__(self, results):
        raise NotImplementedError("cthtorch.utils.benchmark.Compare (the table of results) is not implemented; "
                                  "print each Measurement, or read .median / .mean / .iqr from them")


class Fuzzer:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("cthtorch.utils.benchmark.Fuzzer is not implemented")
