"""Graph inspection helpers (torch.autograd.graph)."""
Node = None


def _set_node():
    global Node
    from cthtorch import _C
    Node = _C._FunctionBase


_set_node()
