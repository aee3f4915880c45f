"""torch.backends.cudnn: no cuDNN here (no GPU); the flags are settable so
programs that configure them run unchanged, and have no effect."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


class flags:
    """Context manager that sets the flags for its block and restores them."""

    def __init__(self, enabled=False, benchmark=False, deterministic=False, allow_tf32=True, **kwargs):
        self._new = dict(enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32)

    def __enter__(self):
        g = globals()
        self._old = {k: g[k] for k in self._new}
        g.update(self._new)

    def __exit__(self, *exc):
        globals().update(self._old)
        return False
