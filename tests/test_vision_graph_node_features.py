"""vision.models.feature_extraction on cthtorch.fx: node names as torchvision's docs list them for resnet
(module paths, ops numbered under their parent), extracted features equal running the model's layers by
hand, train/eval graphs, torchvision.ops layers kept whole, and the error texts."""
import warnings

import pytest

import cthtorch as ct
from cthtorch import nn
from cthtorch.vision import models
from cthtorch.vision.models._utils import IntermediateLayerGetter
from cthtorch.vision.models.feature_extraction import create_feature_extractor, get_graph_node_names
from cthtorch.vision.ops import StochasticDepth


def test_resnet_node_names():
    train, ev = get_graph_node_names(models.resnet18())
    assert train == ev
    assert train[:12] == ["x", "conv1", "bn1", "relu", "maxpool", "layer1.0.conv1", "layer1.0.bn1",
                          "layer1.0.relu", "layer1.0.conv2", "layer1.0.bn2", "layer1.0.add", "layer1.0.relu_1"]
    assert "layer2.0.downsample.0" in train and train[-3:] == ["avgpool", "flatten", "fc"]


def test_features_equal_the_layers_run_by_hand():
    ct.manual_seed(0)
    m = models.resnet18().eval()
    fe = create_feature_extractor(m, return_nodes={"layer1": "f1", "layer3.1.add": "add", "flatten": "flat"})
    x = ct.rand(2, 3, 64, 64)
    out = fe(x)
    assert list(out) == ["f1", "add", "flat"]
    with ct.no_grad():
        h = m.layer1(m.maxpool(m.relu(m.bn1(m.conv1(x)))))
        assert ct.equal(out["f1"], h)
        h3 = m.layer3[0](m.layer2(h))
        blk = m.layer3[1]
        add = blk.bn2(blk.conv2(blk.relu(blk.bn1(blk.conv1(h3))))) + h3
        # the block's ReLU is in place, so the returned add node is relu'd afterwards (as in torchvision)
        assert ct.allclose(out["add"], add.relu())
        assert ct.allclose(out["flat"], ct.flatten(m.avgpool(m.layer4(m.layer3[1](h3))), 1))
    # the fc is dead code: its parameters are not in the extractor
    n_params = sum(p.numel() for p in fe.parameters())
    assert n_params == sum(p.numel() for p in m.parameters()) - 512 * 1000 - 1000


class _Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.drop = StochasticDepth(0.5, "row")
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        y = self.a(x)
        if self.training:
            y = y * 2
        return self.b(self.drop(y))


def test_train_and_eval_graphs_and_leaf_ops():
    m = _Branchy()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        train, ev = get_graph_node_names(m)
    assert train == ["x", "a", "mul", "drop", "b"] and ev == ["x", "a", "drop", "b"]
    assert any("subsequence" in str(x.message) for x in w)
    fe = create_feature_extractor(m, train_return_nodes=["mul", "b"], eval_return_nodes=["a", "b"],
                                  suppress_diff_warning=True)
    x = ct.rand(3, 4)
    fe.eval()
    out = fe(x)
    assert list(out) == ["a", "b"] and ct.allclose(out["a"], m.a(x))
    fe.train()
    assert list(fe(x)) == ["mul", "b"]


def test_extractor_of_an_eval_model_runs_the_eval_graph():
    # built from a model in eval mode, the extractor starts in eval mode with the eval graph (it ran the train
    # graph until train()/eval() was called)
    m = _Branchy().eval()
    fe = create_feature_extractor(m, train_return_nodes=["mul", "b"], eval_return_nodes=["a", "b"],
                                  suppress_diff_warning=True)
    assert not fe.training and not m.training
    x = ct.rand(3, 4)
    out = fe(x)
    assert list(out) == ["a", "b"] and ct.allclose(out["b"], m(x))
    fe.train()
    assert list(fe(x)) == ["mul", "b"]
    fe.eval()
    assert list(fe(x)) == ["a", "b"]


def test_errors():
    m = models.resnet18()
    with pytest.raises(ValueError, match="Either `return_nodes` or"):
        create_feature_extractor(m)
    with pytest.raises(ValueError, match="node: 'layer9' is not present in model"):
        create_feature_extractor(m, return_nodes=["layer9"])


def test_intermediate_layer_getter():
    m = models.resnet18().eval()
    getter = IntermediateLayerGetter(m, return_layers={"layer2": "a", "layer4": "out"})
    x = ct.rand(1, 3, 64, 64)
    out = getter(x)
    assert list(out) == ["a", "out"] and out["out"].shape == (1, 512, 2, 2)


def test_transformers_trace():
    """vit's size checks and swin's window attention trace (the latter a wrapped leaf, as torchvision wraps it):
    the extracted features equal the model's own stages"""
    ct.manual_seed(0)
    m = models.swin_t().eval()
    _, ev = get_graph_node_names(m)
    assert "features.1.0.attn.shifted_window_attention" in ev
    fe = create_feature_extractor(m, return_nodes=["features.3", "norm"])
    x = ct.rand(1, 3, 64, 64)
    with ct.no_grad():
        out = fe(x)
        assert out["features.3"].shape == (1, 8, 8, 192)
        assert ct.allclose(out["norm"], m.norm(m.features(x)), atol=1e-5)
    v = models.vit_b_16(image_size=32).eval()
    fe = create_feature_extractor(v, return_nodes={"encoder.ln": "tokens"})
    x = ct.rand(1, 3, 32, 32)
    with ct.no_grad():
        assert ct.allclose(fe(x)["tokens"], v.encoder(ct.cat([v.class_token.expand(1, -1, -1),
                                                              v._process_input(x)], dim=1)), atol=1e-5)
