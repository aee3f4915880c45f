"""torch._inductor.config: the knobs programs set most often, with torch's defaults (see
cthtorch.utils._config_module: unknown names are refused as torch refuses them; nothing reads them)."""
import sys as _sys

from ..utils._config_module import install_config_module

_DEFAULTS = {
    "coordinate_descent_tuning": False, "coordinate_descent_check_all_directions": False, "max_autotune": False,
    "max_autotune_gemm": False, "max_autotune_pointwise": False, "freezing": False, "fx_graph_cache": True,
    "epilogue_fusion": True, "aggressive_fusion": False, "shape_padding": True, "conv_1x1_as_mm": False,
    "force_fuse_int_mm_with_mul": False, "use_mixed_mm": True, "benchmark_kernel": False, "debug": False,
    "cpp_wrapper": False, "unroll_reductions_threshold": 8, "split_reductions": True, "fallback_random": False,
    "triton": {"cudagraphs": False, "cudagraph_trees": True, "unique_kernel_names": True},
    "cpp": {"threads": -1, "simdlen": None},
}

install_config_module(_sys.modules[__name__], "torch._inductor.config", _DEFAULTS)
