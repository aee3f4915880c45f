"""torch._logging: the compiler's log switches. Nothing is compiled here, so
dynamo/inductor/graph-break logs have nothing to report: set_logs takes
torch's keywords (an unknown one is torch's TypeError) and changes nothing."""
import inspect

__all__ = ["set_logs"]

_SET_LOGS_NAMES = (
    "all", "dynamo", "aot", "autograd", "dynamic", "inductor", "distributed", "c10d", "ddp", "fsdp", "dtensor",
    "onnx", "bytecode", "aot_graphs", "aot_joint_graph", "ddp_graphs", "graph", "graph_code", "graph_code_verbose",
    "graph_breaks", "side_effects", "graph_sizes", "guards", "recompiles", "recompiles_verbose", "trace_source",
    "trace_call", "trace_bytecode", "output_code", "kernel_code", "schedule", "perf_hints", "pre_grad_graphs",
    "post_grad_graphs", "ir_pre_fusion", "ir_post_fusion", "onnx_diagnostics", "fusion", "overlap", "export",
    "modules", "cudagraphs", "sym_node", "compiled_autograd", "compiled_autograd_verbose",
    "cudagraph_static_inputs", "benchmarking", "autotuning", "incremental", "graph_region_expansion",
    "inductor_metrics", "hierarchical_compile", "compute_dependencies", "caching")


def set_logs(**kwargs):
    for name in kwargs:
        if name not in _SET_LOGS_NAMES:
            raise TypeError("set_logs() got an unexpected keyword argument '%s'" % name)


set_logs.__signature__ = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in _SET_LOGS_NAMES])
