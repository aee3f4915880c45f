"""torch.onnx: export a model to ONNX.

This is the classic TorchScript-based exporter (torch's `dynamo=False`
path): the model is traced by cthtorch.jit.trace, each aten op of the
inlined graph is mapped to ONNX nodes by its symbolic function (opsets 13 to
20; register_custom_op_symbolic adds more), parameters become initializers,
and the ModelProto is written by cthtorch/onnx/_proto.py without the onnx
package. torch 2.9+ defaults to dynamo=True (the torch.export-based
exporter), which cthtorch does not have: here the default is the TorchScript
path, and dynamo=True raises NotImplementedError."""
import enum
import re

from . import errors
from .errors import OnnxExporterError

__all__ = ["export", "is_in_onnx_export", "register_custom_op_symbolic", "unregister_custom_op_symbolic",
           "select_model_mode_for_export", "TrainingMode", "OperatorExportTypes", "OnnxExporterError", "errors",
           "producer_name", "producer_version"]

producer_name = "pytorch"


def __getattr__(name):
    if name == "producer_version":
        import cthtorch
        return cthtorch.__version__.split("+")[0]
    if name in ("symbolic_helper",):
        import importlib
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


class TrainingMode(enum.Enum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.Enum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=False, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None, training=TrainingMode.EVAL,
           operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True):
    """Exports model (an nn.Module or a function) traced on args to the ONNX
    file f (a path or a binary file object), as torch.onnx.export(...,
    dynamo=False) does. Returns None."""
    if dynamo:
        raise NotImplementedError(
            "cthtorch.onnx.export(dynamo=True): the torch.export-based exporter is not implemented; cthtorch "
            "exports through the TorchScript tracer (torch's dynamo=False path), which is the default here")
    if dynamic_shapes is not None:
        raise NotImplementedError("cthtorch.onnx.export: dynamic_shapes belongs to the dynamo exporter; use "
                                  "dynamic_axes")
    if kwargs:
        raise NotImplementedError("cthtorch.onnx.export: keyword inputs are not supported yet; pass them in args")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise NotImplementedError("cthtorch.onnx.export: only operator_export_type=OperatorExportTypes.ONNX is "
                                  "supported")
    if export_modules_as_functions:
        raise NotImplementedError("cthtorch.onnx.export: export_modules_as_functions is not supported")
    from . import _export
    _export.export(model, args, f, export_params, verbose, training, list(input_names or []) or None,
                   list(output_names or []) or None, opset_version, do_constant_folding, dynamic_axes,
                   keep_initializers_as_inputs, custom_opsets)
    return None


def is_in_onnx_export():
    from . import _export
    return _export._in_export[0]


def select_model_mode_for_export(model, mode):
    from . import _export
    return _export.select_model_mode_for_export(model, mode)


def _verify_custom_op_name(symbolic_name):
    if not re.match(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$", symbolic_name):
        raise OnnxExporterError(
            "Failed to register operator %s. The symbolic name must match the format domain::name, and should "
            "start with a letter and contain only alphanumeric characters" % symbolic_name)
    ns = symbolic_name.split("::", 1)[0]
    if ns == "onnx":
        raise ValueError("Failed to register operator %s. %s domain cannot be modified." % (symbolic_name, ns))


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Registers symbolic_fn(g, *inputs) for the op "domain::name" from
    opset_version on."""
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    _verify_custom_op_name(symbolic_name)
    from . import _symbolics
    _symbolics.register(symbolic_name, symbolic_fn, opset_version)


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    _verify_custom_op_name(symbolic_name)
    from . import _symbolics
    _symbolics.unregister(symbolic_name, opset_version)
