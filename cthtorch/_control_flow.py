"""torch.cond and torch.while_loop, the control-flow operators torch.export captures as graph nodes. Eagerly (the
only mode here: cthtorch has no torch.compile/export graph capture) they are the Python if and while, as
PyTorch's eager path is; autograd records the branch taken."""
import cthtorch


def _pred_value(pred):
    if isinstance(pred, cthtorch.Tensor):
        if pred.numel() != 1:
            raise RuntimeError("Expected pred to be bool or single-element tensor, but got %r." % (pred,))
        return bool(pred.item())
    return bool(pred)


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands)"""
    if not isinstance(operands, (tuple, list)):
        raise TypeError("cond: operands must be a tuple or list, got %s" % type(operands).__name__)
    return (true_fn if _pred_value(pred) else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """carried = body_fn(*carried) while cond_fn(*carried); the last carried values"""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("carried_inputs must be a tuple or list, got %s" % type(carried_inputs).__name__)
    carried = carried_inputs
    args = tuple(carried)
    while _pred_value(cond_fn(*args)):
        carried = body_fn(*args)
        args = tuple(carried) if isinstance(carried, (tuple, list)) else (carried,)
    return carried
