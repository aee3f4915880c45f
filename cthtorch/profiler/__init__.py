"""torch.profiler: the autograd profiler plus schedules, steps and trace handlers.

Only CPU activity exists here: every op call (named aten::<op>) and every
record_function range (see cthtorch.autograd.profiler)."""
import enum
import os
import socket
import time

from cthtorch.autograd import profiler as _ap
from cthtorch.autograd.profiler import record_function, kineto_available  # noqa: F401
from cthtorch.autograd._profiler_config import ProfilerActivity, _ExperimentalConfig  # noqa: F401

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "profile", "record_function",
           "tensorboard_trace_handler", "supported_activities", "kineto_available"]


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Maps a step number to the action: skip_first, then cycles of wait/warmup/active (repeat times; 0 = forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        # skip_first_wait: the first cycle starts at warmup
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready callback writing <worker>.<time>.pt.trace.json[.gz] into dir_name."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or "%s_%d" % (socket.gethostname(), os.getpid())
        path = os.path.join(dir_name, "%s.%d.pt.trace.json" % (name, int(time.time() * 1000)))
        if use_gzip:
            import gzip
            prof.export_chrome_trace(path)
            with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                g.write(f.read())
            os.remove(path)
        else:
            prof.export_chrome_trace(path)
    return handler


class profile(_ap.profile):
    """torch.profiler.profile: records during the schedule's RECORD steps; on_trace_ready at each cycle's end."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, **kwargs):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_flops=with_flops)
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._recording = False

    def _sync(self):
        """Starts or stops recording to match the current step's action."""
        want = self.schedule(self.step_num) in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if want and not self._recording:
            self._start()
            self._recording = True
        elif not want and self._recording:
            self._finish_cycle()

    def _finish_cycle(self):
        self._stop()
        self._recording = False
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self):
        self._sync()

    def stop(self):
        if self._recording:
            self._finish_cycle()

    def step(self):
        prev = self.schedule(self.step_num)
        self.step_num += 1
        if prev == ProfilerAction.RECORD_AND_SAVE and self._recording:
            self._finish_cycle()
        self._sync()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *args):
        self.stop()
        return False

    def export_chrome_trace(self, path):
        super().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        with open(path, "w") as f:
            for ev in self.events() or []:
                f.write("%s %d\n" % (ev.name, int(getattr(ev, metric))))

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("export_memory_timeline: cthtorch's profiler records each op's net memory "
                                  "(profile_memory=True), not the allocation timeline this plots")

