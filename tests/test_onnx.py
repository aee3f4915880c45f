"""cthtorch.onnx.export: the written file passes onnx.checker, runs in
onnxruntime with cthtorch's outputs, and has the node kinds torch's own
(dynamo=False) exporter writes for the same model."""
import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import cthtorch  # noqa: E402
import cthtorch.nn as nn  # noqa: E402
import cthtorch.nn.functional as F  # noqa: E402
from oracle import require_torch  # noqa: E402


def _export(model, args, **kw):
    buf = io.BytesIO()
    cthtorch.onnx.export(model, args, buf, **kw)
    data = buf.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


def _run(data, feeds):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: (x.numpy() if isinstance(x, cthtorch.Tensor) else x) for n, x in zip(names, feeds)})


def _op_types(data):
    return [n.op_type for n in onnx.load_from_string(data).graph.node]


def _torch_op_types(build, x_shape, **kw):
    """Exports the same architecture with torch (its TorchScript path)."""
    torch = require_torch()
    torch.manual_seed(0)
    m = build(torch.nn).eval()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (torch.randn(*x_shape),), buf, dynamo=False, **kw)
    return _op_types(buf.getvalue())


def _close(a, b, tol=1e-4):
    b = b.detach().numpy() if isinstance(b, cthtorch.Tensor) else b
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _mlp(nn_):
    return nn_.Sequential(nn_.Linear(12, 32), nn_.ReLU(), nn_.Dropout(0.3), nn_.Linear(32, 16), nn_.Tanh(),
                          nn_.Linear(16, 4), nn_.Softmax(dim=1))


def _cnn(nn_):
    return nn_.Sequential(nn_.Conv2d(3, 8, 3, padding=1), nn_.BatchNorm2d(8), nn_.ReLU(), nn_.MaxPool2d(2),
                          nn_.Conv2d(8, 8, 3, stride=2, groups=2), nn_.Sigmoid(), nn_.AvgPool2d(2),
                          nn_.Flatten(), nn_.Linear(8, 10), nn_.LogSoftmax(dim=1))


def test_mlp_runs_in_onnxruntime_with_dynamic_batch():
    cthtorch.manual_seed(0)
    m = _mlp(nn)
    m.train()
    x = cthtorch.randn(3, 12)
    data = _export(m, (x,), input_names=["x"], output_names=["probs"],
                   dynamic_axes={"x": {0: "batch"}, "probs": {0: "batch"}})
    assert m.training   # the export runs in eval mode and restores the model's mode
    model = onnx.load_from_string(data)
    dims = lambda vi: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]  # noqa: E731
    assert dims(model.graph.input[0]) == ["batch", 12]
    assert dims(model.graph.output[0]) == ["batch", 4]
    assert [i.name for i in model.graph.initializer] == ["0.weight", "0.bias", "3.weight", "3.bias", "5.weight",
                                                         "5.bias"]
    m.eval()
    for n in (1, 3, 17):
        x = cthtorch.randn(n, 12)
        _close(_run(data, [x])[0], m(x))
    assert _op_types(data) == _torch_op_types(_mlp, (3, 12)) == ["Gemm", "Relu", "Gemm", "Tanh", "Gemm",
                                                                  "Softmax"]


def test_cnn_folds_batch_norm_and_matches_torch_node_kinds(tmp_path):
    cthtorch.manual_seed(0)
    m = _cnn(nn)
    m[1].running_mean.normal_()
    m[1].running_var.uniform_(0.5, 2.0)
    m.eval()
    x = cthtorch.randn(2, 3, 16, 16)
    path = tmp_path / "cnn.onnx"
    cthtorch.onnx.export(m, (x,), str(path))
    data = path.read_bytes()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    _close(_run(data, [x])[0], m(x))
    assert _op_types(data) == _torch_op_types(_cnn, (2, 3, 16, 16))
    assert "BatchNormalization" not in _op_types(data)
    unfolded = _export(m, (x,), do_constant_folding=False)
    assert "BatchNormalization" in _op_types(unfolded)
    _close(_run(unfolded, [x])[0], m(x))
    model = onnx.load_from_string(data)
    assert model.opset_import[0].version == 20 and model.producer_name == "pytorch"
    assert model.graph.node[0].name == "/0/Conv"


def test_resnet18_runs_in_onnxruntime():
    from cthtorch.vision.models import resnet18
    cthtorch.manual_seed(0)
    m = resnet18(num_classes=10).eval()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.normal_(0, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
    x = cthtorch.randn(1, 3, 64, 64)
    data = _export(m, (x,), input_names=["image"], dynamic_axes={"image": {0: "n"}})
    x2 = cthtorch.randn(2, 3, 64, 64)
    _close(_run(data, [x2])[0], m(x2))
    kinds = set(_op_types(data))
    assert kinds == {"Conv", "Relu", "MaxPool", "Add", "GlobalAveragePool", "Flatten", "Gemm"}
    # torch's node names: each module level from its last non-numeric name part on
    names = [n.name for n in onnx.load_from_string(data).graph.node]
    assert "/layer1/layer1.0/conv1/Conv" in names and "/fc/Gemm" in names


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_recurrent_nets_run_in_onnxruntime(cell):
    cthtorch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(nn, cell)(8, 16, num_layers=2, batch_first=True)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    m = Net().eval()
    x = cthtorch.randn(4, 6, 8)
    data = _export(m, (x,))
    _close(_run(data, [x])[0], m(x))


class _Block(nn.Module):
    """A transformer-encoder-like block from the ops it needs."""

    def __init__(self, vocab=50, d=16, heads=4):
        super().__init__()
        self.heads = heads
        self.emb = nn.Embedding(vocab, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 32)
        self.ff2 = nn.Linear(32, d)

    def forward(self, ids):
        x = self.emb(ids)
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).permute(0, 2, 1, 3)
        k = k.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = F.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.proj(y))
        x = self.ln2(x + self.ff2(F.gelu(self.ff1(x))))
        return cthtorch.cat([x.mean(dim=1), x[:, 0]], dim=1)


@pytest.mark.parametrize("opset", [13, 17, 20])
def test_attention_block_runs_in_onnxruntime(opset):
    cthtorch.manual_seed(0)
    m = _Block().eval()
    ids = cthtorch.randint(0, 50, (2, 7))
    data = _export(m, (ids,), opset_version=opset, input_names=["ids"],
                   dynamic_axes={"ids": {0: "batch", 1: "seq"}})
    kinds = set(_op_types(data))
    assert ("LayerNormalization" in kinds) == (opset >= 17)
    assert ("Gelu" in kinds) == (opset >= 20)
    for shape in ((2, 7), (3, 5)):
        ids = cthtorch.randint(0, 50, shape)
        _close(_run(data, [ids])[0], m(ids))


@pytest.mark.parametrize("opset", [14, 20])
def test_transformer_encoder_layer_runs_in_onnxruntime(opset):
    cthtorch.manual_seed(0)
    m = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
    x = cthtorch.randn(2, 5, 16)
    data = _export(m, (x,), opset_version=opset, input_names=["src"], dynamic_axes={"src": {0: "b", 1: "s"}})
    m.eval()
    for shape in ((2, 5, 16), (3, 9, 16)):
        x = cthtorch.randn(*shape)
        _close(_run(data, [x])[0], m(x))
    # an additive attention mask as a second input
    mask = cthtorch.triu(cthtorch.full((5, 5), float("-inf")), 1)
    data = _export(m, (x[:, :5], mask), opset_version=opset)
    _close(_run(data, [x[:, :5], mask])[0], m(x[:, :5], mask))


def test_size_arithmetic_stays_in_the_graph():
    class Net(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1) * 2 + 1

    data = _export(Net(), (cthtorch.randn(2, 3, 4),), input_names=["x"], dynamic_axes={"x": [0]})
    model = onnx.load_from_string(data)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"
    x = cthtorch.randn(5, 3, 4)
    _close(_run(data, [x])[0], Net()(x))


def test_export_params_false_makes_parameters_inputs():
    cthtorch.manual_seed(0)
    m = nn.Linear(4, 2)
    x = cthtorch.randn(3, 4)
    data = _export(m, (x,), export_params=False)
    model = onnx.load_from_string(data)
    assert len(model.graph.initializer) == 0
    assert [i.name for i in model.graph.input] == ["input", "weight", "bias"]
    _close(_run(data, [x, m.weight.detach(), m.bias.detach()])[0], m(x))


def test_unsupported_operator_error_and_custom_symbolic():
    from cthtorch.onnx.errors import UnsupportedOperatorError

    class Net(nn.Module):
        def forward(self, x):
            return cthtorch.cumsum(x, 1) + 1

    x = cthtorch.randn(2, 5)
    with pytest.raises(UnsupportedOperatorError, match="^Exporting the operator 'aten::cumsum' to ONNX opset "
                                                       "version 20 is not supported$"):
        _export(Net(), (x,))
    assert issubclass(UnsupportedOperatorError, cthtorch.onnx.OnnxExporterError)
    assert issubclass(cthtorch.onnx.OnnxExporterError, RuntimeError)

    def cumsum(g, x, dim, dtype):
        from cthtorch.onnx import symbolic_helper as sh
        return g.op("CumSum", x, g.op("Constant", value_t=cthtorch.tensor(sh.get_const(dim))))

    cthtorch.onnx.register_custom_op_symbolic("aten::cumsum", cumsum, 11)
    try:
        data = _export(Net(), (x,))
        _close(_run(data, [x])[0], Net()(x))
    finally:
        cthtorch.onnx.unregister_custom_op_symbolic("aten::cumsum", 11)
    with pytest.raises(UnsupportedOperatorError):
        _export(Net(), (x,))


def test_registration_names_follow_torch():
    torch = require_torch()
    for name in ("onnx::Relu", "bad name", "aten::9x"):
        errs = []
        for lib in (cthtorch, torch):
            with pytest.raises(Exception) as e:
                lib.onnx.register_custom_op_symbolic(name, lambda g, x: x, 9)
            errs.append((type(e.value).__name__, str(e.value)))
        assert errs[0] == errs[1]


def test_custom_domain_op_is_exported_with_its_opset():
    class Net(nn.Module):
        def forward(self, x):
            return cthtorch.cumsum(x, 0)

    cthtorch.onnx.register_custom_op_symbolic("aten::cumsum", lambda g, x, d, dt: g.op("mydomain::MyCumSum", x), 13)
    try:
        buf = io.BytesIO()
        cthtorch.onnx.export(Net(), (cthtorch.randn(3),), buf, custom_opsets={"mydomain": 2})
    finally:
        cthtorch.onnx.unregister_custom_op_symbolic("aten::cumsum", 13)
    model = onnx.load_from_string(buf.getvalue())
    assert {o.domain: o.version for o in model.opset_import} == {"": 20, "mydomain": 2}
    assert (model.graph.node[0].domain, model.graph.node[0].op_type) == ("mydomain", "MyCumSum")


def test_dynamo_and_bad_opsets_are_refused():
    m, x = nn.Linear(2, 2), cthtorch.randn(1, 2)
    with pytest.raises(NotImplementedError, match="dynamo=True"):
        cthtorch.onnx.export(m, (x,), io.BytesIO(), dynamo=True)
    with pytest.raises(ValueError, match="opset_version 9 is not supported"):
        cthtorch.onnx.export(m, (x,), io.BytesIO(), opset_version=9)


def test_is_in_onnx_export_and_tuple_outputs():
    seen = []

    class Net(nn.Module):
        def forward(self, x):
            seen.append(cthtorch.onnx.is_in_onnx_export())
            return x.relu(), (x * 3, x.sigmoid())

    x = cthtorch.randn(2, 3)
    data = _export(Net(), (x,), output_names=["a", "b", "c"])
    assert seen and all(seen) and not cthtorch.onnx.is_in_onnx_export()
    outs = _run(data, [x])
    for got, want in zip(outs, (x.relu(), x * 3, x.sigmoid())):
        _close(got, want)
    assert [o.name for o in onnx.load_from_string(data).graph.output] == ["a", "b", "c"]


class _OpMix(nn.Module):
    """Reductions, activations, stacking, flatten of middle dims, slicing, pools, where."""

    def forward(self, x):
        a = x.mean() + x.sum() + x.sum(dim=(0, 1), keepdim=False).mean()
        b = F.leaky_relu(x, 0.2) + F.elu(x) + F.hardtanh(x, -0.5, 0.5) + F.silu(x) + F.relu6(x) + F.softplus(x)
        c = cthtorch.stack([x, x * 2], 1).flatten(1, 2).unsqueeze(0).squeeze(0)
        d = F.adaptive_avg_pool2d(x, 2)
        e = x[:, 1:3].exp().log().sqrt().abs().neg() - x.select(1, 0).unsqueeze(1)
        f = F.avg_pool2d(x, 2) + F.max_pool2d(x, 2)
        return a + b, c, d, e, f, cthtorch.where(x > 0, x, 0.0), x.permute(0, 2, 3, 1).contiguous().view(2, -1, 4)


def test_op_mix_runs_in_onnxruntime():
    cthtorch.manual_seed(0)
    x = cthtorch.randn(2, 4, 6, 6)
    data = _export(_OpMix(), (x,))
    outs = _run(data, [x])
    want = _OpMix()(x)
    assert len(outs) == len(want)
    for got, w in zip(outs, want):
        w = w.numpy()
        assert got.shape == w.shape
        np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(w), rtol=1e-4, atol=1e-4)
