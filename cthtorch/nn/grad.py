"""torch.nn.grad: the gradients of conv1d/2d/3d with respect to the input or the weight, given grad_output (the
custom-function conv+bn tutorial's backward). Each is the vector-Jacobian product of the convolution, taken through
autograd at a zero point (the convolution is linear in each argument), so the result is itself differentiable in
weight/input and grad_output, as torch's."""
import cthtorch
from cthtorch.nn import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _vjp(conv, wrt_input, size, other, grad_output, stride, padding, dilation, groups):
    z = cthtorch.zeros(tuple(size), dtype=grad_output.dtype, requires_grad=True)
    with cthtorch.enable_grad():
        out = conv(z, other, None, stride, padding, dilation, groups) if wrt_input else \
            conv(other, z, None, stride, padding, dilation, groups)
        graph = cthtorch.is_grad_enabled() and (other.requires_grad or grad_output.requires_grad)
    with cthtorch.set_grad_enabled(graph):
        return cthtorch.autograd.grad(out, z, grad_output, create_graph=graph)[0]


def _input_and_weight_grads(nd):
    """convNd_input and convNd_weight, with torch's signatures"""
    conv = getattr(F, "conv%dd" % nd)

    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _vjp(conv, True, input_size, weight, grad_output, stride, padding, dilation, groups)

    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _vjp(conv, False, weight_size, input, grad_output, stride, padding, dilation, groups)
    for fn, kind in ((conv_input, "input"), (conv_weight, "weight")):
        fn.__name__ = fn.__qualname__ = "conv%dd_%s" % (nd, kind)
        fn.__module__ = __name__
    return conv_input, conv_weight


conv1d_input, conv1d_weight = _input_and_weight_grads(1)
conv2d_input, conv2d_weight = _input_and_weight_grads(2)
conv3d_input, conv3d_weight = _input_and_weight_grads(3)
