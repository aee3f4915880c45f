"""torch.qscheme and its five values (torch.per_tensor_affine, ...): how a quantized tensor maps its
integers to reals. Kept apart from the quantized tensor itself so naming a scheme loads nothing else."""

__all__ = ["qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams"]


class qscheme:
    __slots__ = ("_name",)
    __module__ = "cthtorch"

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name    # a module attribute, as torch's qschemes pickle

    def __setattr__(self, name, value):
        raise AttributeError("'torch.qscheme' object has no attribute '%s'" % name)


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
