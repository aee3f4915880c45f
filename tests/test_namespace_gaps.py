"""Corners of the torch namespace that real programs touch: torch.version,
the absent-accelerator modules, legacy storage classes, torch-level
functional aliases, utils._pytree, utils.benchmark and GradScaler; each
checked against torch."""
import importlib
import subprocess
import sys

import numpy as np
import pytest

import cthtorch
import oracle

torch = oracle.require_torch()


def _outcome(fn):
    """('ok', value) or (exception type name, message) of calling fn."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - comparing whatever each raises
        return type(e).__name__, str(e)


# ---- torch.version ----

def test_version_module_matches_torch_fields():
    for name in ("cuda", "hip", "rocm", "xpu", "debug"):
        assert getattr(cthtorch.version, name) == getattr(torch.version, name)
    assert cthtorch.version.__version__ == cthtorch.__version__
    assert isinstance(cthtorch.version.git_version, str)
    assert sorted(cthtorch.version.__all__) == sorted(torch.version.__all__)


def test_version_prints_none_for_cuda():
    code = "import cthtorch as torch; print(torch.version.cuda, torch.version.hip)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "None None"


@pytest.mark.parametrize("a,b", [("2.13.0+cpu", "2.2"), ("2.13.0+cpu", "2.13.0"), ("2.0", "2.0.0"),
                                 ("2.0.dev1", "2.0a1"), ("2.0rc1", "2.0"), ("2.0.post1", "2.0"),
                                 ("2.0+cpu", "2.0+abc"), ("parrot", "2.0"), ("1.10.0", "1.9")])
def test_torch_version_compares_like_torch(a, b):
    from torch.torch_version import TorchVersion as Ref
    from cthtorch.torch_version import TorchVersion as Ours
    for op in ("__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"):
        assert getattr(Ours(a), op)(b) == getattr(Ref(a), op)(b), (a, b, op)
    assert (Ours(a) > (1, 2)) == (Ref(a) > (1, 2)) if a != "parrot" else True


def test_dunder_version_is_a_torch_version():
    v = cthtorch.__version__
    assert isinstance(v, str) and v.startswith("2.13.0")
    assert v >= "2.2" and v < (2, 14) and v > (1, 13)
    assert hash(v) == hash(str(v))


# ---- accelerators absent from this build ----

_DEVICE_CALLS = {
    "mps": ["is_available", "device_count", "synchronize", "empty_cache", "get_rng_state", "seed",
            "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
            ("manual_seed", 0), ("set_per_process_memory_fraction", 0.5)],
    "xpu": ["is_available", "device_count", "is_initialized", "synchronize", "empty_cache", "current_device",
            "get_device_name", "get_rng_state", "memory_allocated", "max_memory_allocated", "memory_reserved",
            "seed", "seed_all", "initial_seed", "get_device_properties", "is_bf16_supported", "init",
            "current_stream", "get_arch_list", "get_rng_state_all", "mem_get_info", "memory_stats", "Event",
            "Stream", ("manual_seed", 0), ("manual_seed_all", 0), ("set_device", 0)],
    "mtia": ["is_available", "device_count", "is_initialized", "synchronize", "empty_cache", "current_device",
             "init", "get_rng_state", "initial_seed", "memory_allocated", "is_bf16_supported", "snapshot",
             ("manual_seed", 0), ("set_device", 0)],
}


@pytest.mark.parametrize("dev", sorted(_DEVICE_CALLS))
def test_absent_device_module_answers_like_torch(dev):
    ours, ref = importlib.import_module("cthtorch." + dev), getattr(torch, dev)
    for call in _DEVICE_CALLS[dev]:
        name, args = (call, ()) if isinstance(call, str) else (call[0], call[1:])
        a = _outcome(lambda: getattr(ours, name)(*args))
        b = _outcome(lambda: getattr(ref, name)(*args))
        if a[0] == "ok" and b[0] == "ok":
            assert a[1] == b[1], (dev, name)
        else:
            assert a[0] == b[0] and b[1].startswith(a[1]), (dev, name, a, b)


def test_backends_mps_is_an_importable_module():
    mod = importlib.import_module("cthtorch.backends.mps")
    import torch.backends.mps as ref
    assert cthtorch.backends.mps is mod
    assert mod.is_available() is ref.is_available() is False
    assert mod.is_built() is ref.is_built() is False
    assert _outcome(mod.is_macos13_or_newer) == _outcome(ref.is_macos13_or_newer)


def test_import_device_modules_in_a_fresh_interpreter():
    code = ("import cthtorch.mps, cthtorch.xpu, cthtorch.backends.mps as b; import cthtorch as torch; "
            "print(torch.mps.is_available(), torch.xpu.device_count(), b.is_built())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False 0 False"
