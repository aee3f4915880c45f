"""Observers of the dispatch point (src/python/Dispatch.h).

Every op call, a declared op's VT function or a registered composite's
`_C._Op` entry, is reported to one C-level observer. This module keeps the
list of Python observers (the profiler, the JIT tracer) and installs a
fan-out object in C only while the list is non-empty, so an unobserved call
costs one pointer test.

An observer has two methods:
    enter(name) -> token                  before the op runs ("aten::add")
    exit(token, name, schema, args, kwargs, result)
        after it ran; schema is the declaration ("add.Tensor(Tensor self, ...)")
        for declared ops and None for composites; args are the inputs in
        declaration order (composites: as called); result is None if it raised.
and may have a third:
    int_from_tensor(t)                    the argument parser turned the 0-dim
                                          tensor t into an int argument of the
                                          call it is parsing (before its enter)
Ops an observer runs itself are not observed.
"""
import threading

from cthtorch import _C

_lock = threading.Lock()
_observers = []


class _FanOut:
    __slots__ = ("obs",)

    def __init__(self, obs):
        self.obs = obs

    def enter(self, name):
        return [o.enter(name) for o in self.obs]

    def exit(self, tokens, name, schema, args, kwargs, result):
        for o, t in zip(self.obs, tokens):
            o.exit(t, name, schema, args, kwargs, result)

    def int_from_tensor(self, t):
        for o in self.obs:
            f = getattr(o, "int_from_tensor", None)
            if f is not None:
                f(t)


def _install():
    obs = tuple(_observers)
    if not obs:
        _C._set_dispatch_observer(None)
    elif len(obs) == 1:
        _C._set_dispatch_observer(obs[0])
    else:
        _C._set_dispatch_observer(_FanOut(obs))


def add_observer(obs):
    with _lock:
        _C._set_dispatch_observer(obs)   # refuses an object without enter/exit (TypeError)
        _observers.append(obs)
        _install()


def remove_observer(obs):
    with _lock:
        for i, o in enumerate(_observers):
            if o is obs:
                del _observers[i]
                break
        _install()


class observing:
    """Context manager: `obs` sees every op call inside the block."""

    def __init__(self, obs):
        self.obs = obs

    def __enter__(self):
        add_observer(self.obs)
        return self.obs

    def __exit__(self, *exc):
        remove_observer(self.obs)
        return False
