"""Shared pieces of the device modules for accelerators this build has none
of (cthtorch.mps, cthtorch.xpu, cthtorch.mtia): each module answers queries
as torch's CPU wheel does (False, 0, []) and raises torch's error, word for
word, for anything that needs the device."""


def raiser(error_type, message):
    """A function that raises error_type(message) whatever it is called with."""
    def unavailable(*args, **kwargs):
        raise error_type(message)
    return unavailable


def backend_missing(backend, call):
    """torch's C++ "Cannot execute <call>() without <backend> backend." RuntimeError."""
    return raiser(RuntimeError, "Cannot execute %s() without %s backend." % (call, backend))


def returning(value):
    """A function that ignores its arguments and returns a fresh copy of value."""
    def query(*args, **kwargs):
        return type(value)(value) if isinstance(value, (list, dict)) else value
    return query


def no_op(*args, **kwargs):
    return None


class device:
    """Context manager selecting a device of this kind: torch's CPU build
    accepts one and does nothing until the device is used."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
