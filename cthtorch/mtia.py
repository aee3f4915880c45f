"""torch.mtia on a machine without Meta's accelerator: queries answer as
torch's CPU wheel does and device calls raise its errors."""
from ._absent_device import backend_missing, device, no_op, raiser, returning  # noqa: F401

_not_compiled = raiser(AssertionError, "Torch not compiled with MTIA enabled. Ensure you have `import "
                                       "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and "
                                       "include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
                                       "dependency!")

is_available = is_initialized = returning(False)
is_bf16_supported = returning(True)
device_count = returning(0)
get_rng_state_all = returning([])
memory_stats = returning({})
memory_allocated = max_memory_allocated = returning(0)
manual_seed = manual_seed_all = seed = seed_all = reset_peak_memory_stats = record_memory_history = no_op

init = get_rng_state = initial_seed = _not_compiled
current_device = synchronize = current_stream = default_stream = backend_missing("MTIA", "getCurrentDevice")
get_device_capability = get_device_properties = set_rng_state = backend_missing("MTIA", "getCurrentDevice")
set_device = backend_missing("MTIA", "setCurrentDevice")
empty_cache = backend_missing("MTIA", "emptyCache")
snapshot = backend_missing("MTIA", "memorySnapshot")
