"""torch.nested: batches of tensors whose sizes differ (cthtorch/_nested_tensor.py holds the tensor class)."""
from cthtorch._nested_tensor import as_nested_tensor, nested_tensor, to_padded_tensor

__all__ = ["as_nested_tensor", "masked_select", "narrow", "nested_tensor", "nested_tensor_from_jagged",
           "to_padded_tensor"]


def _jagged_only(name):
    raise NotImplementedError("cthtorch: torch.nested.%s builds a torch.jagged nested tensor, and the jagged layout "
                              "is not implemented (strided nested tensors only)" % name)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None, max_seqlen=None):
    _jagged_only("nested_tensor_from_jagged")


def masked_select(tensor, mask):
    _jagged_only("masked_select")


def narrow(tensor, dim, start, length, layout=None):
    import cthtorch
    if layout is not None and layout != cthtorch.strided:
        _jagged_only("narrow")
    return as_nested_tensor(list(tensor.unbind(0))).narrow(dim, start, length)
