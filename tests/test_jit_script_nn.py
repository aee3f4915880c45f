"""torch.jit.script of torch.nn's own modules (recurrent, attention, transformer, embedding,
upsampling, adaptive pooling, transposed convolution), alone and held by a user module: outputs
equal to eager, close to torch.jit.script of the same torch module, `.code`/`.graph` naming
torch's ops, and archives that load in cthtorch and in torch."""
import io
import re
from typing import Optional

import numpy as np
import pytest

import cthtorch
from cthtorch import nn
from tests.oracle import require_torch

torch = require_torch()

RS = np.random.RandomState(0)


def pair(name, *args, **kw):
    """cthtorch's and torch's module of one kind with the same weights (eval mode: no dropout)."""
    t = getattr(torch.nn, name)(*args, **kw).eval()
    c = getattr(nn, name)(*args, **kw).eval()
    c.load_state_dict({k: cthtorch.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return c, t


class _Holder(torch.nn.Module):
    # torch's scripted nn.LSTM has only its overloads (forward__0/1) at top level: a holder calls it
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)


def flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in flat(x)]
    return [] if out is None else [out]


def assert_same(scripted, eager, traced_torch=None):
    a, e = flat(scripted), flat(eager)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        assert cthtorch.equal(x, y)
    if traced_torch is not None:
        b = flat(traced_torch)
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-6)


def roundtrip(sm):
    buf = io.BytesIO()
    cthtorch.jit.save(sm, buf)
    return buf.getvalue()


RECURRENT = [
    ("LSTM", (4, 5), {"num_layers": 2}),
    ("LSTM", (4, 5), {"bidirectional": True, "batch_first": True}),
    ("LSTM", (4, 5), {"proj_size": 3}),
    ("GRU", (4, 5), {"num_layers": 2, "bidirectional": True}),
    ("RNN", (4, 5), {"nonlinearity": "relu"}),
    ("RNN", (4, 5), {"bias": False}),
]


@pytest.mark.parametrize("name, args, kw", RECURRENT, ids=["%s%d" % (r[0], i) for i, r in enumerate(RECURRENT)])
def test_recurrent_layers_match_eager_and_torch(name, args, kw):
    c, t = pair(name, *args, **kw)
    sc, st = cthtorch.jit.script(c), torch.jit.script(_Holder(t))
    x = RS.randn(3, 2, 4).astype(np.float32)
    assert_same(sc(cthtorch.tensor(x)), c(cthtorch.tensor(x)), st(torch.tensor(x)))
    assert_same(sc(cthtorch.tensor(x[:, 0])), c(cthtorch.tensor(x[:, 0])), st(torch.tensor(x[:, 0])))   # unbatched
    op = {"LSTM": "lstm", "GRU": "gru"}.get(name, "rnn_" + kw.get("nonlinearity", "tanh"))
    inlined = str(sc._get_method("forward").inlined_graph)
    assert "aten::%s(" % op in inlined
    assert [o for o in ("lstm", "gru", "rnn_tanh", "rnn_relu") if "aten::%s(" % o in inlined] == [op] or \
        name == "RNN"    # RNN's graph holds both nonlinearities behind its mode's test
    if name == "LSTM":
        assert "torch.lstm(" in sc.code


def test_recurrent_given_state_and_gradients():
    c, t = pair("LSTM", 4, 5, num_layers=2)
    sc = cthtorch.jit.script(c)
    x = cthtorch.tensor(RS.randn(3, 2, 4).astype(np.float32), requires_grad=True)
    h = cthtorch.tensor(RS.randn(2, 2, 5).astype(np.float32))
    cc = cthtorch.tensor(RS.randn(2, 2, 5).astype(np.float32))
    out, (hn, cn) = sc(x, (h, cc))
    ref, (hr, cr) = c(x, (h, cc))
    tout, (th, tc) = t(to_t(x), (to_t(h), to_t(cc)))
    assert_same((out, hn, cn), (ref, hr, cr), (tout, th, tc))
    wrt = [x, c.weight_hh_l0, c.bias_ih_l1]
    g1 = cthtorch.autograd.grad((out.sum() + cn.sum()), wrt)
    g2 = cthtorch.autograd.grad((ref.sum() + cr.sum()), wrt)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    g = cthtorch.jit.script(nn.GRU(4, 5))
    with pytest.raises(ValueError, match=r"^GRU: Expected input to be 2D or 3D, got 4D instead$"):
        g(cthtorch.zeros(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 5"):
        g(cthtorch.zeros(2, 3, 5))


def to_t(x):
    return torch.from_numpy(x.detach().numpy().copy())


class Tagger(nn.Module):
    """A user module whose methods name their first parameter `s` (TorchScript does not require `self`)."""

    def __init__(s):
        super().__init__()
        s.emb = nn.Embedding(10, 4)
        s.rnn = nn.LSTM(4, 5, batch_first=True)
        s.gru = nn.GRU(5, 3)
        s.fc = nn.Linear(3, 2)

    def forward(s, idx):
        y, (h, c) = s.rnn(s.emb(idx))
        z, _ = s.gru(y)
        return s.fc(z[:, -1])


def test_module_holding_recurrent_layers_code_and_archives():
    m = Tagger()
    sm = cthtorch.jit.script(m)
    idx = cthtorch.tensor([[1, 2, 3, 9], [0, 4, 4, 8]])
    assert_same(sm(idx), m(idx))
    assert sm.code.startswith("def forward(s,\n")
    assert str(sm.graph).startswith("graph(%s : __torch__.")
    assert "torch.lstm(" in sm.rnn.code and "torch.gru(" in sm.gru.code
    data = roundtrip(sm)
    loaded = cthtorch.jit.load(io.BytesIO(data))
    assert_same(loaded(idx), m(idx))
    # the loaded LSTM's weight list holds its Parameters, so training the loaded module reaches them
    assert loaded.rnn._flat_weights[0] is loaded.rnn.weight_ih_l0
    tl = torch.jit.load(io.BytesIO(data))                      # torch reads our archive (typed lists)
    assert_same(m(idx), m(idx), tl(to_t(idx)))


def test_flat_weights_follow_the_parameters():
    m = nn.LSTM(3, 4)
    m.double()
    assert all(w.dtype == cthtorch.float64 for w in m._flat_weights)
    new = nn.Parameter(cthtorch.zeros(16, 4, dtype=cthtorch.float64))
    m.weight_hh_l0 = new
    assert m._flat_weights[1] is new
    sm = cthtorch.jit.script(m)
    x = cthtorch.randn(2, 1, 3, dtype=cthtorch.float64)
    assert_same(sm(x), m(x))


PACKED = [
    ("LSTM", (4, 5), {"num_layers": 2, "bidirectional": True}),
    ("LSTM", (4, 5), {"proj_size": 3}),
    ("GRU", (4, 5), {"num_layers": 2}),
    ("RNN", (4, 5), {"nonlinearity": "relu", "bidirectional": True}),
]


def _packed(lib, x, lengths, sorted_):
    return lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=sorted_)


@pytest.mark.parametrize("name, args, kw", PACKED, ids=["%s%d" % (r[0], i) for i, r in enumerate(PACKED)])
def test_recurrent_packed_sequence_overload(name, args, kw):
    # torch scripts the PackedSequence forward as forward__1 (aten::<op>.data over data and batch_sizes)
    c, t = pair(name, *args, **kw)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    assert "forward__1" in sc._method_names() and "forward__1" in st._c._method_names()
    x = RS.randn(5, 3, 4).astype(np.float32)
    op = {"LSTM": "lstm", "GRU": "gru"}.get(name, "rnn_" + kw.get("nonlinearity", "tanh"))
    code = sc.forward__1.code
    assert code.startswith("def forward__1(self,\n    input: __torch__.torch.nn.utils.rnn.PackedSequence,")
    assert "torch.%s(data, batch_sizes, " % op in code
    assert "NamedTuple(data : Tensor, batch_sizes : Tensor, sorted_indices : Tensor?, unsorted_indices : Tensor?)" \
        in str(sc.forward__1.graph)
    for lengths, sorted_ in (([5, 3, 2], True), ([2, 5, 3], False)):
        cx = cthtorch.tensor(x, requires_grad=True)
        p = _packed(cthtorch, cx, lengths, sorted_)
        out, st_c = sc.forward__1(p)
        ref, st_e = c(p)
        assert type(out) is type(ref)
        assert cthtorch.equal(out.batch_sizes, ref.batch_sizes)
        assert (out.sorted_indices is None) == sorted_ and (out.unsorted_indices is None) == sorted_
        assert_same((out.data, st_c), (ref.data, st_e),
                    (lambda o: (o[0].data, o[1]))(st.forward__1(_packed(torch, torch.tensor(x), lengths, sorted_))))
        assert_same(sc(p), c(p))              # a call from Python takes the overload that fits its input
        assert_same(sc.forward__0(cx), c(cx))  # torch's name of the Tensor overload
        hs = st_c if name != "LSTM" else st_c[0].sum() + st_c[1].sum()
        he = st_e if name != "LSTM" else st_e[0].sum() + st_e[1].sum()
        g1 = cthtorch.autograd.grad(out.data.sum() + hs.sum(), [cx, c.weight_hh_l0], retain_graph=True)
        g2 = cthtorch.autograd.grad(ref.data.sum() + he.sum(), [cx, c.weight_hh_l0])
        for a, b in zip(g1, g2):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    # a given state is put in the sequence's sorted order and back
    p = _packed(cthtorch, cthtorch.tensor(x), [2, 5, 3], False)
    n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h0 = cthtorch.tensor(RS.randn(n, 3, kw.get("proj_size") or 5).astype(np.float32))
    hx = (h0, cthtorch.tensor(RS.randn(n, 3, 5).astype(np.float32))) if name == "LSTM" else h0
    assert_same(sc.forward__1(p, hx), c(p, hx))


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_packed_overload_archives_both_ways(name):
    # ours: code/ declares `class PackedSequence(NamedTuple)` as torch writes it, torch runs forward__1;
    # torch's: forward__1 compiles into our IR (annotate(int, tensor) is torch's implicit conversion)
    c, t = pair(name, 4, 5, bidirectional=True)
    x = RS.randn(5, 3, 4).astype(np.float32)
    p = _packed(cthtorch, cthtorch.tensor(x), [2, 5, 3], False)
    tp = _packed(torch, torch.tensor(x), [2, 5, 3], False)
    ref = c(p)
    data = roundtrip(cthtorch.jit.script(c))
    import zipfile
    assert zipfile.ZipFile(io.BytesIO(data)).read("archive/code/__torch__/torch/nn/utils/rnn.py").decode() == (
        "class PackedSequence(NamedTuple):\n  data : Tensor\n  batch_sizes : Tensor\n"
        "  sorted_indices : Optional[Tensor]\n  unsorted_indices : Optional[Tensor]\n")
    ours = cthtorch.jit.load(io.BytesIO(data))
    assert ours._has_method("forward__1")
    out = ours.forward__1(p)
    assert type(out[0]) is type(ref[0])
    assert_same((out[0].data, out[1]), (ref[0].data, ref[1]))
    b = torch.jit.load(io.BytesIO(data)).forward__1(tp)
    assert_same((ref[0].data, ref[1]), (ref[0].data, ref[1]), (b[0].data, b[1]))
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(t), buf)
    theirs = cthtorch.jit.load(io.BytesIO(buf.getvalue()))
    assert theirs._has_method("forward__1")
    out = theirs.forward__1(p)
    assert_same((out[0].data, out[1]), (out[0].data, out[1]), (t(tp)[0].data, t(tp)[1]))


class _PackedHolder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 5, bidirectional=True)

    def forward(self, p: cthtorch.nn.utils.rnn.PackedSequence, h: Optional[cthtorch.Tensor] = None):
        out, h_n = self.rnn(p, h)
        y, _ = self.rnn(out.data.unsqueeze(1)[:, :, :4])    # the Tensor overload from the same caller
        return out.data + 1, h_n, y


def test_scripted_caller_picks_the_packed_overload():
    m = _PackedHolder()
    sm = cthtorch.jit.script(m)
    g = str(sm.graph)
    assert re.search(r'prim::CallMethod\[name="forward__1"\]\(%rnn[.0-9]*, %p[.0-9]*, %h[.0-9]*\)', g)
    assert 'prim::CallMethod[name="forward"]' in g
    assert "(rnn).forward__1(p, h, )" in sm.code
    p = cthtorch.nn.utils.rnn.pack_padded_sequence(cthtorch.tensor(RS.randn(4, 2, 4).astype(np.float32)), [4, 2])
    assert_same(sm(p), m(p))


MHA = [{}, {"batch_first": True}, {"kdim": 6, "vdim": 5}]


@pytest.mark.parametrize("kw", MHA, ids=["plain", "batch_first", "kdim_vdim"])
def test_multihead_attention_matches_eager_and_torch(kw):
    c, t = pair("MultiheadAttention", 8, 2, **kw)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    L, S, N = 3, 4, 2
    shape = (lambda n, l, e: (n, l, e)) if kw.get("batch_first") else (lambda n, l, e: (l, n, e))
    q = RS.randn(*shape(N, L, 8)).astype(np.float32)
    k = RS.randn(*shape(N, S, kw.get("kdim", 8))).astype(np.float32)
    v = RS.randn(*shape(N, S, kw.get("vdim", 8))).astype(np.float32)
    kpm = np.array([[False, False, True, False], [False] * 4])
    for extra in ({}, {"need_weights": False}, {"key_padding_mask": kpm, "average_attn_weights": False}):
        ce = {n: cthtorch.tensor(a) if isinstance(a, np.ndarray) else a for n, a in extra.items()}
        te = {n: torch.tensor(a) if isinstance(a, np.ndarray) else a for n, a in extra.items()}
        args_c = [cthtorch.tensor(a) for a in (q, k, v)]
        a, e = sc(*args_c, **ce), c(*args_c, **ce)
        b = st(*[torch.tensor(a) for a in (q, k, v)], **te)
        assert (a[1] is None) == (b[1] is None)
        assert_same(a, e, b)
    if not kw:   # self-attention (one tensor) takes the packed projection
        x = cthtorch.tensor(q)
        assert_same(sc(x, x, x), c(x, x, x))
        data = roundtrip(sc)
        assert_same(cthtorch.jit.load(io.BytesIO(data))(x, x, x), c(x, x, x))
        assert_same(c(x, x, x), c(x, x, x), torch.jit.load(io.BytesIO(data))(to_t(x), to_t(x), to_t(x)))


def test_multihead_attention_without_bias_scripts():
    # torch's own forward reads self.in_proj_bias.dtype and does not compile here; ours does
    m = nn.MultiheadAttention(8, 2, bias=False)
    x = cthtorch.randn(3, 2, 8)
    assert_same(cthtorch.jit.script(m)(x, x, x), m(x, x, x))


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "activation": "gelu", "batch_first": True}],
                         ids=["post_norm_relu", "pre_norm_gelu"])
@pytest.mark.parametrize("stack", [False, True], ids=["layer", "encoder"])
def test_transformer_encoder_matches_eager_and_torch(kw, stack):
    c, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, **kw)
    if stack:
        c = nn.TransformerEncoder(c, 2, norm=nn.LayerNorm(8)).eval()
        t = torch.nn.TransformerEncoder(t, 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).eval()
        c.norm.load_state_dict({k: cthtorch.tensor(v.numpy()) for k, v in t.norm.state_dict().items()})
        for cl, tl in zip(c.layers, t.layers):
            cl.load_state_dict({k: cthtorch.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    x = RS.randn(3, 2, 8).astype(np.float32)
    kpm = np.zeros((3, 2) if kw.get("batch_first") else (2, 3), dtype=bool)
    kpm[0, -1] = True
    assert_same(sc(cthtorch.tensor(x), src_key_padding_mask=cthtorch.tensor(kpm)),
                c(cthtorch.tensor(x), src_key_padding_mask=cthtorch.tensor(kpm)),
                st(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)))
    if stack:
        data = roundtrip(sc)
        assert_same(cthtorch.jit.load(io.BytesIO(data))(cthtorch.tensor(x)), c(cthtorch.tensor(x)),
                    torch.jit.load(io.BytesIO(data))(torch.tensor(x)))


LAYERS = [
    ("Embedding", (10, 4), {}, "int"),
    ("Embedding", (10, 4), {"padding_idx": -2}, "int"),
    ("Upsample", (), {"scale_factor": 2}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": True}, (1, 2, 3, 4)),
    ("Upsample", (), {"scale_factor": (2.0, 1.5), "mode": "bicubic"}, (1, 2, 4, 4)),
    ("AdaptiveMaxPool2d", (3,), {}, (1, 2, 7, 8)),
    ("AdaptiveMaxPool2d", ((2, 3),), {"return_indices": True}, (1, 2, 7, 8)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 5, 4, 4)),
    ("AdaptiveMaxPool1d", (3,), {"return_indices": True}, (1, 2, 7)),
    ("ConvTranspose2d", (2, 3, 3), {"stride": 2, "output_padding": 1}, (1, 2, 4, 4)),
    ("ConvTranspose1d", (2, 3, 3), {"dilation": 2}, (1, 2, 6)),
    ("ConvTranspose3d", (2, 1, 2), {"bias": False}, (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name, args, kw, shape", LAYERS, ids=["%s%d" % (r[0], i) for i, r in enumerate(LAYERS)])
def test_layers_match_eager_and_torch(name, args, kw, shape):
    c, t = pair(name, *args, **kw)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    x = RS.randint(0, 10, (2, 5)) if shape == "int" else RS.randn(*shape).astype(np.float32)
    assert_same(sc(cthtorch.tensor(x)), c(cthtorch.tensor(x)), st(torch.tensor(x)))
    if name.startswith("AdaptiveMaxPool"):   # both call the compiled function return_indices picks, by its name
        fn = re.search(r"__torch__\.torch\.nn\.functional\.(\w+)", st.code).group(1)
        assert fn.endswith("_with_indices") == bool(kw.get("return_indices"))
        assert "__torch__.torch.nn.functional.%s(input, [" % fn in sc.code
    data = roundtrip(sc)
    assert_same(cthtorch.jit.load(io.BytesIO(data))(cthtorch.tensor(x)), c(cthtorch.tensor(x)),
                torch.jit.load(io.BytesIO(data))(torch.tensor(x)))


class _InterpC(nn.Module):
    def forward(self, x):
        return (nn.functional.interpolate(x, scale_factor=2.0),
                nn.functional.interpolate(x, size=(3, 3), mode="bilinear"),
                nn.functional.interpolate(x, size=5), nn.functional.interpolate(x, scale_factor=(2.0, 1.0)))


class _InterpT(torch.nn.Module):
    def forward(self, x):
        return (torch.nn.functional.interpolate(x, scale_factor=2.0),
                torch.nn.functional.interpolate(x, size=(3, 3), mode="bilinear"),
                torch.nn.functional.interpolate(x, size=5),
                torch.nn.functional.interpolate(x, scale_factor=(2.0, 1.0)))


def _called_functions(code):
    """The qualified names a method's code calls, in order (torch's code names them through `_N = ...`)."""
    alias = dict(re.findall(r"^  (_\d+) = (__torch__\.[\w.]+)$", code, re.M))
    calls = re.findall(r"(__torch__\.[\w.]+|\b_\d+)\(x, ", code)
    return [alias.get(c, c) for c in calls]


def test_interpolate_calls_the_overload_torch_compiles():
    sc, st = cthtorch.jit.script(_InterpC()), torch.jit.script(_InterpT())
    names, tnames = _called_functions(sc.code), _called_functions(st.code)
    # the same overload per call as torch (its mangle numbers follow its process's compile order)
    assert [names.index(n) for n in names] == [tnames.index(n) for n in tnames] == [0, 1, 2, 2]
    assert all(re.fullmatch(r"__torch__\.torch\.nn\.functional\.(___torch_mangle_\d+\.)?interpolate", n)
               for n in names + tnames)
    assert names[2] == "__torch__.torch.nn.functional.interpolate"     # torch's first-declared overload
    x = RS.randn(1, 2, 3, 4).astype(np.float32)
    assert_same(sc(cthtorch.tensor(x)), _InterpC()(cthtorch.tensor(x)), st(torch.tensor(x)))
    data = roundtrip(sc)
    assert_same(cthtorch.jit.load(io.BytesIO(data))(cthtorch.tensor(x)), _InterpC()(cthtorch.tensor(x)),
                torch.jit.load(io.BytesIO(data))(torch.tensor(x)))


def test_embedding_compiles_from_source_and_max_norm_renormalizes():
    m = nn.Embedding(10, 4, max_norm=1.0)
    with cthtorch.no_grad():
        m.weight.mul_(5)
    sm = cthtorch.jit.script(m)
    # F.embedding is compiled from source, called as torch calls it
    assert "__torch__.torch.nn.functional.embedding(" in sm.code
    idx = cthtorch.tensor([[1, 8, 3]])
    ref = nn.Embedding(10, 4, max_norm=1.0)
    ref.load_state_dict(m.state_dict())
    assert_same(sm(idx), ref(idx))
    np.testing.assert_allclose(m.weight.norm(dim=1)[[1, 8, 3]].detach().numpy(), 1.0, rtol=1e-5)
    assert_same(m.weight, ref.weight)


@pytest.mark.parametrize("name,shape", [("Dropout1d", (2, 3, 4)), ("Dropout1d", (3, 4)), ("Dropout2d", (2, 3, 4, 4)),
                                        ("Dropout3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("inplace", [False, True])
def test_channel_dropout_compiles_from_source_like_torch(name, shape, inplace):
    # torch compiles F.dropoutNd from source (torchinfo's PartialJITModel scripts a Dropout2d)
    sm = cthtorch.jit.script(getattr(nn, name)(0.5, inplace=inplace))
    assert "__torch__.torch.nn.functional.%s(" % name.lower() in sm.code
    st = torch.jit.script(getattr(torch.nn, name)(0.5, inplace=inplace))
    cthtorch.manual_seed(0)
    torch.manual_seed(0)
    xc, xt = cthtorch.ones(*shape), torch.ones(*shape)
    yc, yt = sm(xc), st(xt)
    np.testing.assert_array_equal(yc.numpy(), yt.numpy())
    np.testing.assert_array_equal(xc.numpy(), xt.numpy())     # inplace wrote through, as torch's
    assert 0 < float((yc == 0).sum()) < yc.numel()
    sm.eval()
    assert bool((sm(cthtorch.ones(*shape)) == 1).all())
    bad = getattr(nn, name)(0.5)
    bad.p = 1.5     # past the constructor's check: the compiled function checks p itself
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        cthtorch.jit.script(bad)(cthtorch.ones(*shape))


def test_conv_transpose_output_size():
    c, t = pair("ConvTranspose2d", 2, 3, 3, stride=2)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    x = RS.randn(1, 2, 4, 4).astype(np.float32)
    for size in ([10, 10], [1, 3, 9, 10]):
        assert_same(sc(cthtorch.tensor(x), size), c(cthtorch.tensor(x), size), st(torch.tensor(x), size))
    msg = "requested an output size of [20, 20], but valid sizes range from [9, 9] to [10, 10] (for an input of [4, 4])"
    with pytest.raises(ValueError) as e:
        sc(cthtorch.tensor(x), [20, 20])
    assert str(e.value) == msg
    with pytest.raises(Exception) as et:
        st(torch.tensor(x), [20, 20])
    assert str(et.value).strip().endswith("builtins.ValueError: " + msg)


class BadHidden(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 5)

    def forward(self, x):
        return self.rnn(x, 3)[0]


class BadMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2)

    def forward(self, x, mask: Optional[int] = None):
        return self.attn(x, x, x, key_padding_mask=mask)[0]


@pytest.mark.parametrize("mod", ["BadHidden", "BadMask"])
def test_type_errors_are_torchs_kind(mod):
    # argument types the annotated forwards reject while compiling, in torch and here
    ct_cls = globals()[mod]
    th_src = {"BadHidden": ("rnn", lambda: torch.nn.LSTM(4, 5), "return self.rnn(x, 3)[0]"),
              "BadMask": ("attn", lambda: torch.nn.MultiheadAttention(8, 2),
                          "return self.attn(x, x, x, key_padding_mask=mask)[0]")}[mod]

    class Th(torch.nn.Module):
        def __init__(self):
            super().__init__()
            setattr(self, th_src[0], th_src[1]())

    Th.forward = ct_cls.forward
    with pytest.raises(RuntimeError) as et:
        torch.jit.script(Th())
    with pytest.raises(RuntimeError) as ec:
        cthtorch.jit.script(ct_cls())
    assert "Expected a value of type" in str(et.value)
    assert "Expected a value of type" in str(ec.value)
    assert "<--- HERE" in str(ec.value)


def test_full_transformer_with_causal_target_mask():
    c, t = pair("Transformer", 8, 2, 1, 2, 16, dropout=0.0)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    src = RS.randn(4, 2, 8).astype(np.float32)
    tgt = RS.randn(3, 2, 8).astype(np.float32)
    mask = np.triu(np.full((3, 3), -np.inf, dtype=np.float32), 1)
    args_c = (cthtorch.tensor(src), cthtorch.tensor(tgt))
    assert_same(sc(*args_c, tgt_mask=cthtorch.tensor(mask)), c(*args_c, tgt_mask=cthtorch.tensor(mask)),
                st(torch.tensor(src), torch.tensor(tgt), tgt_mask=torch.tensor(mask)))
    data = roundtrip(sc)
    assert_same(cthtorch.jit.load(io.BytesIO(data))(*args_c), c(*args_c),
                torch.jit.load(io.BytesIO(data))(torch.tensor(src), torch.tensor(tgt)))


def test_scripted_chunk_is_a_list_after_a_trace_met_chunk_first(tmp_path):
    """The tracer infers a schema for a composite it meets with none written;
    chunk has one written (Tensor[]), which must be there from the start: a
    trace of chunk before any script typed scripted MultiheadAttention's chunk
    as one Tensor. A fresh process, so nothing earlier has scripted chunk."""
    import os
    import subprocess
    import sys
    ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = """
import cthtorch
cthtorch.jit.trace(lambda x: x.chunk(3, dim=-1)[0], (cthtorch.randn(2, 6),), check_trace=False)
m = cthtorch.nn.MultiheadAttention(16, 4).eval()
s = cthtorch.jit.script(m)
x = cthtorch.randn(5, 2, 16)
assert bool((s(x, x, x)[0] == m(x, x, x)[0]).all())


def halves(x):
    return x.chunk(2)


print(str(cthtorch.jit.script(halves).graph).count("Tensor[] = aten::chunk"))
"""
    prog = tmp_path / "trace_then_script.py"
    prog.write_text(code)
    r = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[-1] == "1", r.stdout


@pytest.mark.parametrize("name,kw", [("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}),
                                     ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False})])
def test_recurrent_cells_script_as_torchs(name, kw):
    # the cells compile to torch's cell ops (aten::lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell): batched and
    # unbatched, with and without a state, equal to eager and to torch's script; archives go both ways
    c, t = pair(name, 4, 6, **kw)
    sc, st = cthtorch.jit.script(c), torch.jit.script(t)
    op = {"LSTMCell": "lstm_cell", "GRUCell": "gru_cell"}.get(name, "rnn_%s_cell" % kw.get("nonlinearity", "tanh"))
    assert "aten::%s" % op in str(sc.graph)
    two = name == "LSTMCell"
    for batch in ((3,), ()):
        x = RS.rand(*batch, 4).astype(np.float32)
        hs = [RS.rand(*batch, 6).astype(np.float32) for _ in range(2 if two else 1)]
        for given in (False, True):
            ca, ta = [cthtorch.tensor(x)], [torch.tensor(x)]
            if given:
                ca.append(tuple(cthtorch.tensor(h) for h in hs) if two else cthtorch.tensor(hs[0]))
                ta.append(tuple(torch.tensor(h) for h in hs) if two else torch.tensor(hs[0]))
            assert_same(sc(*ca), c(*ca), st(*ta))
    x = RS.rand(3, 4).astype(np.float32)
    ours = cthtorch.jit.load(io.BytesIO(roundtrip(sc)))
    buf = io.BytesIO()
    torch.jit.save(st, buf)
    theirs = cthtorch.jit.load(io.BytesIO(buf.getvalue()))
    in_torch = torch.jit.load(io.BytesIO(roundtrip(sc)))
    assert_same(ours(cthtorch.tensor(x)), c(cthtorch.tensor(x)), in_torch(torch.tensor(x)))
    assert_same(theirs(cthtorch.tensor(x)), theirs(cthtorch.tensor(x)), t(torch.tensor(x)))
