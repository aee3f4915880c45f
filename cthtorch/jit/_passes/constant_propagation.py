"""Constant propagation: a pure node whose inputs are all constants is run
once at compile time and replaced by its result (torch._C._jit_pass_constant_propagation);
a prim::If on a constant condition keeps only the branch taken."""
import cthtorch

from .. import _ir
from .dce import eliminate_dead_code, has_side_effects

__all__ = ["constant_propagation"]

# never folded: they read state, make fresh objects callers may mutate, or call out
_SKIP = {"prim::Constant", "prim::GetAttr", "prim::SetAttr", "prim::CallMethod", "prim::CallFunction",
         "prim::Param", "prim::Return", "prim::Uninitialized", "prim::RaiseException", "prim::Loop",
         "prim::If", "prim::FusionGroup", "prim::TupleUnpack", "prim::ListUnpack", "aten::append",
         "prim::DictConstruct", "aten::empty", "aten::empty_like", "aten::empty.memory_format"}


def _foldable_value(v):
    """A result that can live in a prim::Constant."""
    if v is None or isinstance(v, (bool, int, float, str, cthtorch.device)):
        return True
    if isinstance(v, cthtorch.Tensor):
        return not v.requires_grad
    if isinstance(v, list):
        return all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in v) or \
            all(isinstance(e, str) for e in v) or all(isinstance(e, cthtorch.Tensor) for e in v)
    if isinstance(v, tuple):
        return all(_foldable_value(e) for e in v)
    return False


def _fold_node(n):
    from .._interpreter import run_node
    with cthtorch.no_grad():
        results = run_node(n, [v.node()._constant_value() for v in n.inputs()])
    if not all(_foldable_value(r) for r in results):
        return False
    g = n.owningGraph()
    with g.insert_point_guard(n):
        for o, r in zip(n.outputs(), results):
            c = g.insertConstant(r)
            if isinstance(r, cthtorch.Tensor):
                c.setType(_ir.TensorType.create_from_tensor(r))
            elif isinstance(o.type(), (_ir.ListType, _ir.TupleType, _ir.OptionalType)) or \
                    isinstance(o.type(), _ir.IntType) and isinstance(r, int):
                c.setType(o.type()) if not isinstance(o.type(), _ir.OptionalType) else None
            o.replaceAllUsesWith(c)
    n.destroy()
    return True


def _inline_if(n, taken):
    """Moves the taken block's nodes before n and rewires n's outputs."""
    b = n.blocks()[taken]
    for inner in list(b.nodes()):
        inner.moveBefore(n)
    for o, v in zip(n.outputs(), b.outputs()):
        o.replaceAllUsesWith(v)
    for blk in n.blocks():
        blk.returnNode().removeAllInputs()
    n.destroy()


# the types torch's ConstantPropagationImmutableTypes folds (no tensor, list or object a caller could mutate)
_IMMUTABLE = (_ir.IntType, _ir.FloatType, _ir.BoolType, _ir.StringType, _ir.NoneType, _ir.DeviceObjType,
              _ir.NumberType)


def _immutable(v):
    return isinstance(v.type(), _IMMUTABLE)


def _propagate_block(block, immutable_only):
    changed = False
    for n in list(block.nodes()):
        k = n.kind()
        if k == "prim::If" and n.inputs()[0].node().kind() == "prim::Constant":
            _inline_if(n, 0 if n.inputs()[0].node()._constant_value() else 1)
            changed = True
            continue
        for b in n.blocks():
            changed |= _propagate_block(b, immutable_only)
        if k in _SKIP or n.blocks() or not n.outputs() or not n.inputs() or has_side_effects(n) or \
                n.isNondeterministic():   # no inputs: it reads state (is_grad_enabled), nothing to fold
            continue
        if not all(v.node().kind() == "prim::Constant" for v in n.inputs()):
            continue
        if immutable_only and not all(_immutable(v) for v in list(n.inputs()) + list(n.outputs())):
            continue
        try:
            changed |= _fold_node(n)
        except Exception:   # an op that fails on these constants fails at run time too, with its own error
            continue
    return changed


def constant_propagation(graph, immutable_only=False):
    """In place; returns whether the graph changed. immutable_only folds
    only nodes over numbers, bools, strings, None and devices (torch's
    ConstantPropagationImmutableTypes, which its compiler runs on every
    graph it makes)."""
    changed = False
    while _propagate_block(graph.block(), immutable_only):
        changed = True
    eliminate_dead_code(graph)
    return changed
