"""No GPU here: CUDA degrades cleanly (is_available False, clear errors)."""
import os

import pytest

import cthtorch as ct


def test_cuda_unavailable_and_errors():
    assert ct.cuda.device_count() == 0
    assert ct.cuda.is_available() is False
    for make in (lambda: ct.zeros(2, device="cuda"), lambda: ct.ones(2).cuda(), lambda: ct.ones(2).to("cuda:0"),
                 lambda: ct.tensor([1.0], device=ct.device("cuda"))):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            make()


def test_thc_library_built_where_nvcc_exists():
    import shutil
    lib = os.path.join(os.path.dirname(ct.__file__), "lib", "libTHC.so")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed: THC is not built")
    assert os.path.exists(lib) or not any(os.path.exists(p) for p in ["/usr/local/cuda/lib64/libcudart.so"])


def test_cuda_module_queries_and_device_calls():
    # queries answer as torch does before CUDA is initialised
    assert ct.cuda.memory_allocated() == 0 and ct.cuda.max_memory_allocated() == 0
    assert ct.cuda.is_bf16_supported() is False
    ct.cuda.manual_seed_all(1)
    ct.cuda.empty_cache()
    ct.cuda.reset_peak_memory_stats()
    with ct.cuda.device(-1):
        pass
    # anything that needs a device raises the clear error
    for call in (ct.cuda.synchronize, ct.cuda.current_device, ct.cuda.get_device_name, ct.cuda.get_rng_state,
                 ct.cuda.Event, lambda: ct.cuda.set_device(0)):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            call()
    with pytest.raises(TypeError, match="torch.cuda.FloatTensor not available"):
        ct.cuda.FloatTensor(2)


def test_other_accelerator_modules_absent_as_in_torch_cpu_build():
    for name in ("xpu", "mps", "mtia"):
        mod = getattr(ct, name)
        assert mod.is_available() is False and mod.device_count() == 0
        mod.manual_seed(0)
        with pytest.raises((RuntimeError, AssertionError)):
            mod.synchronize()
    import importlib
    assert importlib.import_module("cthtorch.xpu") is ct.xpu
