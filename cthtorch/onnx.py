"""torch.onnx: exporting needs the JIT tracer's graph, which is not built yet."""


def export(model, args=(), f=None, *rest, **kwargs):
    raise NotImplementedError(
        "cthtorch.onnx.export: ONNX export is not implemented yet: it maps the graph that the JIT "
        "tracer (cthtorch.jit.trace) records to ONNX, and the tracer is not built yet")


def is_in_onnx_export():
    return False
