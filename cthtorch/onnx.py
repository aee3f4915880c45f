"""torch.onnx: exporting needs a tracer cthtorch does not have."""


def export(*args, **kwargs):
    raise NotImplementedError("cthtorch.onnx.export: ONNX export is not implemented in cthtorch")


def is_in_onnx_export():
    return False
