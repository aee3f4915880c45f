"""ONNX exporter exceptions (torch.onnx.errors), with torch's texts."""

__all__ = ["OnnxExporterWarning", "OnnxExporterError", "SymbolicValueError", "UnsupportedOperatorError",
           "CheckerError"]


class OnnxExporterWarning(UserWarning):
    """Warnings in the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter. This is the base class for all exporter errors."""


class CheckerError(OnnxExporterError):
    """Raised when the ONNX checker detects an invalid model."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator is unsupported by the exporter."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = ("Exporting the operator '%s' to ONNX opset version %d is not supported. Support for this "
                   "operator was added in version %d, try exporting with this version" % (name, version,
                                                                                          supported_version))
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = "Exporting the operator '%s' to ONNX opset version %d is not supported" % (name, version)
        else:
            msg = ("ONNX export failed on an operator with unrecognized namespace %s. If you are trying to export "
                   "a custom operator, make sure you registered it with the right domain and version." % name)
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """Errors around TorchScript values and nodes."""

    def __init__(self, msg, value):
        message = ("%s  [Caused by the value '%s' (type '%s') in the TorchScript graph. The containing node has "
                   "kind '%s'.] " % (msg, value, value.type(), value.node().kind()))
        loc = value.node().sourceRange()
        if loc:
            message += "\n    (node defined in %s)" % (loc,)
        super().__init__(message)
