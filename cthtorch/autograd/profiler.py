"""torch.autograd.profiler: profile and record_function.

A profile observes the dispatch point (cthtorch/_ops/dispatch.py): every op
call, C op or registered composite, becomes an event named as PyTorch names it
(aten::add, aten::linear), nested under the op or record_function range that
was open when it ran, with wall-clock CPU times and, with record_shapes=True,
its input shapes. With profile_memory=True an event also carries the net bytes
the CPU allocator handed out while it ran (allocations minus frees, children
included), as torch's memory records add up per op. Tables, averages and
Chrome traces are built from those events."""
import functools
import threading
import time

import sys

from cthtorch import _C
from cthtorch.autograd import _profiler_config

# torch._C._profiler: the extension's profiler submodule is these Python types here
_C._profiler = _profiler_config
sys.modules.setdefault("cthtorch._C._profiler", _profiler_config)

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent", "kineto_available"]

_state = threading.local()


def _active():
    return getattr(_state, "profilers", [])


def _now_us():
    return time.perf_counter_ns() / 1000.0


def kineto_available():
    return False


class FunctionEvent:
    """One closed range: times in microseconds; children are the ranges directly inside it."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None):
        self.id, self.name, self.thread = id, name, thread
        self.time_range_start, self.time_range_end = start_us, end_us
        self.input_shapes = input_shapes
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.cpu_memory_usage = 0
        self.flops = 0

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    def __repr__(self):
        # torch's fields; there is no device here, which torch names "None"
        return ("<FunctionEvent id=%d name=%s overload_name= device_type=DeviceType.CPU node_id=-1 cpu_time=%s "
                "start_us=%s end_us=%s cpu_children=%s None_time=%s name=%s thread=%s input_shapes=%s "
                "cpu_memory_usage=%d None_memory_usage=0 is_async=False is_remote=False seq_nr=-1 is_legacy=False>"
                % (self.id, self.name, _fmt_us(self.cpu_time_total), self.time_range_start, self.time_range_end,
                   [c.id for c in self.cpu_children], _fmt_us(0.0), self.name, self.thread,
                   self.input_shapes if self.input_shapes is not None else [], self.cpu_memory_usage))


class FunctionEventAvg:
    """Totals of every event with one key (key_averages)."""

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.cpu_parent = None
        self.flops = None
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.device_time_total = self.self_device_time_total = self.cuda_time_total = self.self_cuda_time_total = 0.0

    def add(self, ev):
        if not self.count:
            # the first event's place in the tree, as torch's (top_level_events_only reads cpu_parent)
            self.input_shapes = ev.input_shapes
            self.cpu_parent = getattr(ev, "cpu_parent", None)
        self.count += ev.count
        self.flops = ev.flops if self.flops is None else self.flops + (ev.flops or 0)
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return ("<FunctionEventAvg key=%s self_cpu_time=%s cpu_time=%s  self_cuda_time=%s cuda_time=%s input_shapes=%s "
                "cpu_memory_usage=%d cuda_memory_usage=0>"
                % (self.key, _fmt_us(self.self_cpu_time_total), _fmt_us(self.cpu_time), _fmt_us(0.0), _fmt_us(0.0),
                   self.input_shapes if self.input_shapes is not None else [], self.cpu_memory_usage))


def _fmt_us(us):
    if us >= 1e6:
        return "%.3fs" % (us / 1e6)
    if us >= 1e3:
        return "%.3fms" % (us / 1e3)
    return "%.3fus" % us


def _flops(name, args, kwargs):
    """torch's estimate of an op's floating-point operations (profile(with_flops=True)), for the ops it counts:
    2*M*K*N for the matrix products, 2 * output positions * weight size for conv2d, the first input's size for
    mul/add; 0 for every other op."""
    from cthtorch import Tensor
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    if name in ("aten::mm", "aten::addmm") and len(shapes) >= 2:
        a, b = shapes[-2:]
        if len(a) == 2 and len(b) == 2:
            return 2 * a[0] * a[1] * b[1]
    elif name in ("aten::bmm", "aten::baddbmm") and len(shapes) >= 2:
        a, b = shapes[-2:]
        if len(a) == 3 and len(b) == 3:
            return 2 * a[0] * a[1] * a[2] * b[2]
    elif name == "aten::conv2d" and len(shapes) >= 2 and len(shapes[0]) == 4 and len(shapes[1]) == 4:
        (n, _, h, w), weight = shapes[0], shapes[1]
        given = [args[i] if len(args) > i else (kwargs or {}).get(k, d)
                 for i, k, d in ((3, "stride", 1), (4, "padding", 0), (5, "dilation", 1))]
        if isinstance(given[1], str):   # padding='same' / 'valid'
            return 0
        stride, padding, dilation = ([int(v) for v in (a if isinstance(a, (list, tuple)) else (a, a))]
                                     for a in given)
        out_h = (h + 2 * padding[0] - dilation[0] * (weight[2] - 1) - 1) // stride[0] + 1
        out_w = (w + 2 * padding[1] - dilation[1] * (weight[3] - 1) - 1) // stride[1] + 1
        return 2 * n * out_h * out_w * weight[0] * weight[1] * weight[2] * weight[3]
    elif name in ("aten::mul", "aten::add") and shapes:
        size = 1
        for d in shapes[0]:
            size *= d
        return size
    return 0


def _flops_header(events):
    """torch's auto-scaled flops column: the unit that suits the smallest count, or None when nothing counted"""
    import math
    counted = [e.flops for e in events if e.flops and e.flops > 0]
    if not counted:
        return None, None
    units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    level = int(max(0, min(math.log10(min(counted)) / 3, float(len(units) - 1))))
    return 10 ** (level * -3.0), "Total " + units[level]


def _fmt_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return "%.2f %s" % (nbytes / size, unit)
    return "%d B" % nbytes


class EventList(list):
    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        avgs = {}
        for ev in self:
            key = (ev.key, str(ev.input_shapes)) if group_by_input_shapes else ev.key
            avgs.setdefault(key, FunctionEventAvg(ev.key)).add(ev)
        out = EventList(avgs.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        if not group_by_input_shapes:
            # torch blanks the shapes of averages that were not grouped by them (no Input Shapes column)
            for avg in out:
                avg.input_shapes = ""
        return out

    def total_average(self):
        total = FunctionEventAvg("Total")
        for ev in self:
            total.add(ev)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        if not self:
            return ""   # torch's table of no events
        rows = list(self)
        if top_level_events_only:
            rows = [r for r in rows if getattr(r, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda r: getattr(r, sort_by.replace("cuda", "device"), 0), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total or 1.0
        memory = self._profile_memory
        shapes = any(r.input_shapes for r in self)
        heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        heads += ["CPU Mem", "Self CPU Mem"] * memory + ["# of Calls"] + ["Input Shapes"] * shapes
        flops_scale, flops_head = _flops_header(self) if self._with_flops else (None, None)
        heads += [flops_head] * (flops_head is not None)
        # torch's layout: the name column is 4 wider than the longest key (at most max_name_column_width; a key
        # that does not fit ends in '...'), the others 12 wide; every cell is right-aligned and followed by 2 spaces
        name_w = min(max([len(r.key) for r in self] or [0]) + 4, max_name_column_width)

        def name(key):
            return key[:name_w - 3] + "..." if len(key) >= name_w - 3 else key
        # torch's shapes column: 4 wider than the longest shapes text, at most max_shapes_column_width
        shapes_w = min(max(len(str(r.input_shapes)) for r in self) + 4, max_shapes_column_width) if shapes else 0

        def row(r):
            cells = [name(r.key), "%.2f%%" % (100.0 * r.self_cpu_time_total / total_self),
                     _fmt_us(r.self_cpu_time_total), "%.2f%%" % (100.0 * r.cpu_time_total / total_self),
                     _fmt_us(r.cpu_time_total), _fmt_us(r.cpu_time_total / max(r.count, 1))]
            if memory:
                cells += [_fmt_memory(r.cpu_memory_usage), _fmt_memory(r.self_cpu_memory_usage)]
            cells += [str(r.count)] + [str(r.input_shapes)[:shapes_w]] * shapes
            if flops_head is not None:
                cells.append("--" if not r.flops or r.flops <= 0 else "%8.3f" % (r.flops * flops_scale))
            return cells
        body = [row(r) for r in rows]
        widths = [name_w] + [12] * (len(heads) - 1 - shapes - (flops_head is not None)) + [shapes_w] * shapes
        widths += [12] * (flops_head is not None)

        def fmt(cells):
            return "".join(c.rjust(w) + "  " for c, w in zip(cells, widths))
        line = fmt(["-" * w for w in widths])
        banner = "=" * (sum(widths) + 2 * len(widths) - 2)
        out = ([banner, header] if header is not None else [])
        out += [banner, "This report only display top-level ops statistics"] if top_level_events_only else []
        out += [line, fmt(heads), line] + [fmt(b) for b in body] + [line]
        out.append("Self CPU time total: %s" % _fmt_us(self.self_cpu_time_total))
        return "\n".join(out) + "\n"

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        events = [{"name": ev.name, "ph": "X", "ts": ev.time_range_start, "dur": ev.cpu_time_total,
                   "tid": ev.thread, "pid": "CPU functions", "args": {}} for ev in self]
        import json
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)


def _open_stack():
    stack = getattr(_state, "open", None)
    if stack is None:
        stack = _state.open = []
    return stack


def _shapes(args):
    from cthtorch import Tensor
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(list(a.shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
            out.append([list(x.shape) for x in a])
        else:
            out.append([])
    return out


class _OpObserver:
    """What a profile hands the dispatch point: one event per op call."""

    __slots__ = ("prof",)

    def __init__(self, prof):
        self.prof = prof

    def enter(self, name):
        stack = _open_stack()
        now = _now_us()
        ev = FunctionEvent(next(record_function._ids), name, threading.get_ident(), now, now)
        ev.cpu_parent = stack[-1] if stack else None
        if self.prof.profile_memory:
            ev.cpu_memory_usage = _C._live_bytes()
        stack.append(ev)
        return ev

    def exit(self, ev, name, schema, args, kwargs, result):
        ev.time_range_end = _now_us()
        if self.prof.profile_memory:
            ev.cpu_memory_usage = _C._live_bytes() - ev.cpu_memory_usage
        stack = _open_stack()
        if stack and stack[-1] is ev:
            stack.pop()
        elif ev in stack:
            stack.remove(ev)
        if self.prof.record_shapes:
            ev.input_shapes = _shapes(args)
        if self.prof.with_flops:
            ev.flops = _flops(name, args, kwargs)
        if ev.cpu_parent is not None:
            ev.cpu_parent.cpu_children.append(ev)
        self.prof._events.append(ev)


class profile:
    """Collects an event for every op call and record_function range while it is active (CPU wall-clock times)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None, **kwargs):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.function_events = None
        self._events = []
        self._entered = False

    def _start(self):
        if self._entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._entered = True
        self._events = []
        self._t0 = _now_us()
        if self.enabled:
            _state.profilers = _active() + [self]
            from cthtorch._ops import dispatch
            self._observer = _OpObserver(self)
            dispatch.add_observer(self._observer)

    def _stop(self):
        if self.enabled:
            from cthtorch._ops import dispatch
            dispatch.remove_observer(self._observer)
            _state.profilers = [p for p in _active() if p is not self]
        self._entered = False
        self.function_events = EventList(sorted(self._events, key=lambda e: e.time_range_start),
                                         profile_memory=self.profile_memory, with_flops=self.with_flops)

    def __enter__(self):
        if not self.enabled:
            return None   # torch's: `with profile(enabled=False) as prof` binds None
        self._start()
        return self

    def __exit__(self, *args):
        if self.enabled:
            self._stop()
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def events(self):
        self._check_finish()
        return self.function_events

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path):
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    def __str__(self):
        self._check_finish()
        return str(self.function_events)


class record_function:
    """Names a range of code: timed into every active profile (context manager or decorator)."""

    _ids = iter(range(1 << 62))

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._start_us = None

    def __enter__(self):
        profs = _active()
        if profs:
            self._start_us = _now_us()
            self._profs = list(profs)
            stack = getattr(_state, "open", None)
            if stack is None:
                stack = _state.open = []
            self._event = FunctionEvent(next(record_function._ids), self.name, threading.get_ident(),
                                        self._start_us, self._start_us)
            self._event.cpu_parent = stack[-1] if stack else None
            self._memory = any(p.profile_memory for p in profs)
            if self._memory:
                self._event.cpu_memory_usage = _C._live_bytes()
            stack.append(self._event)
        return self

    def __exit__(self, *args):
        if self._start_us is None:
            return False
        ev = self._event
        ev.time_range_end = _now_us()
        if self._memory:
            ev.cpu_memory_usage = _C._live_bytes() - ev.cpu_memory_usage
        _state.open.remove(ev)
        if ev.cpu_parent is not None:
            ev.cpu_parent.cpu_children.append(ev)
        for p in self._profs:
            p._events.append(ev)
        self._start_us = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with record_function(self.name, self.args):
                return fn(*a, **kw)
        return wrapper


class emit_nvtx:
    """NVTX ranges need CUDA; without it this context manager does nothing."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


class emit_itt(emit_nvtx):
    """ITT ranges need Intel VTune; without it this context manager does nothing."""


def load_nvprof(path):
    raise NotImplementedError("load_nvprof: nvprof traces need CUDA, which cthtorch does not have here")

