"""Timer: timeit for tensor code, as torch.utils.benchmark.Timer (Python
statements only; the C++ and Callgrind paths raise NotImplementedError)."""
import enum
import textwrap
import timeit

import cthtorch
from cthtorch.utils.benchmark.utils import common

__all__ = ["Timer", "timer", "Language"]

timer = timeit.default_timer   # no accelerator to synchronize here


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("cthtorch.utils.benchmark.Timer: C++ statements are not supported "
                                      "(cthtorch does not compile timing templates); time Python statements")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError("Invalid language `%s`." % (language,))
        if global_setup:
            raise ValueError("global_setup is C++ only, got `%s`. Most likely this code can simply be moved to "
                             "`setup`." % global_setup)
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", cthtorch)
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number, times):
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number=1000000):
        """One timing of `number` runs, after a warm-up of number // 100."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, stop_hook, min_run_time, max_run_time=None, callback=None):
        """Blocks of `number` runs until min_run_time has passed and stop_hook agrees (or max_run_time passes)."""
        total, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """Runs per block: grown tenfold until the timer's own overhead is negligible."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs for at least min_run_time seconds; one timing per block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until the IQR is below threshold of the median (at least 4 blocks) or max_run_time passes."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)

        times = self._measurement_loop(number, stop_hook, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        raise NotImplementedError("cthtorch.utils.benchmark.Timer.collect_callgrind: Callgrind instruction counts "
                                  "are not supported in cthtorch")
