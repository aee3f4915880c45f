"""torch.xpu on a machine without an Intel GPU: queries answer as torch's CPU
wheel does (False, 0, [], memory counters 0, seeding a no-op) and anything
that needs the device raises its AssertionError."""
from ._absent_device import device, no_op, raiser, returning  # noqa: F401

_not_compiled = raiser(AssertionError, "Torch not compiled with XPU enabled")
_dummy = raiser(RuntimeError, "Tried to instantiate dummy base class")

is_available = is_initialized = is_bf16_supported = is_tf32_supported = returning(False)
device_count = returning(0)
get_arch_list = get_rng_state_all = memory_snapshot = returning([])
get_gencode_flags = returning("")
memory_stats = memory_stats_as_nested_dict = returning({})
memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = returning(0)
manual_seed = manual_seed_all = seed = seed_all = set_rng_state = empty_cache = no_op
# torch 2.13 raises AttributeError here (its _C lacks the binding); resetting nothing is the intent
reset_peak_memory_stats = reset_accumulated_memory_stats = no_op

init = current_device = set_device = synchronize = current_stream = _not_compiled
get_device_name = get_device_properties = get_device_capability = _not_compiled
get_rng_state = initial_seed = mem_get_info = _not_compiled
get_per_process_memory_fraction = set_per_process_memory_fraction = _not_compiled


class Event:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class Stream:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Stream")
