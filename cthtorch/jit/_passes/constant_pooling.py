"""Constant pooling: equal constants become one node, and every constant moves to the top of the graph
(torch._C._jit_pass_constant_pooling, which torch's compiler runs on each graph it makes, so its .graph
lists the constants first). Constants keep the order in which the graph first uses them."""
import cthtorch

__all__ = ["constant_pooling"]


def _key(n):
    """What makes two constants the same: their type and value (a tensor only itself)."""
    v = n._constant_value()
    if isinstance(v, cthtorch.Tensor):
        v = ("tensor", id(v))
    elif isinstance(v, list):
        v = ("list", tuple(repr(x) for x in v))
    elif isinstance(v, (cthtorch.device, float)):
        v = repr(v)   # 0.0 and -0.0 differ; nan equals itself
    return str(n.output().type()), type(v).__name__, v


def constant_pooling(graph):
    pool = {}
    top = graph.block()
    last = [None]   # the last pooled constant: the next one goes after it

    def walk(block):
        for n in list(block.nodes()):
            for b in n.blocks():
                walk(b)
            if n.kind() != "prim::Constant":
                continue
            try:
                k = _key(n)
                hash(k)
            except TypeError:   # a value with no equality we trust: left where it is
                continue
            same = pool.get(k)
            if same is not None:
                n.output().replaceAllUsesWith(same.output())
                n.destroy()
                continue
            pool[k] = n
            if last[0] is None:
                first = next(iter(top.nodes()), None)
                if first is not None and first is not n:
                    n.moveBefore(first)
            elif last[0].next() is not n:
                n.moveAfter(last[0])
            last[0] = n
    walk(top)
    return graph
