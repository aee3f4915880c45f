"""Dead-code elimination: nodes whose outputs nobody uses and that have no
side effects go (torch._C._jit_pass_dce)."""
__all__ = ["eliminate_dead_code", "has_side_effects"]

_SIDE_EFFECTS = {"prim::RaiseException", "prim::SetAttr", "prim::CallMethod", "prim::CallFunction", "prim::PythonOp",
                 "prim::Print",
                 "aten::warn", "prim::Loop", "prim::If", "aten::append", "aten::_set_item", "aten::backward",
                 "prim::profile", "aten::manual_seed"}


# list and dict methods that mutate their container and return a value (the others return nothing)
_CONTAINER_WRITERS = {"aten::pop", "aten::setdefault", "aten::popitem"}


def has_side_effects(n):
    """Mutates an input, raises, prints or calls out (torch's Node::hasSideEffects
    plus writers of their inputs: in-place ops such as copy_ and add_, and
    list/dict methods such as insert, extend or pop). A node with no outputs
    exists only for its effect."""
    k = n.kind()
    if k in _SIDE_EFFECTS or k in _CONTAINER_WRITERS or not n.outputs():
        return True
    ns, _, name = k.partition("::")
    if ns == "aten" and name.endswith("_") and not name.endswith("__"):
        return True
    s = n.maybeSchema() if ns == "aten" else None
    return s is not None and s.is_mutable


def _block_has_effects(b):
    return any(has_side_effects(n) or any(_block_has_effects(sb) for sb in n.blocks()) for n in b.nodes())


def _dce_block(block):
    changed = False
    for n in block.nodes().reverse():
        for b in n.blocks():
            changed |= _dce_block(b)
        if n.hasUses():
            continue
        if n.kind() in ("prim::If", "prim::Loop"):
            if any(_block_has_effects(b) for b in n.blocks()):
                continue
        elif has_side_effects(n):
            continue
        n.destroy()
        changed = True
    return changed


def eliminate_dead_code(graph):
    """In place; returns whether anything was removed."""
    changed = False
    while _dce_block(graph.block()):
        changed = True
    return changed
