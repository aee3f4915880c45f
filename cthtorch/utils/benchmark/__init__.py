"""torch.utils.benchmark: Timer, Measurement, Compare and the Fuzzer. Callgrind
collection and the op_fuzzers presets are not implemented."""
from cthtorch.utils.benchmark.utils.common import Measurement, TaskSpec, select_unit  # noqa: F401
from cthtorch.utils.benchmark.utils.compare import Colorize, Compare  # noqa: F401
from cthtorch.utils.benchmark.utils.timer import Language, Timer, timer  # noqa: F401
from cthtorch.utils.benchmark.utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias  # noqa: F401
