"""A custom op from a C extension, with its own backward.

    python examples/extension/swish.py

swish(x, beta) = x * sigmoid(beta * x) is computed by src/swish.c, built at
first use by cthtorch.utils.cpp_extension.load (cached: later runs load the
built module until a source or flag changes). Swish, an autograd.Function,
calls the C forward and the C backward; gradcheck checks one against the
other. build.py builds the same C code the PyTorch 0.x way
(cthtorch.utils.ffi.create_extension).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import cthtorch as torch  # noqa: E402
from cthtorch.utils.cpp_extension import load  # noqa: E402

_ext = None


def extension(verbose=False, build_directory=None):
    """The compiled extension (built on first call)."""
    global _ext
    if _ext is None:
        _ext = load("swish_ext", [os.path.join(HERE, "src", "swish.c")], extra_cflags=["-O2"],
                    build_directory=build_directory, verbose=verbose)
    return _ext


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta=1.0):
        ctx.save_for_backward(x)
        ctx.beta = float(beta)
        return extension().swish_forward(x, ctx.beta)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_input = torch.empty(0, dtype=x.dtype)
        extension().swish_backward(grad_output, x, ctx.beta, grad_input)
        return grad_input, None


def swish(x, beta=1.0):
    return Swish.apply(x, beta)


if __name__ == "__main__":
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    y = swish(x, 1.5)
    print("swish(x) matches x * sigmoid(1.5 x):", torch.allclose(y, x * torch.sigmoid(1.5 * x)))
    print("gradcheck:", torch.autograd.gradcheck(lambda t: swish(t, 1.5), (x,)))
    try:
        swish(torch.arange(3))
    except TypeError as e:
        print("int64 input ->", type(e).__name__ + ":", e)
