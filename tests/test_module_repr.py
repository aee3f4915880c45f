"""Module reprs match torch's exactly for the layers, activations, losses
and containers a training script prints."""
import cthtorch
import pytest
from oracle import require_torch

torch = require_torch()

ctors = ['Linear(3, 4)', 'Linear(3, 4, bias=False)', 'Conv2d(3, 8, 3, stride=2, padding=1)', 'Conv2d(3, 8, (3, 5), dilation=2, groups=1, bias=False, padding_mode="reflect")',
 'Conv1d(2, 4, 3)', 'ConvTranspose2d(4, 2, 4, 2, 1, output_padding=1)', 'MaxPool2d(2)', 'MaxPool2d(3, 2, 1, ceil_mode=True)', 'AvgPool2d(2)', 'AdaptiveAvgPool2d((1, 1))',
 'BatchNorm1d(4)', 'BatchNorm2d(4, momentum=None)', 'LayerNorm([4, 5])', 'GroupNorm(2, 4)', 'InstanceNorm2d(3, affine=True)', 'Dropout(0.3)', 'Dropout2d()', 'Embedding(10, 3, padding_idx=0)',
 'EmbeddingBag(10, 3, mode="sum")', 'LSTM(3, 4, 2, batch_first=True, bidirectional=True)', 'GRU(3, 4)', 'RNN(3, 4, nonlinearity="relu")', 'LSTMCell(3, 4)', 'GRUCell(3, 4)',
 'ReLU()', 'ReLU(inplace=True)', 'LeakyReLU(0.2, inplace=True)', 'ELU()', 'GELU(approximate="tanh")', 'Softmax(dim=1)', 'LogSoftmax(dim=-1)', 'Sigmoid()', 'Tanh()', 'Hardtanh(-2, 2)', 'PReLU(3)', 'Softplus(beta=2)', 'SiLU()', 'Mish()', 'Threshold(0.1, 20)',
 'Flatten()', 'Unflatten(1, (2, 3))', 'Identity()', 'Upsample(scale_factor=2, mode="nearest")', 'Upsample(size=(4, 4), mode="bilinear", align_corners=True)', 'PixelShuffle(2)',
 'CrossEntropyLoss()', 'CrossEntropyLoss(label_smoothing=0.1)', 'NLLLoss()', 'MSELoss(reduction="sum")', 'BCEWithLogitsLoss()', 'SmoothL1Loss(beta=0.5)', 'HuberLoss()', 'KLDivLoss(reduction="batchmean")',
 'TransformerEncoderLayer(8, 2, 16)', 'MultiheadAttention(8, 2)', 'Bilinear(2, 3, 4)', 'ZeroPad2d(2)', 'ReflectionPad2d((1, 1, 2, 0))', 'ConstantPad1d(2, 3.5)', 'Sequential(Linear(2, 3), ReLU())',
 'ModuleList([Linear(2, 2)])', 'ModuleDict({"a": ReLU()})', 'ParameterList([Parameter(ones(2))])', 'Fold((4, 4), 2)', 'Unfold(2)', 'RMSNorm(4)', 'CosineSimilarity()', 'PairwiseDistance()', 'AdaptiveMaxPool2d(2)', 'Softmax2d()', 'Hardswish()', 'Softsign()', 'GLU()', 'CELU()', 'SELU()', 'ReLU6()', 'Hardsigmoid()', 'Tanhshrink()', 'Softshrink()', 'Hardshrink()', 'LogSigmoid()', 'Softmin(1)', 'RReLU()', 'AlphaDropout(0.2)', 'Dropout1d()', 'Dropout3d()', 'TripletMarginLoss()', 'MarginRankingLoss()', 'CosineEmbeddingLoss()', 'L1Loss()', 'BCELoss()', 'PoissonNLLLoss()', 'GaussianNLLLoss()', 'HingeEmbeddingLoss()', 'SoftMarginLoss()', 'MultiMarginLoss()', 'CTCLoss()']
ctors += ['RNNCell(3, 4, nonlinearity="relu")', 'GRUCell(3, 4, bias=False)', 'RReLU(0.1, 0.3, inplace=True)',
          'Softshrink(0.3)', 'LayerNorm(4, bias=False)', 'GroupNorm(2, 4, bias=False)', 'InstanceNorm1d(3)',
          'FeatureAlphaDropout(0.2)', 'ParameterDict({"a": Parameter(ones(2))})']
# a ModuleList prints a run of alike children once, "(0-2): 3 x Block(...)" (EfficientNet-PyTorch's _blocks,
# a TransformerEncoder's layers), and only consecutive ones
ctors += ['ModuleList()', 'ModuleList([Linear(2, 2), Linear(2, 2), ReLU(), Linear(2, 2), ReLU(), ReLU()])',
          'ModuleList([ModuleList([ReLU(), ReLU()]), ModuleList([ReLU(), ReLU()]), Sequential(ReLU(), ReLU())])',
          'TransformerEncoder(TransformerEncoderLayer(8, 2, 16), 3, enable_nested_tensor=False)',
          'TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 2)']


def _make(lib, expr):
    env = dict(vars(lib.nn))
    env["ones"], env["Parameter"] = lib.ones, lib.nn.Parameter
    return eval(expr, env)


@pytest.mark.parametrize("expr", ctors)
def test_repr_matches_torch(expr):
    assert repr(_make(cthtorch, expr)) == repr(_make(torch, expr))


def test_blank_extra_repr_lines_stay_empty_when_nested():
    """dragen1860/MAML-Pytorch's Learner returns an extra_repr ending in a newline; torch leaves that blank line
    empty when the Learner is indented as a child (no trailing spaces), at top level it keeps two"""
    def build(lib):
        class Learner(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.vars = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])

            def extra_repr(self):
                return "conv2d:(ch_in:1)\nrelu:(True,)\n"

        class Meta(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Learner()
                self.seq = lib.nn.Sequential(Learner())
        return Meta()
    ours, theirs = repr(build(cthtorch)), repr(build(torch))
    assert "\n\n" in theirs
    assert ours == theirs
    assert repr(build(cthtorch).net) == repr(build(torch).net)
