"""Device modules for accelerators this build has none of (torch.xpu,
torch.mps, torch.mtia): queries answer False/0 as torch's CPU build does,
seeding is a no-op, and anything that needs the device raises."""
import sys
import types


def make(name, error_type, message):
    mod = types.ModuleType("cthtorch." + name)
    mod.__doc__ = "torch.%s on a machine without that accelerator." % name

    def unavailable(*args, **kwargs):
        raise error_type(message)

    mod.is_available = lambda: False
    mod.device_count = lambda: 0
    mod.is_initialized = lambda: False
    mod.manual_seed = mod.manual_seed_all = mod.seed = mod.seed_all = lambda *a, **k: None
    mod.empty_cache = lambda: None
    mod.synchronize = mod.current_device = mod.set_device = mod.get_device_name = unavailable
    mod.get_rng_state = mod.set_rng_state = mod.current_stream = unavailable
    mod.memory_allocated = mod.max_memory_allocated = mod.memory_reserved = lambda *a, **k: 0
    sys.modules["cthtorch." + name] = mod
    return mod


xpu = make("xpu", AssertionError, "Torch not compiled with XPU enabled")
mps = make("mps", RuntimeError, "Cannot execute deviceSynchronize() without MPS backend.")
mtia = make("mtia", AssertionError, "Torch not compiled with MTIA enabled")
