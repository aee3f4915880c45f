"""torch.random: the default generator's seeding and state, and fork_rng."""
import contextlib

import cthtorch as torch   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)

from cthtorch._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401
from cthtorch._C import default_generator  # noqa: F401


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Restores the CPU generator's state on exit (no accelerators here)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
