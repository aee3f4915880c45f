"""QuantStub / DeQuantStub / QuantWrapper (torch.ao.quantization.stubs): where a float model's tensors
enter and leave the quantized part. Before convert() they pass values through (observing them once
prepare() has attached an observer); convert() swaps them for Quantize / DeQuantize."""
from cthtorch import nn

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class _Stub(nn.Module):
    """A pass-through that may carry its own qconfig."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Placeholder for quantizing its input; convert() makes it nnq.Quantize."""


class DeQuantStub(_Stub):
    """Placeholder for dequantizing its input; convert() makes it nnq.DeQuantize."""


class QuantWrapper(nn.Module):
    """module between a QuantStub and a DeQuantStub."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        X = self.quant(X)
        X = self.module(X)
        return self.dequant(X)
