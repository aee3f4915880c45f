"""The tensors written in Python rather than as a _TensorBase (sparse COO/CSR in _sparse_tensor.py, nested in
_nested_tensor.py) share this base so the C argument parser knows one class: a call that fails to parse because
one of them is among its arguments comes to `dispatch` here, which hands it to that layout's kernels."""


class PythonLayoutTensor:
    """What these tensors share: they answer isinstance(x, torch.Tensor), live on the CPU, and are none of the
    other special kinds; each subclass says which layout it is."""
    __slots__ = ()

    @property
    def __class__(self):
        import cthtorch
        return cthtorch.Tensor

    is_sparse = is_sparse_csr = is_nested = False
    is_cuda = is_meta = is_quantized = is_mkldnn = is_mps = is_xla = False
    is_cpu = True


def dispatch(name, self, args, kwargs):
    """Called from C (ap_sparse_call); NotImplemented makes C raise the sparse backend's error."""
    from cthtorch import _nested_tensor
    if any(isinstance(a, _nested_tensor.NestedTensor) for a in _flat(self, args, kwargs)):
        return _nested_tensor.dispatch(name, self, args, kwargs)
    from cthtorch import _sparse_ops
    return _sparse_ops.dispatch(name, self, args, kwargs)


def _flat(self, args, kwargs):
    for a in (self,) + tuple(args) + tuple(kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a
