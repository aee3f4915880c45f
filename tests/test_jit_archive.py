"""TorchScript archives: torch.jit.save/load in PyTorch's zip layout.

Archives made here by the installed PyTorch (trace and script of the common layers, a ResNet-18)
load in cthtorch with equal outputs, parameters and gradients; archives cthtorch writes load in
PyTorch; a saved module loads in a fresh process without its Python classes; malformed archives
raise RuntimeError."""
import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
nn = torch.nn
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def to_ct(t):
    return ct.from_numpy(t.detach().numpy().copy())


def close(a, b, tol=1e-5):
    """a (cthtorch) equals b (torch), through tuples."""
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a.dtype, b.dtype, a.shape, b.shape)
    if b.dtype == torch.bfloat16:   # numpy has no bfloat16: compared as float32 (exact)
        a, b = a.float(), b.float()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def torch_archive(m):
    b = io.BytesIO()
    torch.jit.save(m, b)
    return b.getvalue()


def ct_load(data, **kw):
    return ct.jit.load(io.BytesIO(data), **kw)


def first_output_in_fresh_process(path, x, h, tmp_path):
    """m(x, h)[0] of the archive at path, loaded by cthtorch in a new interpreter that has neither the
    module's Python classes nor torch."""
    np.save(tmp_path / "x.npy", np.asarray(x.numpy()))
    np.save(tmp_path / "h.npy", np.asarray(h.numpy()))
    script = ("import sys, numpy as np, cthtorch as ct\n"
              "assert 'torch' not in sys.modules\n"
              "m = ct.jit.load(sys.argv[1], map_location='cpu')\n"
              "x, h = (ct.from_numpy(np.load(sys.argv[i])) for i in (2, 3))\n"
              "assert 'torch' not in sys.modules\n"
              "np.save(sys.argv[4], m(x, h)[0].detach().numpy())\n")
    out = tmp_path / "out.npy"
    subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "x.npy"), str(tmp_path / "h.npy"),
                    str(out)], cwd=REPO, check=True, timeout=120)
    return np.load(out)


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.emb = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 5, batch_first=True)
        self.head = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Dropout(0.1))

    def forward(self, x, idx):
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        o, (h, c) = self.lstm(self.emb(idx))
        return y, o, h, c, self.head(x[:, :, 0, :3])


def layers_inputs():
    torch.manual_seed(0)
    return torch.randn(2, 3, 8, 8), torch.tensor([[1, 2, 3], [4, 5, 9]])


class Block(nn.Module):
    def __init__(self, i, o, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(i, o, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(o)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(o, o, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(o)
        self.downsample = (nn.Sequential(nn.Conv2d(i, o, 1, stride, bias=False), nn.BatchNorm2d(o))
                           if stride != 1 or i != o else None)

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + idt)


class ResNet18(nn.Module):
    """torchvision's resnet18 layout (torchvision is not installed here)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, i = [], 64
        for o, st in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers.append(nn.Sequential(Block(i, o, st), Block(o, o, 1)))
            i = o
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class MyDecisionGate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class MyCell(nn.Module):
    """The TorchScript tutorial's cell, with a loop added."""

    def __init__(self):
        super().__init__()
        self.dg = MyDecisionGate()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        for _ in range(3):
            h = torch.tanh(self.dg(self.linear(x)) + h)
        return h, h


@pytest.mark.parametrize("kind", ["trace", "script"])
def test_torch_archive_of_common_layers_loads(kind):
    m = Layers().eval()
    x, idx = layers_inputs()
    j = torch.jit.trace(m, (x, idx)) if kind == "trace" else torch.jit.script(m)
    data = torch_archive(j)
    cm = ct_load(data)
    close(cm(to_ct(x), to_ct(idx)), m(x, idx))
    assert isinstance(cm, ct.jit.ScriptModule) and cm.original_name == "Layers"
    t = torch.jit.load(io.BytesIO(data))
    assert cm.code == t.code and cm.conv.code == t.conv.code
    assert repr(cm.head) == repr(t.head)
    sd, csd = m.state_dict(), cm.state_dict()
    assert list(csd) == list(sd)
    for k in sd:
        close(csd[k], sd[k], 0)
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in m.named_parameters()]
    assert all(p.requires_grad for p in cm.parameters())


@pytest.mark.parametrize("kind", ["trace", "script"])
def test_torch_archive_of_resnet18_loads_and_goes_back(kind):
    torch.manual_seed(1)
    m = ResNet18().eval()
    x = torch.randn(1, 3, 32, 32)
    j = torch.jit.trace(m, x) if kind == "trace" else torch.jit.script(m)
    cm = ct_load(torch_archive(j))
    close(cm(to_ct(x)), m(x), 1e-4)
    b = io.BytesIO()
    ct.jit.save(cm, b)   # cthtorch writes it; PyTorch reads it
    b.seek(0)
    back = torch.jit.load(b)
    np.testing.assert_allclose(back(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_gradients_through_a_loaded_module_equal_torch():
    torch.manual_seed(2)
    m = MyCell()
    x, h = torch.randn(3, 4), torch.randn(3, 4)
    cm = ct_load(torch_archive(torch.jit.script(m)))
    cx = to_ct(x).requires_grad_()
    out, _ = cm(cx, to_ct(h))
    out.sum().backward()
    tx = x.clone().requires_grad_()
    ref, _ = m(tx, h)
    ref.sum().backward()
    close(out, ref)
    close(cx.grad, tx.grad)
    close(cm.linear.weight.grad, m.linear.weight.grad)
    close(cm.linear.bias.grad, m.linear.bias.grad)
    assert "for" in cm.code and "def forward" in cm.code and "def forward" in cm.dg.code


def test_train_mode_runs_the_training_branch():
    torch.manual_seed(3)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    cm = ct_load(torch_archive(torch.jit.script(m)))
    x = torch.randn(2, 3, 6, 6)
    m.train()
    cm.train()
    close(cm(to_ct(x)), m(x))
    close(getattr(cm, "1").running_mean, m[1].running_mean)
    assert int(getattr(cm, "1").num_batches_tracked) == 1
    m.eval()
    cm.eval()
    assert not getattr(cm, "1").training
    close(cm(to_ct(x)), m(x))


def test_constants_and_tensor_layouts():
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
            self.register_buffer("base", base)
            self.register_buffer("view", base[1:, ::2])   # strided view, offset, shared storage
            self.register_buffer("ints", torch.tensor([[1, 2], [3, 4]], dtype=torch.int32).t())
            self.register_buffer("flags", torch.tensor([True, False]))
            self.register_buffer("halves", torch.tensor([1.5, -2.0], dtype=torch.float16))
            self.register_buffer("longs", torch.tensor([1 << 40], dtype=torch.int64))

        def forward(self, x):
            return x + torch.tensor([1.0, 2.0])   # a trace constant: CONSTANTS.c0, stored under constants/

    m = Holder()
    with pytest.warns(Warning):
        j = torch.jit.trace(m, torch.zeros(2))
    data = torch_archive(j)
    assert any(n.endswith("/constants/0") for n in zipfile.ZipFile(io.BytesIO(data)).namelist())
    cm = ct_load(data)
    assert "aten::to" in str(cm.graph)   # torch.to(c0, device, dtype): aten::to.device compiles
    close(cm(ct.ones(2)), m(torch.ones(2)))
    for k, v in m.state_dict().items():
        c = getattr(cm, k)
        close(c, v, 0)
        assert c.stride() == v.stride() and c.storage_offset() == v.storage_offset(), k
    cm.base[2, 0] = 100.0   # one storage, as in the archive
    assert cm.view[1, 0].item() == 100.0


def test_archive_written_by_cthtorch_loads_in_torch_and_in_a_fresh_process(tmp_path):
    torch.manual_seed(4)
    m = MyCell()
    x, h = torch.randn(3, 4), torch.randn(3, 4)
    cm = ct_load(torch_archive(torch.jit.script(m)))
    path = tmp_path / "cell.pt"
    cm.save(str(path), _extra_files={"meta.txt": "v1"})
    names = zipfile.ZipFile(path).namelist()
    for rec in ["cell/data.pkl", "cell/constants.pkl", "cell/version", "cell/byteorder", "cell/extra/meta.txt",
                "cell/data/0"]:
        assert rec in names, rec
    assert any(n.startswith("cell/code/__torch__/") and n.endswith(".py") for n in names)
    extra = {"meta.txt": ""}
    t = torch.jit.load(str(path), _extra_files=extra)
    assert extra["meta.txt"] == b"v1"
    close(to_ct(t(x, h)[0]), m(x, h)[0])
    np.testing.assert_allclose(first_output_in_fresh_process(path, x, h, tmp_path), m(x, h)[0].detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_cthtorch_modules_written_with_their_code_load_in_torch():
    from cthtorch.jit import _serialization
    m = ct.nn.Sequential(ct.nn.Linear(3, 4), ct.nn.ReLU())
    code = {ct.nn.Linear: "def forward(self, input: Tensor) -> Tensor:\n"
                          "  return torch.linear(input, self.weight, self.bias)\n",
            ct.nn.ReLU: "def forward(self, input: Tensor) -> Tensor:\n  return torch.relu(input)\n",
            ct.nn.Sequential: 'def forward(self, input: Tensor) -> Tensor:\n  _0 = getattr(self, "0")\n'
                              '  _1 = getattr(self, "1")\n  return (_1).forward((_0).forward(input, ), )\n'}
    b = io.BytesIO()
    _serialization.save(m, b, _methods_source=lambda mod: code[type(mod)])
    b.seek(0)
    t = torch.jit.load(b)
    x = torch.randn(2, 3)
    np.testing.assert_allclose(t(x).detach().numpy(), m(to_ct(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    assert [n for n, _ in t.named_parameters()] == ["0.weight", "0.bias"]
    b.seek(0)
    close(ct.jit.load(b)(to_ct(x)), t(x))


def test_jit_script_functions_and_modules_save_for_torch():
    """cthtorch's own ScriptFunction/ScriptModule (graphs, jit/_module.py) write archives torch loads:
    a function as torch's PlaceholderModule, a module with its attributes and CONSTANTS.cN table."""
    from test_jit_ir import _graph_relu_add_size
    from cthtorch.jit._module import RecursiveScriptModule, ScriptFunction
    f = ScriptFunction(_graph_relu_add_size(ct), "f")
    b = io.BytesIO()
    f.save(b)
    b.seek(0)
    t = torch.jit.load(b)
    a, c = torch.randn(3, 4), torch.randn(3, 4)
    close(f(to_ct(a), to_ct(c)), t(a, c))
    close(ct_load(b.getvalue())(to_ct(a), to_ct(c)), t(a, c))

    C = ct._C
    m = RecursiveScriptModule()._construct_from(ct.nn.Linear(3, 4))
    g = C.Graph()
    self_v = g.addInput("self")
    self_v.setType(m._type)
    x = g.addInput("x")
    getattrs = []
    for name in ("weight", "bias"):
        n = g.insertNode(g.create("prim::GetAttr", [self_v]))
        n.s_("name", name)
        getattrs.append(n.output())
    lin = g.insertNode(g.create("aten::linear", [x] + getattrs)).output()
    shift = g.insertConstant(ct.tensor([1.0, 2.0, 3.0, 4.0]))   # printed as CONSTANTS.c0
    g.registerOutput(g.insertNode(g.create("aten::add", [lin, shift, g.insertConstant(1)])).output())
    m._define_method("forward", g)
    b = io.BytesIO()
    ct.jit.save(m, b)
    b.seek(0)
    assert "CONSTANTS.c0" in m.code
    t = torch.jit.load(b)
    xx = torch.randn(2, 3)
    close(m(to_ct(xx)), t(xx))
    assert t.in_features == 3 and [n for n, _ in t.named_parameters()] == ["weight", "bias"]
    close(ct_load(b.getvalue())(to_ct(xx)), t(xx))


class CtGate(ct.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class CtCell(ct.nn.Module):
    """The tutorial's MyCell, in cthtorch, with a loop and a Sequential (getattr(self, "0") in code)."""

    def __init__(self):
        super().__init__()
        self.dg = CtGate()
        self.linear = ct.nn.Linear(4, 4)
        self.head = ct.nn.Sequential(ct.nn.Linear(4, 4), ct.nn.ReLU())

    def forward(self, x, h):
        for _ in range(3):
            h = ct.tanh(self.dg(self.linear(x)) + h)
        return self.head(h), h


def test_cthtorch_scripted_module_round_trips_through_torch_and_a_fresh_process(tmp_path):
    ct.manual_seed(8)
    m = ct.jit.script(CtCell())
    x, h = ct.randn(3, 4), ct.randn(3, 4)
    ref = m(x, h)
    path = tmp_path / "ctcell.pt"
    m.save(str(path))
    t = torch.jit.load(str(path))
    tx, th = torch.from_numpy(x.numpy()), torch.from_numpy(h.numpy())
    for a, b in zip(ref, t(tx, th)):
        close(a, b)
    assert [n for n, _ in t.named_parameters()] == [n for n, _ in m.named_parameters()]
    np.testing.assert_allclose(first_output_in_fresh_process(path, x, h, tmp_path), ref[0].detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_python_modules_are_not_saved_as_torchscript():
    with pytest.raises(NotImplementedError, match="script or trace it first"):
        ct.jit.save(ct.nn.Linear(2, 2), io.BytesIO())


def _rewrite(data, change):
    """A copy of the archive with change(name, bytes) -> bytes or None (drop) applied to each record."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in src.namelist():
            v = change(n, src.read(n))
            if v is not None:
                z.writestr(n, v)
    return out.getvalue()


@pytest.fixture(scope="module")
def good_archive():
    torch.manual_seed(5)
    return torch_archive(torch.jit.script(nn.Sequential(nn.Linear(2, 2), nn.ReLU())))


def test_malformed_archives_raise_runtime_error(good_archive, tmp_path):
    ct_load(good_archive)   # the unmodified one loads
    bad = {
        "truncated": good_archive[: len(good_archive) // 2],
        "not a zip": b"hello world" * 10,
        "no data.pkl": _rewrite(good_archive, lambda n, v: None if n.endswith("/data.pkl") else v),
        "no constants.pkl": _rewrite(good_archive, lambda n, v: None if n.endswith("constants.pkl") else v),
        "bad pickle": _rewrite(good_archive, lambda n, v: v[:20] if n.endswith("/data.pkl") else v),
        "missing storage": _rewrite(good_archive, lambda n, v: None if n.endswith("/data/0") else v),
        "short storage": _rewrite(good_archive, lambda n, v: v[:3] if n.endswith("/data/0") else v),
        "no code": _rewrite(good_archive, lambda n, v: None if "/code/" in n else v),
        "bad code": _rewrite(good_archive, lambda n, v: b"class (:" if n.endswith(".py") else v),
        "bad version": _rewrite(good_archive, lambda n, v: b"x\n" if n.endswith("/version") else v),
    }
    for what, data in bad.items():
        with pytest.raises(RuntimeError):
            ct_load(data)
    with pytest.raises(ValueError, match="does not exist"):
        ct.jit.load(str(tmp_path / "missing.pt"))


def test_loading_never_runs_python_globals(good_archive, tmp_path):
    import pickle
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch %s" % marker,))

    evil = pickle.dumps(Evil(), protocol=2)
    data = _rewrite(good_archive, lambda n, v: evil if n.endswith("/data.pkl") else v)
    with pytest.raises(RuntimeError, match="TorchScript types"):
        ct_load(data)
    code_attack = b"class Sequential(Module):\n  def forward(self, x: Tensor) -> Tensor:\n" \
                  b"    return __import__(\"os\").system(\"touch %s\")\n" % str(marker).encode()
    data = _rewrite(good_archive, lambda n, v: code_attack if n.endswith(".py") and b"class Sequential" in v else v)
    with pytest.raises(RuntimeError, match="undefined value __import__"):   # the load compiles it: torch's error
        ct_load(data)
    assert not marker.exists()
    # format strings take only `{}`: no reaching into an argument's attributes
    leak = b"class Sequential(Module):\n  def forward(self, x: Tensor) -> str:\n" \
           b"    return torch.format(\"{} {0.__class__}\", 1, self)\n"
    m = ct_load(_rewrite(good_archive, lambda n, v: leak if n.endswith(".py") and b"class Sequential" in v else v))
    assert m(ct.ones(2)) == "1 {0.__class__}"


class CellLoop(nn.Module):
    """A scripted LSTM-cell loop over time steps, with a list and a dict."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 8)

    def forward(self, xs):
        h = torch.zeros(xs.size(1), 8)
        c = torch.zeros(xs.size(1), 8)
        outs = []
        for i in range(xs.size(0)):
            h, c = self.cell(xs[i], (h, c))
            outs.append(h)
        return torch.stack(outs), {"h": h}


def test_scripted_lstm_cell_loop_archive():
    torch.manual_seed(6)
    m = CellLoop()
    xs = torch.randn(5, 2, 4)
    cm = ct_load(torch_archive(torch.jit.script(m)))
    out, d = cm(to_ct(xs))
    ref, rd = m(xs)
    assert "aten::lstm_cell" in str(cm.cell.graph)   # aten::lstm_cell and prim::is_nested compile
    close(out, ref)
    assert list(d) == ["h"]
    close(d["h"], rd["h"])
    out.sum().backward()
    ref.sum().backward()
    close(cm.cell.weight_ih.grad, m.cell.weight_ih.grad, 1e-4)


def test_archives_of_the_documents_examples():
    def foo(len: int):
        rv = torch.zeros(3, 4)
        for i in range(len):
            if i < 10:
                rv = rv - 1.0
            else:
                rv = rv + 1.0
        return rv

    sf = torch.jit.script(foo)   # a ScriptFunction saves as a PlaceholderModule with it as forward
    cm = ct_load(torch_archive(sf))
    for n in (0, 4, 12):
        close(cm(n), sf(n))

    def fill_row_zero(x):
        x[0] = torch.rand(*x.shape[1:2])
        return x

    with pytest.warns(Warning):
        tr = torch.jit.trace(fill_row_zero, (torch.rand(3, 4),))
    cm = ct_load(torch_archive(tr))
    x = ct.zeros(3, 5)
    out = cm(x)
    assert out is x and tuple(out.shape) == (3, 5)   # size arithmetic follows the input, not the trace's
    assert (x[0] != 0).all().item() and (x[1:] == 0).all().item()


def test_errors_raised_by_script_code_are_jit_errors():
    m = torch.jit.script(nn.BatchNorm2d(3)).eval()
    cm = ct_load(torch_archive(m))
    with pytest.raises(Exception) as et:
        m(torch.zeros(2, 3, 4))
    with pytest.raises(Exception) as ec:
        cm(ct.zeros(2, 3, 4))
    assert type(ec.value).__name__ == type(et.value).__name__ == "Error"
    first, last = (lambda e: (str(e).splitlines()[0], str(e).strip().splitlines()[-1]))(et.value)
    assert str(ec.value).splitlines()[0] == first
    assert str(ec.value).strip().splitlines()[-1] == last


LAYER_CASES = {
    "gru": lambda: (nn.GRU(4, 6, num_layers=2, batch_first=True), (torch.randn(2, 5, 4),)),
    "lstm_bidirectional": lambda: (nn.LSTM(4, 6, bidirectional=True), (torch.randn(5, 2, 4),)),
    "layer_norm_gelu": lambda: (nn.Sequential(nn.LayerNorm(8), nn.GELU(), nn.Softmax(dim=1)), (torch.randn(3, 8),)),
    "conv_transpose": lambda: (nn.ConvTranspose2d(3, 4, 3, stride=2), (torch.randn(1, 3, 5, 5),)),
    "group_norm": lambda: (nn.GroupNorm(2, 4), (torch.randn(2, 4, 3),)),
    "upsample": lambda: (nn.Upsample(scale_factor=2, mode="nearest"), (torch.randn(1, 2, 3, 3),)),
    "attention": lambda: (nn.MultiheadAttention(8, 2, batch_first=True),
                          (torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 8))),
    "transformer_layer": lambda: (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                                  (torch.randn(2, 3, 8),)),
}


@pytest.mark.parametrize("kind", ["trace", "script"])
@pytest.mark.parametrize("case", sorted(LAYER_CASES))
def test_more_layers(case, kind):
    torch.manual_seed(7)
    m, args = LAYER_CASES[case]()
    m.eval()
    if kind == "script" and case in ("gru", "lstm_bidirectional"):
        # a scripted RNN has only its overloads (forward__0/forward__1): torch's loaded module has no forward
        cm = ct_load(torch_archive(torch.jit.script(m)))
        with pytest.raises(AttributeError, match="has no attribute 'forward'"):
            cm(to_ct(args[0]))
        return
    j = torch.jit.trace(m, args, check_trace=False) if kind == "trace" else torch.jit.script(m)
    cm = ct_load(torch_archive(j))
    out = cm(*[to_ct(a) for a in args])
    ref = m(*args)
    close(out, ref, 1e-5)   # attention: (output, averaged weights); RNNs: (output, state)
    assert cm._has_method("forward")   # compiled into the IR: a method that does not compile fails the load


@pytest.mark.parametrize("case", ["attention", "encoder_layer", "encoder_layer_norm_first_gelu"])
def test_loaded_attention_runs_torchs_inference_fast_path(case):
    # torch's scripted MultiheadAttention/TransformerEncoderLayer call aten::_native_multi_head_attention /
    # aten::_transformer_encoder_layer_fwd in eval mode when no gradient is wanted: the loaded module does too,
    # with torch's results (with and without a key padding mask), and the ordinary path otherwise
    torch.manual_seed(11)
    if case == "attention":
        m, op, mask_kw = nn.MultiheadAttention(8, 2, batch_first=True), "aten::_native_multi_head_attention", \
            "key_padding_mask"
    else:
        m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first="norm_first" in case,
                                       activation="gelu" if "gelu" in case else "relu")
        op, mask_kw = "aten::_transformer_encoder_layer_fwd", "src_key_padding_mask"
    m.eval()
    cm = ct_load(torch_archive(torch.jit.script(m)))
    x = torch.randn(2, 3, 8)
    pad = torch.tensor([[False, False, True], [False, False, False]])
    cx, cpad = to_ct(x), to_ct(pad)
    args, cargs = ((x, x, x), (cx, cx, cx)) if case == "attention" else ((x,), (cx,))
    for grad in (True, False):
        for kw, ckw in (({}, {}), ({mask_kw: pad}, {mask_kw: cpad})):
            with torch.set_grad_enabled(grad), ct.set_grad_enabled(grad):
                want = m(*args, **kw)
                with ct.autograd.profiler.profile() as prof:
                    got = cm(*cargs, **ckw)
            assert any(e.name == op for e in prof.function_events) == (not grad)
            close(got, want, 1e-5)


def test_loaded_encoder_names_nested_tensors_only_where_torch_uses_them():
    # TransformerEncoder's sparsity fast path makes a nested tensor: with no padding mask it is not taken; with
    # one (eval, no grad) it is, and cthtorch, which has no nested tensors, says so
    torch.manual_seed(12)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2).eval()
    cm = ct_load(torch_archive(torch.jit.script(enc)))
    x = torch.randn(2, 3, 8)
    pad = torch.tensor([[False, False, True], [False, False, False]])
    with torch.no_grad(), ct.no_grad():
        close(cm(to_ct(x)), enc(x), 1e-5)
        with pytest.raises(NotImplementedError, match="nested tensors are not implemented"):
            cm(to_ct(x), src_key_padding_mask=to_ct(pad))
    close(cm(to_ct(x), src_key_padding_mask=to_ct(pad)), enc(x, src_key_padding_mask=pad), 1e-5)   # grad on


@pytest.mark.parametrize("kind", ["trace", "script"])
def test_upsample_archives_of_every_mode(kind):
    # traces record the upsample_*.vec overloads (a size list or a scale list); scripts compile interpolate's
    # source, which names every mode's op
    torch.manual_seed(13)
    cases = [({"scale_factor": 2}, (1, 2, 3, 3)),
             ({"size": (5, 7), "mode": "bilinear", "align_corners": True}, (1, 2, 3, 4)),
             ({"scale_factor": (2.0, 1.5), "mode": "bicubic"}, (1, 2, 4, 4)),
             ({"scale_factor": 3, "mode": "linear"}, (1, 2, 5)), ({"size": 4, "mode": "nearest-exact"}, (1, 2, 3)),
             ({"scale_factor": 2, "mode": "trilinear"}, (1, 1, 2, 3, 2)), ({"size": (2, 2), "mode": "area"}, (1, 2, 5, 5))]
    for kw, shape in cases:
        m, x = nn.Upsample(**kw), torch.randn(*shape)
        j = torch.jit.trace(m, (x,)) if kind == "trace" else torch.jit.script(m)
        close(ct_load(torch_archive(j))(to_ct(x)), m(x), 1e-5)

    def aa(x):
        return nn.functional.interpolate(x, scale_factor=2, mode="bilinear", antialias=True)
    x = torch.randn(1, 2, 3, 3)
    j = torch.jit.trace(aa, (x,))
    assert "_upsample_bilinear2d_aa" in j.code
    close(ct_load(torch_archive(j))(to_ct(x)), aa(x), 1e-5)


@torch.jit.script
class Pair(object):
    """A TorchScript class: its objects are `__torch__.<module>.Pair` in data.pkl."""

    def __init__(self, a: int, b: torch.Tensor):
        self.a = a
        self.b = b

    def total(self) -> torch.Tensor:
        return self.b * self.a


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = Pair(3, torch.ones(2))
        self.names = ["a", "b"]
        self.table = {"x": 1.5}
        self.e1 = nn.Linear(2, 2)
        self.e2 = nn.Linear(2, 2)
        self.e2.weight = self.e1.weight   # tied
        self.register_buffer("bf", torch.tensor([1.5, 2.0], dtype=torch.bfloat16))
        self.register_buffer("i8", torch.tensor([-3, 4], dtype=torch.int8))
        self.register_buffer("u8", torch.tensor([200, 4], dtype=torch.uint8))

    def forward(self, x):
        return self.e2(self.e1(x)) + self.p.total() + self.table["x"] + len(self.names)


def test_script_classes_containers_and_tied_weights():
    torch.manual_seed(9)
    m = Holder()
    cm = ct_load(torch_archive(torch.jit.script(m)))
    x = torch.randn(2, 2)
    close(cm(to_ct(x)), m(x))
    assert cm.e1.weight is cm.e2.weight
    assert cm.names == ["a", "b"] and cm.table == {"x": 1.5} and cm.p.a == 3
    for k in ("bf", "i8", "u8"):
        close(getattr(cm, k), getattr(m, k), 0)
    b = io.BytesIO()
    ct.jit.save(cm, b)   # the class object is written back as a __torch__ object
    b.seek(0)
    back = torch.jit.load(b)
    close(to_ct(back(x)), m(x))
    assert back.p.a == 3


def test_map_location():
    data = torch_archive(torch.jit.script(nn.Linear(2, 2)))
    assert ct_load(data, map_location="cpu").weight.device.type == "cpu"
    assert ct_load(data, map_location=ct.device("cpu")).weight.device.type == "cpu"
    if not ct.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            ct_load(data, map_location="cuda:0")


def _kinds(graph):
    """Node kinds of a graph and its nested blocks, constants aside."""
    out = set()

    def walk(nodes):
        for n in nodes:
            if n.kind() != "prim::Constant":
                out.add(n.kind())
            for b in n.blocks():
                walk(b.nodes())
    walk(graph.nodes())
    return out


def test_loaded_modules_run_graphs_of_the_one_script_compiler(tmp_path):
    # a loaded archive's code/ goes through the script frontend: its methods are graphs (torch's node kinds
    # in .graph), run by the interpreter, and a save -> load -> save -> load round trip behaves the same
    sc_t = torch.jit.script(MyCell())
    loaded_t = torch.jit.load(io.BytesIO(torch_archive(sc_t)))
    cm = ct_load(torch_archive(sc_t))
    assert cm._has_method("forward") and cm.dg._has_method("forward") and cm.linear._has_method("forward")
    assert _kinds(cm.graph) == _kinds(loaded_t.graph)
    assert _kinds(cm.dg.graph) == _kinds(loaded_t.dg.graph)
    assert "prim::Loop" in _kinds(cm.graph) and "prim::If" in _kinds(cm.dg.graph)
    assert cm.code == loaded_t.code
    again = ct.jit.load(io.BytesIO(_saved(cm)))
    third = ct.jit.load(io.BytesIO(_saved(again)))
    assert str(third.graph) == str(again.graph) == str(cm.graph)
    x = np.random.RandomState(3).rand(3, 4).astype(np.float32)
    h = np.random.RandomState(4).rand(3, 4).astype(np.float32)
    for sign in (1, -1):
        want = sc_t(torch.tensor(sign * x), torch.tensor(h))
        for m in (cm, again, third):
            close(m(ct.tensor(sign * x), ct.tensor(h)), want)
    # a trace of a Sequential: Linear/ReLU forwards compiled too
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    tr = torch.jit.trace(seq, (torch.randn(2, 4),))
    cm = ct_load(torch_archive(tr))
    loaded_t = torch.jit.load(io.BytesIO(torch_archive(tr)))
    assert _kinds(cm.graph) == _kinds(loaded_t.graph)
    assert _kinds(getattr(cm, "0").graph) == _kinds(getattr(loaded_t, "0").graph) == {"prim::GetAttr", "aten::linear"}
    xi = torch.randn(5, 4)
    close(ct.jit.load(io.BytesIO(_saved(cm)))(to_ct(xi)), tr(xi))


def _saved(m):
    b = io.BytesIO()
    ct.jit.save(m, b)
    return b.getvalue()


class CtCellLoop(ct.nn.Module):
    """The LSTM-cell loop of the acceptance list, built and scripted in cthtorch."""

    def __init__(self):
        super().__init__()
        self.cell = ct.nn.LSTMCell(4, 8)

    def forward(self, xs, h):
        c = ct.zeros_like(h)
        for i in range(xs.size(0)):
            h, c = self.cell(xs[i], (h, c))
        return h, c


def test_traced_resnet18_and_scripted_lstm_loop_round_trip_through_a_fresh_process(tmp_path):
    # the acceptance list's models, made in cthtorch: saved, loaded back here (outputs and gradients equal to
    # eager) and in a process that has neither their Python classes nor torch (outputs equal to eager)
    from cthtorch.vision.models import resnet18
    ct.manual_seed(21)
    net = resnet18(num_classes=10).eval()
    img = ct.rand(1, 3, 32, 32)
    loop = CtCellLoop()
    xs, h = ct.randn(5, 2, 4), ct.randn(2, 8)
    paths = {"resnet": tmp_path / "resnet18.pt", "loop": tmp_path / "loop.pt"}
    ct.jit.save(ct.jit.trace(net, img, check_trace=False), str(paths["resnet"]))
    ct.jit.save(ct.jit.script(loop), str(paths["loop"]))
    for name, model, args in (("resnet", net, (img,)), ("loop", loop, (xs, h))):
        loaded = ct.jit.load(str(paths[name]))
        leaves = [a.detach().clone().requires_grad_() for a in args]
        eager_leaves = [a.detach().clone().requires_grad_() for a in args]
        got, want = loaded(*leaves), model(*eager_leaves)
        got, want = (got[0], want[0]) if isinstance(want, tuple) else (got, want)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
        got.pow(2).sum().backward()
        want.pow(2).sum().backward()
        np.testing.assert_allclose(leaves[0].grad.numpy(), eager_leaves[0].grad.numpy(), rtol=1e-4, atol=1e-5)
        for (n, p), (_, q) in zip(loaded.named_parameters(), model.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
        model.zero_grad()
    for i, a in enumerate((img, xs, h)):
        np.save(tmp_path / ("a%d.npy" % i), a.numpy())
    script = ("import sys, numpy as np, cthtorch as ct\n"
              "assert 'torch' not in sys.modules\n"
              "d = sys.argv[1]\n"
              "a = [ct.from_numpy(np.load('%s/a%d.npy' % (d, i))) for i in range(3)]\n"
              "np.save(d + '/resnet_out.npy', ct.jit.load(d + '/resnet18.pt')(a[0]).detach().numpy())\n"
              "np.save(d + '/loop_out.npy', ct.jit.load(d + '/loop.pt')(a[1], a[2])[0].detach().numpy())\n"
              "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO, check=True, timeout=300)
    with ct.no_grad():
        np.testing.assert_allclose(np.load(tmp_path / "resnet_out.npy"), net(img).numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.load(tmp_path / "loop_out.npy"), loop(xs, h)[0].numpy(), rtol=1e-5, atol=1e-5)


def test_traced_lambda_is_named_as_torch_names_it_and_its_archive_loads_both_ways():
    """A traced lambda is torch's `_lambda` (`<lambda>` is no identifier: its code and archive
    would not parse), qualified by its module; archives go both ways between the libraries."""
    ct_fn = ct.jit.trace(lambda a: a + 1, ct.randn(3))
    t_fn = torch.jit.trace(lambda a: a + 1, torch.randn(3))
    assert (ct_fn.name, ct_fn.qualified_name) == (t_fn.name, t_fn.qualified_name) \
        == ("_lambda", "__torch__.test_jit_archive._lambda")
    assert ct_fn.code == t_fn.code
    x = torch.randn(3)
    b = io.BytesIO()
    ct.jit.save(ct_fn, b)
    close(ct_load(b.getvalue())(to_ct(x)), x + 1)
    b.seek(0)
    close(torch.jit.load(b)(x), x + 1)
    b = io.BytesIO()
    torch.jit.save(t_fn, b)
    close(ct_load(b.getvalue())(to_ct(x)), x + 1)
    # a named function of two arguments and one of none go the same ways
    def two(a, c):
        return a * 2 - c
    x2 = torch.randn(3)
    b = io.BytesIO()
    ct.jit.save(ct.jit.trace(two, (to_ct(x), to_ct(x2))), b)
    close(ct_load(b.getvalue())(to_ct(x), to_ct(x2)), two(x, x2))
    b.seek(0)
    close(torch.jit.load(b)(x, x2), two(x, x2))
