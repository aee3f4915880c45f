"""cthtorch.nn.modules mirrors torch.nn.modules file by file: every public class torch keeps in
torch.nn.modules.<file> lives in cthtorch.nn.modules.<file> (its __module__ says so), so programs that
name those paths (safe_globals lists, isinstance checks, pickled models) run unchanged."""
import importlib
import inspect
import io
import pkgutil

import pytest

import cthtorch
import cthtorch.nn as nn
from oracle import require_torch

torch = require_torch()

# (file, class) torch has and cthtorch does not, each with its reason; kept short on purpose
ALLOWED_GAPS = {}


def _torch_public_classes():
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module("torch.nn.modules." + info.name)
        for name, obj in sorted(vars(mod).items()):
            if inspect.isclass(obj) and obj.__module__ == mod.__name__ and not name.startswith("_"):
                yield info.name, name, obj


TORCH_CLASSES = list(_torch_public_classes())


def test_gap_list_is_small_and_real():
    assert len(ALLOWED_GAPS) <= 2
    have = {(f, n) for f, n, _ in TORCH_CLASSES}
    for key in ALLOWED_GAPS:
        assert key in have, "stale gap %s: torch no longer has it" % (key,)


@pytest.mark.parametrize("file,name", [(f, n) for f, n, _ in TORCH_CLASSES], ids=lambda v: v)
def test_class_lives_in_torchs_file(file, name):
    if (file, name) in ALLOWED_GAPS:
        pytest.skip(ALLOWED_GAPS[(file, name)])
    mod = importlib.import_module("cthtorch.nn.modules." + file)
    cls = getattr(mod, name)
    assert inspect.isclass(cls)
    assert cls.__module__ == "cthtorch.nn.modules." + file
    assert cls.__qualname__ == name
    # the same object through every public spelling
    if name in torch.nn.modules.__all__:
        assert getattr(nn.modules, name) is cls
    if hasattr(torch.nn, name):
        assert getattr(nn, name) is cls


def test_public_bases_match_torch():
    # isinstance answers as in torch: the public classes above a class are torch's (SiLU is not a ReLU)
    def public_mro(cls, root):
        return [c.__name__ for c in cls.__mro__ if not c.__name__.startswith("_") and c.__module__.startswith(root)]
    wrong = []
    for file, name, tcls in TORCH_CLASSES:
        if (file, name) in ALLOWED_GAPS:
            continue
        ccls = getattr(importlib.import_module("cthtorch.nn.modules." + file), name)
        if public_mro(ccls, "cthtorch.nn") != public_mro(tcls, "torch.nn"):
            wrong.append((name, public_mro(ccls, "cthtorch.nn"), public_mro(tcls, "torch.nn")))
    assert wrong == []


def test_modules_all_and_no_catch_all_files():
    missing = sorted(set(torch.nn.modules.__all__) - set(nn.modules.__all__) - {n for _, n in ALLOWED_GAPS})
    assert missing == []
    ours = {info.name for info in pkgutil.iter_modules(nn.modules.__path__)}
    theirs = {info.name for info in pkgutil.iter_modules(torch.nn.modules.__path__)}
    assert ours - theirs == set()      # no layers.py / misc.py / *_more.py of our own
    for old in ("layers", "misc", "loss_more", "conv3d", "embedding_bag"):
        with pytest.raises(ImportError):
            importlib.import_module("cthtorch.nn.modules." + old)


def test_functional_files_by_family():
    import cthtorch.nn.functional as F
    names = [info.name for info in pkgutil.iter_modules(nn.__path__)]
    assert not [n for n in names if n.startswith("_F_")]
    for name in ("ctc_loss", "grid_sample", "affine_grid", "embedding_bag", "conv3d", "avg_pool3d", "pdist",
                 "local_response_norm", "channel_shuffle", "multi_head_attention_forward", "elu_", "rms_norm"):
        assert callable(getattr(F, name)), name
    assert F.conv3d.__module__ == "cthtorch.nn._functional.conv"
    assert F.ctc_loss.__module__ == "cthtorch.nn._functional.loss"


def test_non_dynamically_quantizable_linear():
    m = nn.MultiheadAttention(8, 2)
    assert type(m.out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    assert isinstance(m.out_proj, nn.Linear)
    assert repr(m.out_proj) == repr(torch.nn.MultiheadAttention(8, 2).out_proj)


def test_container_is_deprecated_module():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = nn.Container(a=nn.ReLU())
    assert list(dict(c.named_children())) == ["a"]


def test_conv_transpose_output_size():
    for nd in (1, 2, 3):
        kw = dict(in_channels=2, out_channels=3, kernel_size=3, stride=2, padding=1)
        tm = getattr(torch.nn, "ConvTranspose%dd" % nd)(**kw).double()
        cm = getattr(nn, "ConvTranspose%dd" % nd)(**kw).double()
        with cthtorch.no_grad():
            cm.weight.copy_(cthtorch.tensor(tm.weight.detach().numpy()))
            cm.bias.copy_(cthtorch.tensor(tm.bias.detach().numpy()))
        x = torch.randn(1, 2, *([4] * nd), dtype=torch.float64)
        xc = cthtorch.tensor(x.numpy())
        size = [8] * nd
        yt, yc = tm(x, output_size=size), cm(xc, output_size=size)
        assert tuple(yc.shape) == tuple(yt.shape) == (1, 3, *size)
        assert (yc - cthtorch.tensor(yt.detach().numpy())).abs().max().item() < 1e-10
        with pytest.raises(ValueError) as et:
            tm(x, output_size=[20] * nd)
        with pytest.raises(ValueError) as ec:
            cm(xc, output_size=[20] * nd)
        assert str(ec.value) == str(et.value)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose1d'):
        nn.ConvTranspose1d(2, 2, 3, padding_mode="reflect")


def test_cross_map_lrn2d_forward():
    for channels in (1, 2, 7):
        for size in (1, 2, 3, 4, 9):
            x = torch.randn(2, channels, 3, 4, dtype=torch.float64)
            want = torch.nn.CrossMapLRN2d(size, 0.1, 0.75, 2)(x)
            got = nn.CrossMapLRN2d(size, 0.1, 0.75, 2)(cthtorch.tensor(x.numpy()))
            assert abs(got.numpy() - want.numpy()).max() < 1e-12
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        nn.CrossMapLRN2d(3)(cthtorch.ones(2, 3, 4))
    x = cthtorch.randn(1, 5, 2, 2, dtype=cthtorch.float64, requires_grad=True)
    assert cthtorch.autograd.gradcheck(lambda t: nn.CrossMapLRN2d(3, 0.1)(t), (x,))


# ---- full-model pickling (pytorch/examples' word_language_model: torch.save(model), then torch.load under
# torch.serialization.safe_globals naming torch.nn.modules.<file>.<Class>)
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=50):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = cthtorch.zeros(max_len, d_model)
        position = cthtorch.arange(0, max_len, dtype=cthtorch.float).unsqueeze(1)
        div_term = cthtorch.exp(cthtorch.arange(0, d_model, 2).float() * (-9.2103 / d_model))
        pe[:, 0::2] = cthtorch.sin(position * div_term)
        pe[:, 1::2] = cthtorch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        return nn.functional.log_softmax(self.decoder(self.drop(output)), dim=-1), hidden

    def init_hidden(self, bsz):
        h = cthtorch.zeros(self.nlayers, bsz, self.nhid)
        return (h, h.clone()) if self.rnn_type == "LSTM" else h


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src):
        src = self.pos_encoder(self.input_emb(src) * 2.0)
        return nn.functional.log_softmax(self.decoder(self.encoder(src, mask=self.src_mask)), dim=-1)


WORD_LANGUAGE_MODEL_SAFE = [
    RNNModel, TransformerModel, PositionalEncoding,
    cthtorch.nn.modules.dropout.Dropout,
    cthtorch.nn.modules.sparse.Embedding,
    cthtorch.nn.modules.linear.Linear,
    cthtorch.nn.modules.linear.NonDynamicallyQuantizableLinear,
    cthtorch.nn.modules.activation.MultiheadAttention,
    cthtorch.nn.modules.container.ModuleList,
    cthtorch.nn.modules.normalization.LayerNorm,
    cthtorch.nn.modules.rnn.LSTM, cthtorch.nn.modules.rnn.GRU, cthtorch.nn.modules.rnn.RNN,
    cthtorch.nn.modules.transformer.TransformerEncoder, cthtorch.nn.modules.transformer.TransformerEncoderLayer,
    cthtorch.nn.modules.transformer.TransformerDecoder, cthtorch.nn.modules.transformer.TransformerDecoderLayer,
    cthtorch.nn.functional.relu,
]


def _roundtrip(model, **kw):
    buf = io.BytesIO()
    cthtorch.save(model, buf)
    buf.seek(0)
    return cthtorch.load(buf, **kw)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN_TANH", "Transformer"])
def test_word_language_model_safe_globals(kind):
    cthtorch.manual_seed(0)
    if kind == "Transformer":
        model = TransformerModel(11, 8, 2, 16, 2, dropout=0.2).eval()
        run = lambda m, x: m(x)                                          # noqa: E731
    else:
        model = RNNModel("RNN" if kind == "RNN_TANH" else kind, 11, 8, 8, 2, dropout=0.2).eval()
        run = lambda m, x: m(x, m.init_hidden(3))[0]                     # noqa: E731
    x = cthtorch.randint(0, 11, (5, 3))
    with pytest.raises(Exception, match="Weights only load failed"):
        _roundtrip(model)
    before = cthtorch.serialization.get_safe_globals()
    with cthtorch.serialization.safe_globals(WORD_LANGUAGE_MODEL_SAFE):
        loaded = _roundtrip(model)
    assert cthtorch.serialization.get_safe_globals() == before
    assert type(loaded) is type(model)
    assert [type(m) for m in loaded.modules()] == [type(m) for m in model.modules()]
    assert cthtorch.equal(run(loaded, x), run(model, x))


def test_full_model_pickle_names_torch_paths():
    # the file names torch.nn.modules.<file>.<Class>: torch.load rebuilds torch's classes from cthtorch's file,
    # and cthtorch.load rebuilds cthtorch's classes from torch's
    import numpy as np
    cthtorch.manual_seed(0)
    cm = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 4),
                       nn.LayerNorm(4), nn.Dropout(0.5)).eval()
    buf = io.BytesIO()
    cthtorch.save(cm, buf)
    buf.seek(0)
    tm = torch.load(buf, weights_only=False)
    assert [type(m).__module__ + "." + type(m).__name__ for m in tm.modules()] == \
        ["torch" + type(m).__module__[len("cthtorch"):] + "." + type(m).__name__ for m in cm.modules()]
    x = np.random.RandomState(0).randn(2, 2, 4, 4).astype("float32")
    assert abs(tm(torch.tensor(x)).detach().numpy() - cm(cthtorch.tensor(x)).detach().numpy()).max() < 1e-5

    buf = io.BytesIO()
    torch.save(tm, buf)
    buf.seek(0)
    back = cthtorch.load(buf, weights_only=False)
    assert [type(m) for m in back.modules()] == [type(m) for m in cm.modules()]
    assert abs(back(cthtorch.tensor(x)).detach().numpy() - cm(cthtorch.tensor(x)).detach().numpy()).max() < 1e-6
    buf.seek(0)
    with cthtorch.serialization.safe_globals([nn.Sequential, nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.Flatten,
                                              nn.Linear, nn.LayerNorm, nn.Dropout]):
        assert type(cthtorch.load(buf)[1]) is nn.modules.batchnorm.BatchNorm2d


def test_add_safe_globals_named_tuple_form():
    cthtorch.serialization.clear_safe_globals()
    try:
        cthtorch.serialization.add_safe_globals([(nn.ReLU, "old.place.ReLU")])
        assert cthtorch.serialization.get_safe_globals() == [(nn.ReLU, "old.place.ReLU")]
        with pytest.raises(ValueError):
            cthtorch.serialization.add_safe_globals([(nn.ReLU,)])
    finally:
        cthtorch.serialization.clear_safe_globals()


def test_public_functions_live_in_torchs_file():
    missing = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_") or info.name.startswith("linear_cross_entropy"):
            continue
        tmod = importlib.import_module("torch.nn.modules." + info.name)
        cmod = importlib.import_module("cthtorch.nn.modules." + info.name)
        for name, obj in vars(tmod).items():
            if inspect.isfunction(obj) and obj.__module__ == tmod.__name__ and not name.startswith("_"):
                if not callable(getattr(cmod, name, None)):
                    missing.append(info.name + "." + name)
    assert missing == []


def _global_hook_log(lib):
    M = lib.nn.modules.module
    log = []
    handles = [
        M.register_module_buffer_registration_hook(lambda m, n, b: log.append(("buf", type(m).__name__, n))),
        M.register_module_module_registration_hook(lambda m, n, c: log.append(("mod", type(m).__name__, n))),
        M.register_module_parameter_registration_hook(lambda m, n, p: log.append(("par", type(m).__name__, n))),
        M.register_module_full_backward_hook(lambda m, gi, go: log.append(("bw", type(m).__name__, len(gi)))),
        M.register_module_full_backward_pre_hook(lambda m, go: log.append(("bwpre", type(m).__name__, len(go)))),
    ]
    try:
        s = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        s.extra = lib.nn.ReLU()
        s.extra.register_full_backward_hook(lambda m, gi, go: log.append(("own", type(m).__name__, len(gi))))
        s(lib.ones(4, 2, requires_grad=True)).sum().backward()
        with pytest.raises(RuntimeError) as e:
            M.register_module_backward_hook(lambda *a: None)
        log.append(str(e.value))
    finally:
        for h in handles:
            h.remove()
        M._global_is_full_backward_hook = None
    return log


def test_global_module_hooks_as_torch():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _global_hook_log(cthtorch) == _global_hook_log(torch)
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(cthtorch.ones(1))


def test_state_dict_prefix_and_apply_permutation():
    import collections
    cm = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    sd = collections.OrderedDict(("module." + k, v) for k, v in cm.state_dict().items())
    sd._metadata = collections.OrderedDict([("", {}), ("module", {"version": 1}), ("module.1", {"version": 2})])
    nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == list(cm.state_dict())
    assert list(sd._metadata.items()) == [("", {"version": 1}), ("1", {"version": 2})]
    cm.load_state_dict(sd)
    with pytest.warns(FutureWarning, match="apply_permutation` is deprecated"):
        out = nn.modules.rnn.apply_permutation(cthtorch.arange(6).view(2, 3), cthtorch.tensor([2, 0, 1]))
    assert out.tolist() == [[2, 0, 1], [5, 3, 4]]


def test_linear_cross_entropy_loss():
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    assert repr(opts) == repr(torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    for bad in (dict(acc_policy="x"), dict(chunking_method="rows"), dict(batch_chunk_size=0)):
        with pytest.raises(ValueError) as et:
            torch.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError) as ec:
            nn.LinearCrossEntropyOptions(**bad)
        assert str(ec.value) == str(et.value)
    for kw, tshape in ((dict(), (6,)), (dict(out_features=(2, 3), bias=True), (6, 2, 3)),
                       (dict(bias=True, reduction="sum", label_smoothing=0.1, ignore_index=1), (6,)),
                       (dict(options=None, reduction="none"), (6,))):
        tm = torch.nn.LinearCrossEntropyLoss(5, 4, **kw).double()
        cm = nn.LinearCrossEntropyLoss(5, 4, **kw).double()
        assert repr(cm) == repr(tm)
        cm.load_state_dict({k: cthtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
        x = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
        target = torch.randint(0, 4, tshape)
        xc = cthtorch.tensor(x.detach().numpy(), requires_grad=True)
        lt, lc = tm(x, target), cm(xc, cthtorch.tensor(target.numpy()))
        assert abs(lc.detach().numpy() - lt.detach().numpy()).max() < 1e-12
        lt.sum().backward()
        lc.sum().backward()
        assert abs(xc.grad.numpy() - x.grad.numpy()).max() < 1e-12
        assert abs(cm.linear.weight.grad.numpy() - tm.linear.weight.grad.numpy()).max() < 1e-12
    x = cthtorch.randn(3, 5, dtype=cthtorch.float64, requires_grad=True)
    w = cthtorch.randn(4, 5, dtype=cthtorch.float64, requires_grad=True)
    t = cthtorch.tensor([0, 3, 1])
    assert cthtorch.autograd.gradcheck(lambda a, b: nn.functional.linear_cross_entropy(a, b, t), (x, w))
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        nn.functional.linear_cross_entropy(cthtorch.ones(1, 1, 5), cthtorch.ones(4, 5), t)
