"""digamma with a gradient: the core op's derivative (trigamma) is not
implemented yet, and Gamma/Beta/Dirichlet entropies and KLs need it.
Drop this once cthtorch.digamma differentiates."""
import cthtorch as torch


class _Digamma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.digamma(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.polygamma(1, x)


def digamma(x):
    return _Digamma.apply(x) if x.requires_grad else torch.digamma(x)
