"""Installs the JIT's classes and functions under cthtorch._C (torch._C.Graph,
torch._C.TensorType, torch._C._jit_get_schemas_for_operator, ...), where
PyTorch programs reach them. Imported by cthtorch/__init__.py; cheap (the
schema registry and the passes load on first use)."""
from cthtorch import _C

from . import _ir


def _jit_get_schemas_for_operator(name):
    from ._schema import get_schemas
    return get_schemas(name)


def _jit_get_all_schemas():
    from ._schema import all_schemas
    return all_schemas()


def parse_schema(text, allow_typevars=True):
    from ._schema import parse_schema as p
    return p(text)


def _jit_get_operation(name):
    """(callable, overload names) for `ns::name`, as torch._C returns."""
    from ._interpreter import op_callable
    from ._schema import get_schemas
    return op_callable(name), [s.overload_name for s in get_schemas(name)]


def parse_ir(text, parse_tensor_constants=False):
    from ._ir_parser import parse_ir as p
    return p(text, parse_tensor_constants)


def _jit_pass_dce(graph):
    from ._passes import eliminate_dead_code
    eliminate_dead_code(graph)


def _jit_pass_constant_propagation(graph):
    from ._passes import constant_propagation
    constant_propagation(graph)


def _jit_pass_cse(graph):
    from ._passes import eliminate_common_subexpression
    return eliminate_common_subexpression(graph)


def _jit_pass_inline(graph):
    from ._passes.inline import inline_in_place
    inline_in_place(graph)


def _jit_pass_lint(graph):
    graph.lint()


def _get_tracing_state():
    """The TracingState of the trace this thread runs, else None: torchvision's _is_tracing() and DETR's
    nested_tensor_from_tensor_list branch on it."""
    from . import _trace
    return _trace._state if _trace.is_tracing() else None


def _is_tracing():
    from ._trace import is_tracing
    return is_tracing()


def _install():
    names = {n: getattr(_ir, n) for n in ("Graph", "Block", "Node", "Value", "Use", "JitType", "TensorType",
                                           "IntType", "FloatType", "BoolType", "StringType", "NoneType",
                                           "DeviceObjType", "NumberType", "ListType", "TupleType", "OptionalType",
                                           "DictType", "ClassType", "AnyType", "ComplexType", "GeneratorType",
                                           "InterfaceType", "FunctionType")}
    names["DeviceType"] = _ir.DeviceObjType   # the name the JIT team's plan uses
    names["Type"] = _ir.JitType
    names.update(_jit_get_schemas_for_operator=_jit_get_schemas_for_operator,
                 _jit_get_all_schemas=_jit_get_all_schemas, parse_schema=parse_schema,
                 _jit_get_operation=_jit_get_operation, parse_ir=parse_ir, _jit_pass_dce=_jit_pass_dce,
                 _jit_pass_constant_propagation=_jit_pass_constant_propagation, _jit_pass_cse=_jit_pass_cse,
                 _jit_pass_inline=_jit_pass_inline, _jit_pass_lint=_jit_pass_lint,
                 _get_tracing_state=_get_tracing_state, _is_tracing=_is_tracing)
    for k, v in names.items():
        setattr(_C, k, v)


_install()
