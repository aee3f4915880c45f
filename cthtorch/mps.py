"""torch.mps on a machine without Apple's Metal: is_available() is False and
everything that touches the device raises torch's RuntimeError."""
from ._absent_device import backend_missing, no_op, returning

is_available = returning(False)
device_count = returning(0)
manual_seed = no_op   # torch.manual_seed calls it, so without MPS it returns quietly

synchronize = backend_missing("MPS", "deviceSynchronize")
empty_cache = backend_missing("MPS", "emptyCache")
get_rng_state = set_rng_state = seed = backend_missing("MPS", "getDefaultGenerator")
current_allocated_memory = backend_missing("MPS", "getCurrentAllocatedMemory")
driver_allocated_memory = backend_missing("MPS", "getDriverAllocatedMemory")
recommended_max_memory = backend_missing("MPS", "getRecommendedMaxMemory")
set_per_process_memory_fraction = backend_missing("MPS", "setMemoryFraction")
Event = backend_missing("MPS", "acquireEvent")
