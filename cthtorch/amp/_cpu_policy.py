"""torch.autocast('cpu')'s op lists for the ops cthtorch writes in Python (ops declared in C carry
`autocast_cpu:` in src/ATen/declarations and are cast at the dispatch point). A decorator per list:

* lower_on_cpu: torch's lower-precision list (matmul, conv*, prelu, ...): floating tensor arguments other
  than float64 go to the autocast dtype;
* fp32_on_cpu: torch's float32 list (the losses, cdist, ...): float16/bfloat16 arguments go to float32;
* outside_cpu_autocast: ops on neither list that cthtorch builds from listed ones (dot and mv are mm here):
  they run with CPU autocast off, so they keep their inputs' dtype as torch's do.

A leaf module (no cthtorch imports at load) so the op modules can import it early."""
import functools
import threading

class _State(threading.local):
    dtype = None   # the CPU autocast dtype while this thread's CPU autocast is on (a class default: a missing
    #                attribute would make every check raise and catch an AttributeError)


_local = _State()


def _cast(value, want):
    """value with its eligible tensors (per `want(tensor) -> dtype or None`) converted."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_cast(v, want) for v in value)
    dt = want(value) if hasattr(value, "is_floating_point") and hasattr(value, "dtype") else None
    return value if dt is None else value.to(dt)


def _policy(want_for):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            low = _local.dtype
            if low is None:
                return fn(*args, **kwargs)
            want = want_for(low)
            return fn(*[_cast(a, want) for a in args], **{k: _cast(v, want) for k, v in kwargs.items()})
        return wrapper
    return decorate


def _lower(low):
    import cthtorch
    eligible = (cthtorch.float32, cthtorch.float16, cthtorch.bfloat16)

    def want(t):
        return low if t.dtype in eligible and t.dtype != low and t.device.type == "cpu" else None
    return want


def _fp32(low):
    import cthtorch
    eligible = (cthtorch.float16, cthtorch.bfloat16)

    def want(t):
        return cthtorch.float32 if t.dtype in eligible and t.device.type == "cpu" else None
    return want


lower_on_cpu = _policy(_lower)
fp32_on_cpu = _policy(_fp32)


def lowered(*tensors):
    """tensors cast as lower_on_cpu casts its arguments (for an op that checks the state inline)."""
    want = _lower(_local.dtype)
    return tuple(_cast(t, want) for t in tensors)


def outside_cpu_autocast(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        low = _local.dtype
        if low is None:
            return fn(*args, **kwargs)
        from cthtorch import _C
        _C._set_autocast_cpu(False, low)
        _local.dtype = None
        try:
            return fn(*args, **kwargs)
        finally:
            _local.dtype = low
            _C._set_autocast_cpu(True, low)
    return wrapper
