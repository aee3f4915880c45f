"""TaskSpec (what a Timer measures) and Measurement (what it measured), as
torch.utils.benchmark.utils.common has them: times per run, median / mean /
IQR, an IQR warning, and the same repr."""
import collections
import contextlib
import dataclasses
import math
import textwrap

import cthtorch

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9   # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """Everything that defines a Timer except its globals."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label, else the one-line stmt, else the indented stmt (with the sub_label)."""
        sub = ": %s" % self.sub_label if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return "stmt:%s\n%s" % (" (%s)" % self.sub_label if self.sub_label else "", textwrap.indent(self.stmt, "  "))

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return "setup: " + self.setup

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(sorted_values, q):
    """Linear interpolation between order statistics (torch.quantile's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timings of a statement: raw_times[i] is the time of
    number_per_run executions; times are per execution."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Digits the interquartile spread supports (1 to 4), for Compare-style tables."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:int(math.ceil(3 * n / 4))]
        mean = sum(middle) / len(middle)
        std = math.sqrt(sum((t - mean) ** 2 for t in middle) / len(middle))
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(math.floor(math.log10(self._median / ci))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = sum(self._sorted_times) / len(self._sorted_times)
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg):
        self._warnings += ("  WARNING: Interquartile range is %.1f%% of the median measurement.\n           %s"
                           % (self.iqr / self.median * 100, msg),)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    # no env property: torch 2.13's reads a misspelt attribute, so m.env falls
    # through __getattr__ to the TaskSpec's env (None when unset); Compare relies on that

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self).replace("cthtorch.", "torch.", 1), self.task_spec.summarize(),
                 "  %s%.2f %s" % ("Median: " if n > 1 else "", self._median / scale, unit)]
        if n >= 4:
            lines.append("  IQR:    %.2f %s (%.2f to %.2f)" % (self.iqr / scale, unit, self._p25 / scale,
                                                              self._p75 / scale, ))
        lines.append("  %d measurement%s, %d runs %s %d thread%s" % (
            n, "s" if n > 1 else "", self.number_per_run, "per measurement," if n > 1 else ",", self.num_threads,
            "s" if self.num_threads > 1 else ""))
        lines.extend(self._warnings)
        return "\n".join(line for line in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements):
        """Replicates of the same TaskSpec pooled into one Measurement (times per run, number_per_run=1)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].append(m)
        return [Measurement(1, [t for m in group for t in m.times], spec) for spec, group in groups.items()]


def select_unit(t):
    """(unit, seconds per unit) that shows t with an O(1) number."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """x rounded to n significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (int(math.ceil(math.log10(abs(x)))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    prior = cthtorch.get_num_threads()
    try:
        cthtorch.set_num_threads(n)
        yield
    finally:
        cthtorch.set_num_threads(prior)
