"""Recurrent layers and cells against torch: outputs, final states and every
parameter/input gradient (LSTM, GRU, RNN tanh/relu; layers, directions,
batch_first, PackedSequence, proj_size, dropout), gradcheck/gradgradcheck of
the fused cells, and a word-language-model style training loop."""
import numpy as np
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def _ct(t):
    return cthtorch.from_numpy(t.detach().numpy().copy())


def _close(a, b, tol):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _pair(kind, *args, dtype=None, **kw):
    """the torch module and a cthtorch one starting from its weights"""
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(*args, **kw)
    m = getattr(cthtorch.nn, kind)(*args, **kw)
    m.load_state_dict({k: _ct(v) for k, v in ref.state_dict().items()})
    if dtype == "float64":
        ref, m = ref.double(), m.double()
    return ref, m


def _run_both(ref, m, x, hx=None, tol=1e-5):
    """forward both, backward a random weighting of output and final states,
    compare everything"""
    xt = x.clone().requires_grad_(True)
    xc = _ct(x).requires_grad_(True)
    hxt = hxc = None
    if hx is not None:
        if isinstance(hx, tuple):
            hxt = tuple(h.clone().requires_grad_(True) for h in hx)
            hxc = tuple(_ct(h).requires_grad_(True) for h in hx)
        else:
            hxt, hxc = hx.clone().requires_grad_(True), _ct(hx).requires_grad_(True)
    ot, st = ref(xt, hxt)
    oc, sc = m(xc, hxc)
    st = st if isinstance(st, tuple) else (st,)
    sc = sc if isinstance(sc, tuple) else (sc,)
    assert tuple(oc.shape) == tuple(ot.shape)
    _close(oc, ot, tol)
    for a, b in zip(sc, st):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, tol)
    g = torch.randn(ot.shape, dtype=ot.dtype, generator=torch.Generator().manual_seed(1))
    gs = [torch.randn(s.shape, dtype=s.dtype, generator=torch.Generator().manual_seed(2 + i)) for i, s in enumerate(st)]
    (ot * g).sum().add(sum((s * w).sum() for s, w in zip(st, gs))).backward()
    (oc * _ct(g)).sum().add(sum((s * _ct(w)).sum() for s, w in zip(sc, gs))).backward()
    _close(xc.grad, xt.grad, tol)
    if hx is not None:
        for a, b in zip(hxc if isinstance(hxc, tuple) else (hxc,), hxt if isinstance(hxt, tuple) else (hxt,)):
            _close(a.grad, b.grad, tol)
    named = dict(m.named_parameters())
    for n, p in ref.named_parameters():
        _close(named[n].grad, p.grad, tol)


CONFIGS = [
    dict(num_layers=1),
    dict(num_layers=2),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=1, batch_first=True),
    dict(num_layers=2, bias=False),
]


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN", "RNN_relu"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: ",".join("%s=%s" % kv for kv in c.items()))
def test_layers_match_torch(kind, cfg):
    kw = dict(cfg)
    if kind == "RNN_relu":
        kind, kw["nonlinearity"] = "RNN", "relu"
    ref, m = _pair(kind, 5, 7, **kw)
    x = torch.randn(4, 3, 5, generator=torch.Generator().manual_seed(3))
    _run_both(ref, m, x)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("threads", [1, 2])
def test_step_sized_layers_match_torch(kind, threads):
    """sizes where the per-step products run the packed-weight GEMM's full
    and edge tiles (H = 130: 4H and 3H are not multiples of 24, B = 33 of 4)
    and, at 2 threads, split its panels and the gate kernels' rows"""
    n0 = cthtorch.get_num_threads()
    try:
        cthtorch.set_num_threads(threads)
        ref, m = _pair(kind, 40, 130, num_layers=2, bidirectional=True)
        gen = torch.Generator().manual_seed(6)
        h = torch.randn(4, 33, 130, generator=gen)
        hx = (h, torch.randn(4, 33, 130, generator=gen)) if kind == "LSTM" else h
        _run_both(ref, m, torch.randn(6, 33, 40, generator=gen), hx, tol=1e-4)
    finally:
        cthtorch.set_num_threads(n0)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_given_states_and_unbatched(kind):
    ref, m = _pair(kind, 4, 6, num_layers=2, bidirectional=True)
    gen = torch.Generator().manual_seed(4)
    h = torch.randn(4, 3, 6, generator=gen)
    hx = (h, torch.randn(4, 3, 6, generator=gen)) if kind == "LSTM" else h
    _run_both(ref, m, torch.randn(5, 3, 4, generator=gen), hx)
    _run_both(ref, m, torch.randn(5, 4, generator=gen))   # unbatched


@pytest.mark.parametrize("cfg", [dict(num_layers=1), dict(num_layers=2, bidirectional=True)])
def test_lstm_proj_size(cfg):
    ref, m = _pair("LSTM", 5, 8, proj_size=3, **cfg)
    assert repr(m) == repr(ref)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in ref.named_parameters()]
    _run_both(ref, m, torch.randn(4, 2, 5, generator=torch.Generator().manual_seed(5)))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_single_layer_dropout_warns_as_torch(kind):
    """dropout only acts between layers, so a one-layer module with dropout warns (seq2seq scripts
    build GRU(..., dropout=0.1) with one layer); two layers or no dropout do not"""
    import warnings
    msgs = []
    for lib in (cthtorch, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib.nn, kind)(3, 4, dropout=0.1)
            getattr(lib.nn, kind)(3, 4, num_layers=2, dropout=0.1)
            getattr(lib.nn, kind)(3, 4)
        msgs.append([(x.category, str(x.message)) for x in w])
    assert len(msgs[1]) == 1 and msgs[0] == msgs[1]


def test_proj_size_errors():
    for kw in (dict(proj_size=-1), dict(proj_size=8)):
        with pytest.raises(ValueError) as e:
            torch.nn.LSTM(5, 8, **kw)
        with pytest.raises(ValueError) as ec:
            cthtorch.nn.LSTM(5, 8, **kw)
        assert str(ec.value) == str(e.value)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence(kind, enforce_sorted):
    ref, m = _pair(kind, 3, 4, num_layers=2, bidirectional=True)
    lengths = [5, 4, 2] if enforce_sorted else [2, 5, 4]
    x = torch.randn(5, 3, 3, generator=torch.Generator().manual_seed(6))
    xt, xc = x.clone().requires_grad_(True), _ct(x).requires_grad_(True)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    pc = cthtorch.nn.utils.rnn.pack_padded_sequence(xc, lengths, enforce_sorted=enforce_sorted)
    ot, st = ref(pt)
    oc, sc = m(pc)
    _close(oc.data, ot.data, 1e-5)
    st = st if isinstance(st, tuple) else (st,)
    sc = sc if isinstance(sc, tuple) else (sc,)
    for a, b in zip(sc, st):
        _close(a, b, 1e-5)
    (ot.data.sum() + sum(s.pow(2).sum() for s in st)).backward()
    (oc.data.sum() + sum(s.pow(2).sum() for s in sc)).backward()
    _close(xc.grad, xt.grad, 1e-5)
    named = dict(m.named_parameters())
    for n, p in ref.named_parameters():
        _close(named[n].grad, p.grad, 1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_dropout_between_layers(kind):
    ref, m = _pair(kind, 4, 5, num_layers=3, dropout=0.5)
    x = torch.randn(6, 2, 4, generator=torch.Generator().manual_seed(7))
    outs = []
    for _ in range(2):
        cthtorch.manual_seed(11)
        outs.append(m(_ct(x))[0])
    np.testing.assert_array_equal(outs[0].detach().numpy(), outs[1].detach().numpy())
    m.eval()
    ref.eval()
    _close(m(_ct(x))[0], ref(x)[0], 1e-5)   # no dropout in eval
    m.train()
    cthtorch.manual_seed(12)
    a = m(_ct(x))[0]
    assert not np.allclose(a.detach().numpy(), outs[0].detach().numpy())


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(kind):
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(4, 6)
    m = getattr(cthtorch.nn, kind)(4, 6)
    m.load_state_dict({k: _ct(v) for k, v in ref.state_dict().items()})
    gen = torch.Generator().manual_seed(8)
    x, h, c = torch.randn(3, 4, generator=gen), torch.randn(3, 6, generator=gen), torch.randn(3, 6, generator=gen)
    ins_t = [t.clone().requires_grad_(True) for t in (x, h, c)]
    ins_c = [_ct(t).requires_grad_(True) for t in (x, h, c)]
    if kind == "LSTMCell":
        ht, ct_ = ref(ins_t[0], (ins_t[1], ins_t[2]))
        hc, cc = m(ins_c[0], (ins_c[1], ins_c[2]))
        _close(cc, ct_, 1e-5)
        (ht.sum() + (ct_ * 2).sum()).backward()
        (hc.sum() + (cc * 2).sum()).backward()
        n = 3
    else:
        ht, hc = ref(ins_t[0], ins_t[1]), m(ins_c[0], ins_c[1])
        ht.pow(2).sum().backward()
        hc.pow(2).sum().backward()
        n = 2
    _close(hc, ht, 1e-5)
    for a, b in zip(ins_c[:n], ins_t[:n]):
        _close(a.grad, b.grad, 1e-5)
    for (na, a), (nb, b) in zip(m.named_parameters(), ref.named_parameters()):
        _close(a.grad, b.grad, 1e-5)


def test_functional_cells_match_torch():
    gen = torch.Generator().manual_seed(9)
    r = lambda *s: torch.randn(*s, generator=gen)
    x, h, c = r(2, 3), r(2, 4), r(2, 4)
    w4, u4, b4, v4 = r(16, 3), r(16, 4), r(16), r(16)
    w3, u3, b3, v3 = r(12, 3), r(12, 4), r(12), r(12)
    C = lambda *ts: [_ct(t) for t in ts]
    for a, b in zip(cthtorch.lstm_cell(*C(x), tuple(C(h, c)), *C(w4, u4, b4, v4)),
                    torch.lstm_cell(x, (h, c), w4, u4, b4, v4)):
        _close(a, b, 1e-5)
    _close(cthtorch.gru_cell(*C(x, h, w3, u3, b3, v3)), torch.gru_cell(x, h, w3, u3, b3, v3), 1e-5)


def _fused_inputs(shapes, seed):
    gen = np.random.RandomState(seed)
    return [cthtorch.from_numpy(gen.randn(*s)).requires_grad_(True) for s in shapes]


def test_fused_lstm_cell_gradcheck():
    gates, cx = _fused_inputs([(3, 8), (3, 2)], 10)
    f = lambda g, c: cthtorch._fused_lstm_cell(g, c)
    assert cthtorch.autograd.gradcheck(f, (gates, cx))
    assert cthtorch.autograd.gradgradcheck(f, (gates, cx))
    # only some outputs used: the others' gradients count as zero
    assert cthtorch.autograd.gradcheck(lambda g, c: f(g, c)[1], (gates, cx))
    assert cthtorch.autograd.gradgradcheck(lambda g, c: f(g, c)[0], (gates, cx))


def test_fused_gru_cell_gradcheck():
    ig, hg, hx = _fused_inputs([(3, 6), (3, 6), (3, 2)], 11)
    f = lambda a, b, h: cthtorch._fused_gru_cell(a, b, h)
    assert cthtorch.autograd.gradcheck(f, (ig, hg, hx))
    assert cthtorch.autograd.gradgradcheck(f, (ig, hg, hx))
    assert cthtorch.autograd.gradgradcheck(lambda a, b, h: f(a, b, h)[0], (ig, hg, hx))


def _lstm_cell_f64(g, c, dh, dc):
    """the float32 fused LSTM cell's forward and backward, in float64 numpy (from float32 operands)"""
    g, c, dh, dc = (np.asarray(a, np.float64) for a in (g, c, dh, dc))
    H = c.shape[1]
    sig = lambda x: 1 / (1 + np.exp(-x))
    i, f, gg, o = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sig(g[:, 3 * H:])
    cy = f * c + i * gg
    tc = np.tanh(cy)
    hy = o * tc
    dcs = dc + dh * o * (1 - tc * tc)
    dg = np.concatenate([dcs * gg * i * (1 - i), dcs * c * f * (1 - f), dcs * i * (1 - gg * gg),
                         dh * tc * o * (1 - o)], 1)
    return hy, cy, np.concatenate([i, f, gg, o], 1), dg, dcs * f


def _cell_inputs(B, H, seed, scale):
    gen = np.random.RandomState(seed)
    return [(gen.randn(*s) * sc).astype(np.float32)
            for s, sc in (((B, 4 * H), scale), ((B, H), 2.0), ((B, H), 1.0), ((B, H), 1.0))]


def _cell_f32(g, c, dh, dc):
    from cthtorch._C import _internal
    hy, cy, ws = cthtorch._fused_lstm_cell(cthtorch.from_numpy(g), cthtorch.from_numpy(c))
    dg, dcx = _internal._fused_lstm_cell_backward(cthtorch.from_numpy(dh), cthtorch.from_numpy(dc), None,
                                                  cthtorch.from_numpy(c), cy, ws)
    return [t.numpy() for t in (hy, cy, ws, dg, dcx)]


@pytest.mark.parametrize("H", [256, 13, 3])
@pytest.mark.parametrize("scale", [0.3, 3.0, 30.0])
def test_fused_lstm_cell_float32_accuracy(H, scale):
    """the float32 cell (its AVX2 kernel where the cpu has one: inlined exp and tanh, tails of rows
    not a multiple of 8 by masked lanes) within a few float32 ulps of the cell computed in float64,
    from gates near 0 (tanh's series) to saturating ones"""
    g, c, dh, dc = _cell_inputs(17, H, 20, scale)
    got = _cell_f32(g, c, dh, dc)
    want = _lstm_cell_f64(g, c, dh, dc)
    for name, a, b in zip(("hy", "cy", "ws", "dgates", "dcx"), got, want):
        # ~4 ulps of each value, and of the largest terms for the gradients (sums of products)
        np.testing.assert_allclose(a, b, rtol=5e-7, atol=3e-7 * max(1.0, float(np.abs(dh).max())), err_msg=name)


def test_fused_lstm_cell_float32_special_values():
    """NaN gates propagate into the outputs; +-inf and huge gates saturate the gates to 0 or 1"""
    H = 9
    g = np.zeros((2, 4 * H), np.float32)
    g[0, :] = [np.nan, np.inf, -np.inf, 1e30, -1e30, 100.0, -100.0, 89.0, -89.0] * 4
    c = np.ones((2, H), np.float32)
    hy, cy, ws, _, _ = _cell_f32(g, c, np.ones((2, H), np.float32), np.ones((2, H), np.float32))
    assert np.isnan(hy[0, 0]) and np.isnan(cy[0, 0]) and np.isnan(ws[0, 0])
    sat = ws[0].reshape(4, H)[:, 1:]
    assert np.all((sat == 0) | (sat == 1) | (sat == -1) | (np.abs(sat) < 1e-38)), sat
    np.testing.assert_array_equal(np.sign(ws[0].reshape(4, H)[2, 1:]), np.sign(g[0, 1:H]))
    np.testing.assert_allclose(hy[1], torch.sigmoid(torch.tensor(0.)).item() * np.tanh(0.5), rtol=1e-6)


def test_fused_lstm_cell_scalar_fallback_agrees():
    """CTHTORCH_VEC_MATH=scalar (a cpu without AVX2) runs the libmvec loop: it agrees with the
    vector kernel to float32 rounding"""
    import os
    import subprocess
    import sys
    import tempfile
    code = ("import sys, numpy as np, cthtorch as ct\n"
            "from cthtorch._C import _internal\n"
            "a = np.load(sys.argv[1])\n"
            "hy, cy, ws = ct._fused_lstm_cell(ct.from_numpy(a['g']), ct.from_numpy(a['c']))\n"
            "dg, dc = _internal._fused_lstm_cell_backward(ct.from_numpy(a['dh']), ct.from_numpy(a['dc']), None,"
            " ct.from_numpy(a['c']), cy, ws)\n"
            "np.savez(sys.argv[2], hy=hy.numpy(), cy=cy.numpy(), dg=dg.numpy(), dc=dc.numpy())\n")
    g, c, dh, dc = _cell_inputs(5, 21, 21, 3.0)
    with tempfile.TemporaryDirectory() as d:
        np.savez(os.path.join(d, "in.npz"), g=g, c=c, dh=dh, dc=dc)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, CTHTORCH_VEC_MATH="scalar")
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        subprocess.run([sys.executable, "-c", code, os.path.join(d, "in.npz"), os.path.join(d, "out.npz")],
                       check=True, env=env, cwd=root, timeout=300)
        slow = np.load(os.path.join(d, "out.npz"))
        fast = dict(zip(("hy", "cy", "ws", "dg", "dc"), _cell_f32(g, c, dh, dc)))
        for k in ("hy", "cy", "dg", "dc"):
            np.testing.assert_allclose(fast[k], slow[k], rtol=1e-6, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_layer_double_backward(kind):
    ref, m = _pair(kind, 3, 4, dtype="float64")
    x = torch.randn(3, 2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(12))
    assert cthtorch.autograd.gradgradcheck(lambda inp: m(inp)[0], (_ct(x).requires_grad_(True),))


@pytest.mark.parametrize("seq", [1, 2])
@pytest.mark.parametrize("given", [False, True])
def test_lstm_short_sequences(seq, given):
    """the one-call float32 layer at the recurrence's edges: one step (no
    steps after the first for dW_hh's GEMM), a zero initial state (no first
    GEMM, no h0 term) and a given one, both directions"""
    ref, m = _pair("LSTM", 3, 5, num_layers=2, bidirectional=True)
    gen = torch.Generator().manual_seed(13)
    hx = (torch.randn(4, 2, 5, generator=gen), torch.randn(4, 2, 5, generator=gen)) if given else None
    _run_both(ref, m, torch.randn(seq, 2, 3, generator=gen), hx)


def test_lstm_state_gradients_that_are_views():
    """hn.sum() + cn.sum() sends expanded (stride-0) gradients into the layer's
    backward; a transposed cn sends a transposed one"""
    ref, m = _pair("LSTM", 3, 5, num_layers=2)
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 2, 3, generator=gen)
    xt, xc = x.clone().requires_grad_(True), _ct(x).requires_grad_(True)
    ot, (ht, ct) = ref(xt)
    oc, (hc, cc) = m(xc)
    (ot.sum() + ht.sum() + (ct.transpose(1, 2) * torch.arange(10.).view(5, 2)).sum()).backward()
    (oc.sum() + hc.sum() + (cc.transpose(1, 2) * cthtorch.arange(10.).view(5, 2)).sum()).backward()
    _close(xc.grad, xt.grad, 1e-5)
    named = dict(m.named_parameters())
    for n, p in ref.named_parameters():
        _close(named[n].grad, p.grad, 1e-5)


@pytest.mark.parametrize("B,H", [(11, 5), (16, 6), (33, 130)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_lstm_layer_backward_gates_and_bias(B, H, reverse, threads):
    """_lstm_layer_backward's G (T, B, 4H) is the steps' dgates (the fused cell's, step by step), G^T its
    transpose (at sizes that run the 8 x 8 register transposes' full blocks and both edges) and the bias
    gradient its column sums, the same bits at 1 and 2 threads (each thread sums its own columns over all rows)"""
    from cthtorch._C import _internal
    T = 3
    gen = cthtorch.Generator().manual_seed(14)
    ws = cthtorch.randn(T, B, 4 * H, generator=gen)   # the input projection, the workspace after the forward
    h0, c0 = cthtorch.randn(B, H, generator=gen), cthtorch.randn(B, H, generator=gen)
    dout = cthtorch.randn(T, B, H, generator=gen)
    w_hh = cthtorch.randn(4 * H, H, generator=gen) * 0.3
    _, cs, tcs = _internal._lstm_layer_forward(ws, h0, c0, _internal._gemm_pack(w_hh.t()), None, reverse)
    wp = _internal._gemm_pack(w_hh)
    old = cthtorch.get_num_threads()
    try:
        res = {}
        for n in (1, threads):
            cthtorch.set_num_threads(n)
            res[n] = _internal._lstm_layer_backward(dout, None, None, ws, cs, tcs, c0, wp, None, 0, reverse, True)
    finally:
        cthtorch.set_num_threads(old)
    G, _, _, GT, db = res[threads]
    assert tuple(GT.shape) == (4 * H, T * B) and tuple(db.shape) == (4 * H,) and GT.is_contiguous()
    np.testing.assert_array_equal(GT.numpy(), G.flatten(0, 1).t().numpy())
    # the forward's last step's dgates from the single-cell kernel (the first step the backward runs)
    last, prev_c = (0, cs[1]) if reverse else (T - 1, cs[T - 2])
    dg, _ = _internal._fused_lstm_cell_backward(dout[last], None, None, prev_c, cs[last], ws[last])
    np.testing.assert_array_equal(G[last].numpy(), dg.numpy())
    np.testing.assert_allclose(db.numpy(), G.flatten(0, 1).numpy().astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    for a, b in zip(res[1], res[threads]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("B,H,n_in", [(11, 5, 3), (33, 130, 40), (4, 6, 17)])
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_backward_dx_per_step(B, H, n_in, reverse):
    """with W_ih packed, _lstm_layer_backward's first output is dx = G W_ih, formed step by step (n_in of 3,
    40 and 17 columns: a narrow last panel, one and two panels); the other outputs are bit-equal to the
    call that returns G"""
    from cthtorch._C import _internal
    T = 4
    gen = cthtorch.Generator().manual_seed(16)
    ws = cthtorch.rand(T, B, 4 * H, generator=gen)
    cs, c0 = cthtorch.randn(T, B, H, generator=gen), cthtorch.randn(B, H, generator=gen)
    dout = cthtorch.randn(T, B, H, generator=gen)
    w_hh, w_ih = cthtorch.randn(4 * H, H, generator=gen), cthtorch.randn(4 * H, n_in, generator=gen)
    wp, wpi = _internal._gemm_pack(w_hh), _internal._gemm_pack(w_ih)
    G, *rest = _internal._lstm_layer_backward(dout, None, None, ws, cs, cs.tanh(), c0, wp, None, 0, reverse, True)
    dx, *rest2 = _internal._lstm_layer_backward(dout, None, None, ws, cs, cs.tanh(), c0, wp, wpi, n_in, reverse,
                                                True)
    assert tuple(dx.shape) == (T, B, n_in)
    ref = G.numpy().astype(np.float64).reshape(T * B, 4 * H) @ w_ih.numpy().astype(np.float64)
    np.testing.assert_allclose(dx.numpy().reshape(T * B, n_in), ref, rtol=1e-4, atol=1e-4)
    for a, b in zip(rest, rest2):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_output_changed_in_place_raises_as_torch(layers):
    """the layer's backward reads its output (the hidden states of dW_hh): changed in place before the
    backward, it raises torch's error for a saved output instead of differentiating other values"""
    def run(lib):
        lib.manual_seed(0)
        out, _ = lib.nn.LSTM(4, 5, num_layers=layers)(lib.ones(3, 2, 4))
        out.mul_(2)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        return str(e.value)
    assert run(cthtorch) == run(torch)


@pytest.mark.parametrize("frozen", ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0"])
def test_lstm_partly_frozen_weights(frozen):
    """one weight without grad: the other weight gradient's GEMM alone, from X | H's own columns"""
    ref, m = _pair("LSTM", 3, 5)
    getattr(ref, frozen).requires_grad_(False)
    getattr(m, frozen).requires_grad_(False)
    x = torch.randn(4, 2, 3, generator=torch.Generator().manual_seed(15))
    ref(x)[0].pow(2).sum().backward()
    m(_ct(x))[0].pow(2).sum().backward()
    named = dict(m.named_parameters())
    for n, p in ref.named_parameters():
        if n == frozen:
            assert p.grad is None and named[n].grad is None
        else:
            _close(named[n].grad, p.grad, 1e-5)


def test_lstm_layer_op_errors():
    from cthtorch._C import _internal
    wp = _internal._gemm_pack(cthtorch.ones(2, 8))
    z = cthtorch.zeros(3, 2)
    with pytest.raises(RuntimeError, match="float32"):
        _internal._lstm_layer_forward(cthtorch.ones(4, 3, 8, dtype=cthtorch.float64), z, z, wp, None, False)
    with pytest.raises(RuntimeError, match="h0 has the wrong size"):
        _internal._lstm_layer_forward(cthtorch.ones(4, 3, 8), cthtorch.zeros(3, 3), z, wp, None, False)
    with pytest.raises(RuntimeError, match="packed"):
        _internal._lstm_layer_forward(cthtorch.ones(4, 3, 8), z, z, _internal._gemm_pack(cthtorch.ones(3, 8)), None,
                                       False)
    with pytest.raises(RuntimeError, match="bias has the wrong size"):
        _internal._lstm_layer_forward(cthtorch.ones(4, 3, 8), z, z, wp, cthtorch.ones(4), False)
    with pytest.raises(RuntimeError, match="at least one step"):   # the first step's gradient is read
        _internal._lstm_layer_backward(cthtorch.ones(0, 3, 2), None, None, cthtorch.ones(0, 3, 8),
                                       cthtorch.ones(0, 3, 2), cthtorch.ones(0, 3, 2), z, wp, None, 0, False, True)
    with pytest.raises(RuntimeError, match="at least one step"):
        _internal._lstm_layer_forward(cthtorch.ones(0, 3, 8), z, z, wp, None, False)
    with pytest.raises(RuntimeError, match="workspace"):
        _internal._lstm_layer_backward(cthtorch.ones(4, 3, 2), None, None, cthtorch.ones(4, 3, 7),
                                       cthtorch.ones(4, 3, 2), cthtorch.ones(4, 3, 2), z, wp, None, 0, False, True)


def test_fused_cell_errors():
    with pytest.raises(RuntimeError, match="gates"):
        cthtorch._fused_lstm_cell(cthtorch.ones(2, 7), cthtorch.ones(2, 2))
    with pytest.raises(RuntimeError, match="dtype"):
        cthtorch._fused_lstm_cell(cthtorch.ones(2, 8), cthtorch.ones(2, 2, dtype=cthtorch.float64))
    with pytest.raises(RuntimeError, match="floating"):
        cthtorch._fused_gru_cell(cthtorch.ones(2, 6, dtype=cthtorch.int64), cthtorch.ones(2, 6), cthtorch.ones(2, 2))


def _word_lm_model(L):
    """pytorch/examples' word_language_model shape: embedding -> 2-layer LSTM
    (dropout) -> linear decoder"""
    class RNNModel(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = L.nn.Dropout(0.2)
            self.encoder = L.nn.Embedding(50, 16)
            self.rnn = L.nn.LSTM(16, 32, 2, dropout=0.2)
            self.decoder = L.nn.Linear(32, 50)

        def forward(self, x, hidden):
            emb = self.drop(self.encoder(x))
            out, hidden = self.rnn(emb, hidden)
            return self.decoder(self.drop(out)).view(-1, 50), hidden
    return RNNModel()


def _word_lm_train(L, model, tokens, targets):
    """truncated BPTT with the hidden state detached between batches,
    clip_grad_norm_, plain SGD, as the example's train()"""
    L.manual_seed(123)
    crit = L.nn.CrossEntropyLoss()
    hidden = (L.zeros(2, 4, 32), L.zeros(2, 4, 32))
    losses = []
    for x, y in zip(tokens, targets):
        x, y = L.from_numpy(x.copy()), L.from_numpy(y.copy())
        hidden = tuple(h.detach() for h in hidden)
        model.zero_grad()
        out, hidden = model(x, hidden)
        loss = crit(out, y.view(-1))
        loss.backward()
        L.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        with L.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-2.0)
        losses.append(loss.item())
    return losses


def test_word_language_model_losses_match_torch():
    # a token stream with structure to learn: mostly t -> t + 3, some noise
    rs = np.random.RandomState(0)
    data = (3 * np.arange(21 * 7)[:, None] + 11 * np.arange(4)[None, :]) % 50
    data = np.where(rs.rand(*data.shape) < 0.1, rs.randint(0, 50, data.shape), data).astype(np.int64)
    tokens = [data[7 * i:7 * i + 7] for i in range(20)]
    targets = [data[7 * i + 1:7 * i + 8] for i in range(20)]
    torch.manual_seed(0)
    ref = _word_lm_model(torch)
    m = _word_lm_model(cthtorch)
    m.load_state_dict({k: _ct(v) for k, v in ref.state_dict().items()})
    lt = _word_lm_train(torch, ref, tokens, targets)
    lc = _word_lm_train(cthtorch, m, tokens, targets)
    assert lt[-1] < lt[0]   # it learns
    np.testing.assert_allclose(lc, lt, rtol=0, atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_fused_layer_graph_frees_without_gc(mode):
    # the fused layer's ctx must not hold its own outputs: a graph dropped without backward
    # (a validation pass outside no_grad) is freed by reference counting, not left for the cycle collector
    import gc
    import weakref
    m = getattr(cthtorch.nn, mode)(4, 8)
    enabled = gc.isenabled()
    gc.disable()
    try:
        out = m(cthtorch.randn(5, 2, 4))[0]
        node = weakref.ref(out.grad_fn)
        assert type(node()).__name__ == {"LSTM": "MkldnnRnnLayerBackward0", "GRU": "StackBackward0"}[mode]
        del out
        assert node() is None
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("mode,kw", [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("GRU", dict(num_layers=2)),
                                     ("LSTM", dict(bidirectional=True)), ("GRU", dict(bidirectional=True))])
def test_rnn_output_grad_fn_names_as_torch_cpu(mode, kw):
    """the output and h_n print torch's CPU grad_fn names: an LSTM layer's output is one
    MkldnnRnnLayerBackward0 node, a GRU's the StackBackward0 of its steps (ours: the fused layer, named so)"""
    def run(lib):
        lib.manual_seed(0)
        out, h = getattr(lib.nn, mode)(3, 4, **kw)(lib.ones(2, 1, 3))
        h = h[0] if isinstance(h, tuple) else h
        return type(out.grad_fn).__name__, type(h.grad_fn).__name__
    assert run(cthtorch) == run(torch)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_is_contiguous_like_torchs(batch_first, side):
    """bentrevett/pytorch-seq2seq calls trg[1:].view(-1) on pad_sequence's time-major result: torch's is contiguous"""
    seqs = [np.arange(6.).reshape(3, 2), np.array([[7., 8.]])]
    outs = []
    for lib in (torch, cthtorch):
        a = lib.tensor(seqs[0], requires_grad=True)
        p = lib.nn.utils.rnn.pad_sequence([a, lib.tensor(seqs[1])], batch_first=batch_first, padding_value=-1.0,
                                          padding_side=side)
        (p * lib.arange(p.numel(), dtype=p.dtype).view(p.shape)).sum().backward()
        outs.append((tuple(p.shape), p.stride(), p.is_contiguous(), p.tolist(), a.grad.tolist(), p[1:].view(-1).tolist()))
    assert outs[1] == outs[0] and outs[0][2]


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_inter_layer_dropout_draws_torchs_masks(kind, bidirectional):
    """a packed input's dropout between layers is drawn over its packed rows, as torch's: same outputs,
    gradients and random stream after it at one seed (pytorch-sentiment-analysis' packed bi-LSTM)"""
    rs = np.random.RandomState(0)
    x, lengths = rs.randn(4, 7, 5).astype(np.float32), [7, 3, 5, 6]
    got = []
    for m in (torch, cthtorch):
        m.manual_seed(3)
        rnn = getattr(m.nn, kind)(5, 6, 3, bidirectional=bidirectional, dropout=0.5, batch_first=True)
        xx = m.tensor(x, requires_grad=True)
        p = m.nn.utils.rnn.pack_padded_sequence(xx, m.tensor(lengths), batch_first=True, enforce_sorted=False)
        out, h = rnn(p)
        h = h[0] if kind == "LSTM" else h
        pad, _ = m.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        (pad.pow(2).sum() + h[-1].sum()).backward()
        got.append([pad, h, xx.grad, rnn.weight_ih_l1.grad, m.rand(3)])
    for a, b in zip(got[1], got[0]):
        _close(a, b, 1e-5)
