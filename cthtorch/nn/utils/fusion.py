"""Folding an eval-mode BatchNorm into the Conv / Linear before it (the fx
conv+bn fuser tutorial uses these): y = bn(conv(x)) becomes one conv whose
weight is scaled per output channel by gamma / sqrt(var + eps) and whose bias
absorbs the shift."""
import copy

import cthtorch

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else dtype
    if conv_b is None:
        conv_b = cthtorch.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = cthtorch.ones_like(bn_rm)
    if bn_b is None:
        bn_b = cthtorch.zeros_like(bn_rm)
    rsqrt = cthtorch.rsqrt(bn_rv + bn_eps)
    # the output-channel axis: dim 0 of a conv weight, dim 1 of a transposed one
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return (cthtorch.nn.Parameter(fused_w, conv_w.requires_grad),
            cthtorch.nn.Parameter(fused_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    assert not (linear.training or bn.training), "Fusion only for eval!"
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    fused = copy.deepcopy(linear)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    # a Linear weight (out, in) is a conv weight with no spatial dims: the same fold
    return fuse_conv_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)
