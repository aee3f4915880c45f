"""Helpers shared by the weight-norm and spectral-norm utilities."""


def norm_except_dim(v, pow=2, dim=0):
    """The norm of v over every dim but `dim`, kept broadcastable against v (dim=-1: the whole tensor)."""
    if dim == -1:
        return v.abs().pow(pow).sum().pow(1.0 / pow)
    dims = [d for d in range(v.dim()) if d != dim % v.dim()]
    return v.abs().pow(pow).sum(dims, keepdim=True).pow(1.0 / pow)


def weight_norm_(v, g, dim):
    return v * (g / norm_except_dim(v, 2, dim))


def reshape_weight_to_matrix(weight, dim):
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def default_spectral_dim(module):
    from cthtorch.nn.modules.conv import _ConvTransposeNd
    return 1 if isinstance(module, _ConvTransposeNd) else 0
