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
                 _jit_get_operation=_jit_get_operation)
    for k, v in names.items():
        setattr(_C, k, v)


_install()
