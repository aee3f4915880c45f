"""torch.nn modules' constructor signatures (parameter names, order, kinds) against torch's, and the keyword-only
and deprecated-alias arguments that the signature fixes brought."""
import inspect
import warnings

import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

# the modules whose constructors take more than a size: a positional argument read as another one is silent
MODULES = ["Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d", "InstanceNorm2d", "GroupNorm", "LayerNorm", "RMSNorm", "Embedding", "EmbeddingBag",
           "LSTM", "GRU", "RNN", "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "Transformer", "Hardtanh", "LeakyReLU", "ELU", "Softplus", "Dropout", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Upsample", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "SmoothL1Loss",
           "HuberLoss", "KLDivLoss", "CTCLoss", "PixelShuffle", "Unfold", "Fold", "Flatten", "Unflatten"]


def _params(cls):
    return [(p.name, p.kind) for p in inspect.signature(cls.__init__).parameters.values()]


@pytest.mark.parametrize("name", MODULES)
def test_constructor_signature_matches_torch(name):
    assert _params(getattr(ct.nn, name)) == _params(getattr(torch.nn, name))


def test_keyword_only_bias_and_deprecated_hardtanh_names():
    for L in (ct, torch):
        assert L.nn.GroupNorm(2, 4, 1e-5, True, None, None, bias=False).bias is None
        m = L.nn.LazyBatchNorm1d(bias=False)
        m(L.randn(3, 4))
        assert m.bias is None and tuple(m.weight.shape) == (4,) and "bias" not in m.state_dict()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            h = L.nn.Hardtanh(min_value=-2.0, max_value=3.0)
        assert (h.min_val, h.max_val) == (-2.0, 3.0)
        assert [str(x.message) for x in w] == ["keyword argument `min_value` is deprecated and renamed to `min_val`",
                                               "keyword argument `max_value` is deprecated and renamed to `max_val`"]
        assert all(x.category is FutureWarning for x in w)
    assert repr(ct.nn.LazyBatchNorm2d(bias=False)) == repr(torch.nn.LazyBatchNorm2d(bias=False))
    oracle.raises_like(lambda: ct.nn.Hardtanh(1.0, 0.0), lambda: torch.nn.Hardtanh(1.0, 0.0))
