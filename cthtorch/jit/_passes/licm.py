"""Loop-invariant code motion for the executor's optimized copy of a
scripted graph: a view of values defined outside a prim::Loop (the LSTM
step's `w.t()`) is made once before the loop instead of every iteration.

Only views and shape ops move (they cost a call, not arithmetic), and only
out of loops whose bodies mutate nothing and call out to nothing: then the
view each iteration would have made is the same one. Torch's executor has
no such pass; a view made once reads the same values and records the same
autograd history. A hoisted `w.t()` read only by mm is also made contiguous
once (as freezing pre-transposes a linear's weight). One difference: a loop that runs zero times still makes
the view, so an invalid one (t() of a 3-d tensor) raises before the loop."""
from .dce import has_side_effects

__all__ = ["hoist_loop_invariant_views"]

_VIEWS = {"aten::t", "aten::transpose", "aten::permute", "aten::unsqueeze", "aten::squeeze", "aten::expand",
          "aten::view", "aten::reshape", "aten::numpy_T", "aten::alias"}


def _pure(block):
    return not any(has_side_effects(n) or n.kind().startswith("prim::Python") or not _pure_blocks(n)
                   for n in block.nodes())


def _pure_blocks(n):
    return all(_pure(b) for b in n.blocks())


def _defined_in(block, out):
    """The values block and the blocks nested in it define."""
    out.update(block.inputs())
    for n in block.nodes():
        out.update(n.outputs())
        for b in n.blocks():
            _defined_in(b, out)
    return out


def hoist_loop_invariant_views(block):
    """In place, innermost loops first; returns how many nodes moved."""
    moved = 0
    for n in list(block.nodes()):
        for b in n.blocks():
            moved += hoist_loop_invariant_views(b)
        if n.kind() != "prim::Loop" or not _pure(n.blocks()[0]):
            continue
        body = n.blocks()[0]
        inside = _defined_in(body, set())
        for m in list(body.nodes()):
            if m.kind() not in _VIEWS or m.blocks():
                continue
            ins = [v for v in m.inputs() if v in inside]
            if all(v.node().kind() == "prim::Constant" and v.node().owningBlock() is body for v in ins):
                for v in ins:   # a constant dominates the loop as well from before it
                    v.node().moveBefore(n)
                    inside.discard(v)
                m.moveBefore(n)
                inside.difference_update(m.outputs())
                moved += 1
                _pack_mm_operand(m)
    return moved


def _pack_mm_operand(t):
    """A hoisted w.t() that only feeds mm's second operand is made
    contiguous once: the GEMM reads a row-major matrix faster, and nobody
    sees the intermediate's strides."""
    uses = t.output().uses()
    if t.kind() != "aten::t" or not uses or any(u.user.kind() != "aten::mm" or u.offset != 1 for u in uses):
        return
    g = t.owningGraph()
    c = g.create("aten::contiguous", [t.output()])
    c.output().setType(t.output().type())
    c.insertAfter(t)
    for u in uses:
        u.user.replaceInput(1, c.output())
