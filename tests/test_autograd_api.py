"""The Python autograd API over the engine: gradcheck, functional, anomaly mode,
forward_ad, profiler — compared with torch."""
import json
import sys
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def pair(shape, seed=0):
    a = np.random.RandomState(seed).randn(*shape)
    return ct.tensor(a, dtype=ct.float64, requires_grad=True), torch.tensor(a, dtype=torch.float64,
                                                                           requires_grad=True)


# ---- gradcheck / gradgradcheck ----

def test_gradcheck_passes_for_composite_and_module_path():
    from cthtorch.autograd.gradcheck import gradcheck as gc_fn, GradcheckError
    assert gc_fn is ct.autograd.gradcheck and issubclass(GradcheckError, RuntimeError)
    x, _ = pair((3, 4))
    w, _ = pair((4, 2), 1)
    assert ct.autograd.gradcheck(lambda a, b: (a @ b).tanh().sum(0), (x, w))
    assert ct.autograd.gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, w))
    # non-contiguous and 0-d inputs
    assert ct.autograd.gradcheck(lambda a: (a * a).exp(), (x.detach().t().requires_grad_(),))
    assert ct.autograd.gradcheck(lambda a: a.sin() * 3, (ct.tensor(0.7, dtype=ct.float64, requires_grad=True),))


class _BadSquare(ct.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3   # wrong: should be 2


def test_gradcheck_reports_mismatch_like_torch():
    x, _ = pair((3,))
    from cthtorch.autograd.gradcheck import GradcheckError
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        ct.autograd.gradcheck(_BadSquare.apply, (x,))
    assert ct.autograd.gradcheck(_BadSquare.apply, (x,), raise_exception=False) is False


def test_gradcheck_input_checks():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        ct.autograd.gradcheck(lambda a: a * 2, (ct.ones(2, dtype=ct.float64),))
    x = ct.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ct.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2)
    assert any("is not a double precision" in str(i.message) for i in w)
    e = ct.ones(1, dtype=ct.float64).expand(3).requires_grad_()
    with pytest.raises(RuntimeError, match="stride 0"):
        ct.autograd.gradcheck(lambda a: a * 2, (e,))


def test_gradcheck_non_differentiable_output():
    x, _ = pair((4,))
    assert ct.autograd.gradcheck(lambda a: a.detach() * 0 + 1, (x,))


# ---- autograd.functional vs torch ----

def _cmp(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _cmp(u, v)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def _fn(lib):
    return lambda x, y: (x.sin() * y.sum(), (x * y).exp())


def test_functional_matches_torch():
    cx, tx = pair((3,))
    cy, ty = pair((3,), 2)
    for name in ("jacobian",):
        _cmp(getattr(ct.autograd.functional, name)(_fn(ct), (cx, cy)),
             getattr(torch.autograd.functional, name)(_fn(torch), (tx, ty)))
    _cmp(ct.autograd.functional.jacobian(lambda a: a ** 2, cx), torch.autograd.functional.jacobian(lambda a: a ** 2, tx))
    def sc(lib):
        return lambda a, b: (a.exp() * b * b).sum()
    _cmp(ct.autograd.functional.hessian(sc(ct), (cx, cy)), torch.autograd.functional.hessian(sc(torch), (tx, ty)))
    _cmp(ct.autograd.functional.hessian(lambda a: (a ** 3).sum() * a.sum(), cx),
         torch.autograd.functional.hessian(lambda a: (a ** 3).sum() * a.sum(), tx))
    _cmp(ct.autograd.functional.hessian(lambda a: a.prod(), cx), torch.autograd.functional.hessian(lambda a: a.prod(), tx))
    cv, tv = pair((3,), 5)
    for name in ("vjp", "jvp"):
        _cmp(getattr(ct.autograd.functional, name)(lambda a: a.tanh() * 2, cx, cv),
             getattr(torch.autograd.functional, name)(lambda a: a.tanh() * 2, tx, tv))
    for name in ("vhp", "hvp"):
        _cmp(getattr(ct.autograd.functional, name)(lambda a, b: (a.exp() * b).sum(), (cx, cy), (cv, cv)),
             getattr(torch.autograd.functional, name)(lambda a, b: (a.exp() * b).sum(), (tx, ty), (tv, tv)))


def test_functional_create_graph_and_errors():
    cx, tx = pair((2,))
    j = ct.autograd.functional.jacobian(lambda a: a ** 3, cx, create_graph=True)
    assert j.requires_grad
    (g,) = ct.autograd.grad(j.sum(), cx)
    tj = torch.autograd.functional.jacobian(lambda a: a ** 3, tx, create_graph=True)
    (tg,) = torch.autograd.grad(tj.sum(), tx)
    _cmp(g, tg)
    assert not ct.autograd.functional.jacobian(lambda a: a ** 3, cx).requires_grad
    for lib, F in ((ct, ct.autograd.functional), (torch, torch.autograd.functional)):
        x = lib.ones(2, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            F.jacobian(lambda a, b: a * 2, (x, x), strict=True)
        with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
            F.vjp(lambda a: a, [x])
        with pytest.raises(RuntimeError, match="v has invalid size"):
            F.vjp(lambda a: a * 2, x, lib.ones(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="should return a single Tensor"):
            F.hessian(lambda a: (a.sum(), a.sum()), x)
        assert F.jacobian(lambda a, b: a * 2, (x, x))[1].abs().sum() == 0


# ---- anomaly mode ----

def test_anomaly_switches():
    assert not ct.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = ct.autograd.detect_anomaly()
    with ctx:
        assert ct.is_anomaly_enabled() and ct.is_anomaly_check_nan_enabled()
    assert not ct.is_anomaly_enabled()
    with ct.autograd.set_detect_anomaly(True, check_nan=False):
        assert ct.is_anomaly_enabled() and not ct.is_anomaly_check_nan_enabled()
    assert not ct.is_anomaly_enabled() and ct.is_anomaly_check_nan_enabled()

    with pytest.warns(UserWarning):
        @ct.autograd.detect_anomaly()
        def f():
            return ct.is_anomaly_enabled()
    assert f() and not ct.is_anomaly_enabled()


def _nan_backward(lib):
    x = lib.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            y = x / x   # the forward op the report must name
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
    return str(e.value), [str(i.message) for i in w]


def test_anomaly_reports_nan_with_forward_traceback():
    msg, warns = _nan_backward(ct)
    tmsg, _ = _nan_backward(torch)
    assert msg == tmsg == "Function 'DivBackward0' returned nan values in its 1th output."
    rep = [m for m in warns if m.startswith("Error detected in DivBackward0")]
    assert rep and "y = x / x" in rep[0]


def test_anomaly_check_nan_false_and_off():
    x = ct.tensor([0.0], requires_grad=True)
    with ct.autograd.set_detect_anomaly(True, check_nan=False):
        (x / x).sum().backward()
    assert np.isnan(x.grad.numpy()).all()
    x.grad = None
    (x / x).sum().backward()   # off: NaNs pass silently, as in torch
    assert np.isnan(x.grad.numpy()).all()


class _Boom(ct.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


def test_anomaly_reports_error_in_backward():
    x = ct.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ct.autograd.detect_anomaly():
            y = _Boom.apply(x)   # recorded forward line
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    rep = [str(i.message) for i in w if str(i.message).startswith("Error detected in")]
    assert rep and "_Boom.apply(x)" in rep[0]


# ---- forward_ad ----

def _fwad(lib):
    import importlib
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _both(fn, *arrays):
    """fn(lib, fwAD, *tensors) under one dual level of each library; results as numpy (None stays None)."""
    res = []
    for lib in (ct, torch):
        fw = _fwad(lib)
        with fw.dual_level():
            out = fn(lib, fw, *[lib.tensor(a) for a in arrays])
        res.append([None if o is None else o.detach().numpy() for o in out])
    return res


@pytest.mark.parametrize("case", ["poly", "softmax_matmul", "conv_norm", "reductions", "indexing", "unused"])
def test_forward_ad_tangents_match_torch(case):
    r = np.random.RandomState(3)
    x, tx, w = r.randn(2, 3, 6, 6), r.randn(2, 3, 6, 6), r.randn(4, 3, 3, 3)

    def fn(lib, fw, x, tx, w):
        F = lib.nn.functional
        d = fw.make_dual(x, tx)
        if case == "poly":
            y = d ** 3 - 2 * d.exp() + (d * w.sum()).tanh() / (1 + d * d)
        elif case == "softmax_matmul":
            y = d.flatten(1).softmax(-1) @ d.flatten(1).t() + F.gelu(d).mean()
        elif case == "conv_norm":
            y = F.layer_norm(F.conv2d(d, w, padding=1).relu(), (6,)).sigmoid()
        elif case == "reductions":
            y = lib.stack([d.sum(), d.amax(), d.norm(), d.var(), lib.logsumexp(d.flatten(), 0)])
        elif case == "indexing":
            y = lib.cat([d[:, 1:, ::2].reshape(2, -1), d.permute(0, 3, 2, 1)[..., 0].reshape(2, -1)], 1)
        else:
            y = w * 2
        return [fw.unpack_dual(y).tangent, fw.unpack_dual(y).primal, fw.unpack_dual(y.argmax()).tangent]

    (tc, pc, ic), (tt, pt, it) = _both(fn, x, tx, w)
    assert ic is None and it is None            # integer outputs carry no tangent
    np.testing.assert_allclose(pc, pt, rtol=1e-10, atol=1e-12)
    if case == "unused":
        assert tc is None and tt is None
    else:
        np.testing.assert_allclose(tc, tt, rtol=1e-9, atol=1e-10)


def test_forward_ad_api_and_errors_match_torch():
    from cthtorch.autograd import forward_ad as fwAD
    x = ct.ones(2)
    p, t = fwAD.unpack_dual(x)
    assert p is x and t is None
    tan = ct.ones(2)
    oracle.raises_like(lambda: fwAD.make_dual(x, tan), lambda: _fwad(torch).make_dual(torch.ones(2), torch.ones(2)))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tan)
        assert fwAD.unpack_dual(d).tangent is tan and ct.equal(fwAD.unpack_dual(d).primal, x)
        out = d * 3
        assert fwAD.unpack_dual(out).primal.grad_fn is None    # as torch's: the primal is a plain tensor
        with torch.autograd.forward_ad.dual_level():
            for bad_ct, bad_t in [((x, ct.ones(3)), (torch.ones(2), torch.ones(3))),
                                  ((x.long(), tan), (torch.ones(2).long(), torch.ones(2))),
                                  ((x, tan.long()), (torch.ones(2), torch.ones(2).long()))]:
                oracle.raises_like(lambda: fwAD.make_dual(*bad_ct),
                                   lambda: torch.autograd.forward_ad.make_dual(*bad_t))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
    assert fwAD.unpack_dual(out).tangent is None             # the level is gone


def test_forward_ad_level_holds_only_live_duals_and_one_seed_per_kind():
    """A loop making and unpacking duals within one level: each unpack differentiates w.r.t. the level's seeds
    (at most a real and a complex one), not w.r.t. every dual made so far, and a dual that is gone leaves
    nothing behind. Tangents still match torch's at every step."""
    from cthtorch.autograd import forward_ad as fwAD
    r = np.random.RandomState(5)
    xs, ts = r.randn(50, 4), r.randn(50, 4)
    got = {ct: [], torch: []}
    for L in (ct, torch):
        fw = _fwad(L)
        with fw.dual_level():
            keep = fw.make_dual(L.tensor(xs[0]), L.tensor(ts[0]))
            for i in range(50):
                d = fw.make_dual(L.tensor(xs[i]), L.tensor(ts[i]))
                got[L].append(fw.unpack_dual((d.sin() * keep).sum()).tangent.item())
                if L is ct:
                    assert len(fwAD._level["duals"]) <= 2 and len(fwAD._level["eps"]) == 1
            c = fw.make_dual(L.tensor(xs[0] + 1j * ts[0]), L.tensor(ts[0] - 1j * xs[0]))
            got[L].append(complex(fw.unpack_dual((c * c).sum()).tangent.item()))
            got[L].append(fw.unpack_dual((c.abs() * keep).sum()).tangent.item())
            if L is ct:
                assert len(fwAD._level["eps"]) == 2   # a complex seed joined the real one
    np.testing.assert_allclose(got[ct], got[torch], rtol=1e-10, atol=1e-12)
    assert fwAD._level == {"eps": {}, "duals": {}, "any_rg": False}   # the level's exit freed everything


def test_forward_ad_dual_keeps_exact_primal_values():
    """The dual's value is the primal's bit for bit: -0.0 stays -0.0, and an inf tangent does not make it NaN."""
    from cthtorch.autograd import forward_ad as fwAD
    x = ct.tensor([-0.0, 1.0, float("inf")], dtype=ct.float64)
    t = ct.tensor([float("inf"), 2.0, 1.0], dtype=ct.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        assert np.array_equal(np.signbit(d.detach().numpy()), [True, False, False])
        assert d.detach().tolist()[1:] == [1.0, float("inf")]
        assert fwAD.unpack_dual(d * 3).tangent.tolist() == [float("inf"), 6.0, 3.0]


def test_forward_ad_through_modules_and_functional_call():
    """The forward-mode AD tutorial's module patterns: parameters swapped for duals, and functional_call."""
    from cthtorch.autograd import forward_ad as fwAD
    from cthtorch.func import functional_call
    ct.manual_seed(0)
    model = ct.nn.Linear(5, 4)
    ref = torch.nn.Linear(5, 4)
    ref.load_state_dict({k: torch.from_numpy(v.detach().numpy()) for k, v in model.state_dict().items()})
    inp = ct.randn(6, 5)
    tangents = {n: ct.rand_like(p) for n, p in model.named_parameters()}
    with fwAD.dual_level():
        duals = {n: fwAD.make_dual(p, tangents[n]) for n, p in model.named_parameters()}
        jvp = fwAD.unpack_dual(functional_call(model, duals, inp)).tangent
    with torch.autograd.forward_ad.dual_level():
        tduals = {n: torch.autograd.forward_ad.make_dual(p, torch.from_numpy(tangents[n].numpy()))
                  for n, p in ref.named_parameters()}
        tjvp = torch.autograd.forward_ad.unpack_dual(torch.func.functional_call(ref, tduals,
                                                                                torch.from_numpy(inp.numpy())))
    np.testing.assert_allclose(jvp.numpy(), tjvp.tangent.detach().numpy(), rtol=1e-5, atol=1e-6)
    # a parameter that requires grad keeps reverse mode working through its dual
    w = ct.randn(3, dtype=ct.float64, requires_grad=True)
    with fwAD.dual_level():
        y = (fwAD.make_dual(w, ct.ones(3, dtype=ct.float64)) ** 2).sum()
        assert abs(fwAD.unpack_dual(y).tangent.item() - 2 * w.sum().item()) < 1e-12
    y.backward()
    assert ct.allclose(w.grad, 2 * w.detach())


class _ExpJvp(ct.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = ct.exp(x)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, g):
        out = g * ctx.result
        del ctx.result
        return out


class _SinJvp(ct.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x.sin()

    @staticmethod
    def jvp(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x.cos()      # wrong on purpose: gradcheck must catch it


def test_custom_function_jvp_and_gradcheck_forward_ad():
    from cthtorch.autograd import forward_ad as fwAD
    a, _ = pair((4, 3))
    tan = ct.randn(4, 3, dtype=ct.float64)
    with fwAD.dual_level():
        out = _ExpJvp.apply(fwAD.make_dual(a, tan))
        after = fwAD.unpack_dual(out.sin()).tangent       # chain: jvp's tangent, then the graph above it
        assert ct.allclose(fwAD.unpack_dual(out).tangent, tan * a.exp())
        assert ct.allclose(after, tan * a.exp() * a.exp().cos())
    assert ct.autograd.gradcheck(_ExpJvp.apply, (a,), check_forward_ad=True, check_backward_ad=False,
                                 check_undefined_grad=False, check_batched_grad=False)
    assert ct.autograd.gradcheck(lambda u, v: (u * v.sin(), u.sum()), (a, pair((4, 3), 1)[0]), check_forward_ad=True)
    gradcheck_error = sys.modules["cthtorch.autograd.gradcheck"].GradcheckError
    with pytest.raises(gradcheck_error, match="Jacobian computed with forward mode mismatch for output 0 with "
                                              "respect to input 0"):
        ct.autograd.gradcheck(_SinJvp.apply, (a,), check_forward_ad=True, check_backward_ad=False)
    assert not ct.autograd.gradcheck(_SinJvp.apply, (a,), check_forward_ad=True, check_backward_ad=False,
                                     raise_exception=False)


# ---- profiler ----

def test_autograd_profiler_times_record_function(tmp_path):
    with ct.autograd.profiler.profile() as prof:
        with ct.autograd.profiler.record_function("outer"):
            for _ in range(2):
                with ct.autograd.profiler.record_function("inner"):
                    ct.randn(50, 50) @ ct.randn(50, 50)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["inner"].count == 2 and avg["outer"].count == 1
    assert avg["outer"].cpu_time_total >= avg["inner"].cpu_time_total > 0
    assert avg["outer"].self_cpu_time_total < avg["outer"].cpu_time_total
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    assert "inner" in table and "# of Calls" in table
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    names = [e["name"] for e in json.load(open(tmp_path / "t.json"))["traceEvents"]]
    assert sorted(n for n in names if not n.startswith("aten::")) == ["inner", "inner", "outer"]
    assert names.count("aten::randn") == 4 and names.count("aten::matmul") == 2
    with ct.autograd.profiler.record_function("nobody listens"):
        pass
    with ct.autograd.profiler.emit_nvtx():
        pass


@pytest.mark.parametrize("kw", [{}, {"sort_by": "self_cpu_time_total", "row_limit": 5},
                                {"max_name_column_width": 10}, {"max_name_column_width": 14},
                                {"max_name_column_width": 15}, {"header": "MY HEADER"},
                                {"top_level_events_only": True}, {"time_unit": "ms"}])
def test_profiler_table_lays_out_like_torch(kw):
    """torch's column widths, alignment, truncation and trailing spaces; the times themselves differ. The range
    sleeps so that its self time is surely above neg's: sort_by=self_cpu_time_total then gives one row order in
    both libraries (on a busy machine a bare neg could take longer than the range's own bookkeeping)."""
    import re
    import time
    tables = []
    for T in (ct, torch):
        x = T.randn(4)
        with T.autograd.profiler.profile() as prof:
            with T.autograd.profiler.record_function("abcdefghijk"):
                T.neg(x)
                time.sleep(0.005)
        tables.append(re.sub(r" *\d+\.\d+(%|us|ms|s)", " N", prof.key_averages().table(**kw)))
    assert tables[0] == tables[1]


def _profile_mm_relu_view(T, **kw):
    x = T.randn(64, 64)
    with T.profiler.profile(activities=[T.profiler.ProfilerActivity.CPU], **kw) as prof:
        z = T.mm(x, x).relu()
        z.view(-1)
    return prof


def test_profiler_memory_columns_and_bytes_as_torch():
    """profile_memory=True: torch's CPU Mem / Self CPU Mem columns, and each op's net bytes (mm and relu allocate
    64*64 floats, a view nothing); torch lists relu's allocation under its clamp_min child, so relu's self is 0
    there: compare the totals per op and the self bytes of the op that allocates"""
    import re
    ours, theirs = (_profile_mm_relu_view(T, profile_memory=True) for T in (ct, torch))
    heads = [re.split(r"\s{2,}", t.key_averages().table().splitlines()[1].strip()) for t in (ours, theirs)]
    assert heads[0] == heads[1] and "Self CPU Mem" in heads[0]
    mem = [{e.key: (e.cpu_memory_usage, e.self_cpu_memory_usage) for e in p.key_averages()} for p in (ours, theirs)]
    for k in ("aten::mm", "aten::view"):
        assert mem[0][k] == mem[1][k]
    assert mem[0]["aten::relu"][0] == mem[1]["aten::relu"][0] == 64 * 64 * 4
    assert "16.00 KB" in ours.key_averages().table(sort_by="self_cpu_memory_usage")
    assert "CPU Mem" not in _profile_mm_relu_view(ct).key_averages().table()


def test_profiler_groups_by_input_shape_as_torch():
    """record_shapes + key_averages(group_by_input_shape=True): the Input Shapes column (torch's width) and each
    average's shapes; without grouping the averages' shapes are blank and the column is gone"""
    tabs, shapes = [], []
    for T in (ct, torch):
        prof = _profile_mm_relu_view(T, record_shapes=True)
        grouped = prof.key_averages(group_by_input_shape=True)
        shapes.append({e.key: e.input_shapes for e in grouped if e.key in ("aten::mm", "aten::view")})
        lines = grouped.table().splitlines()
        # the name column's width follows the longest op name, and torch records more ops (resolve_conj)
        tabs.append([lines[0].split("  ", 1)[1], lines[1].split("Name", 1)[1],
                     [r for r in lines if "aten::mm" in r][0][-28:]])
        assert "Input Shapes" not in prof.key_averages().table()
        assert all(e.input_shapes == "" for e in prof.key_averages())
    assert shapes[0] == shapes[1] and tabs[0] == tabs[1]


def test_profiler_with_flops_as_torch():
    """with_flops=True: torch's counts for conv2d (stride, padding, groups), addmm, mm, bmm, baddbmm, mul and add,
    0 for the rest, and the table's auto-scaled Total FLOPs column"""
    import re
    counts, heads = [], []
    for T in (ct, torch):
        T.manual_seed(0)
        x, w, w2 = T.randn(2, 4, 9, 9), T.randn(6, 2, 3, 3), T.randn(6, 4, 3, 3)
        with T.profiler.profile(with_flops=True) as prof:
            T.nn.functional.conv2d(x, w, None, 2, 1, 1, 2)
            T.nn.functional.conv2d(x, w2, stride=(1, 2), padding=(0, 1))
            T.nn.functional.linear(T.ones(3, 5), T.ones(4, 5), T.ones(4))
            T.mm(T.ones(2, 3), T.ones(3, 7))
            T.baddbmm(T.ones(2, 3, 5), T.ones(2, 3, 4), T.ones(2, 4, 5))
            T.ones(3, 4) * T.ones(4)
            T.ones(5).add(1).relu()
        counts.append(sorted((e.name, e.flops) for e in prof.events() if e.flops))
        lines = prof.key_averages().table(sort_by="flops").splitlines()
        heads.append([lines[1].split()[-2:]] + [re.split(r"\s{2,}", r.strip())[-1] for r in lines[3:7]])
    assert counts[0] == counts[1] and len(counts[0]) == 7
    assert heads[0] == heads[1] and heads[0][0] == ["Total", "FLOPs"]


def test_disabled_profile_binds_none_and_empty_tables_are_empty():
    """the tuning guide's profile(enabled=False): `as prof` binds None, as torch's; a profile that saw no op
    prints an empty table ('' as torch's, not a header with no rows)"""
    for T in (ct, torch):
        with T.autograd.profiler.profile(enabled=False) as p:
            T.ones(2).neg()
        assert p is None
        with T.profiler.profile() as prof:
            pass
        assert prof.key_averages().table() == "" and str(prof.key_averages()) == ""


def test_profiler_event_reprs_as_torch():
    """FunctionEvent / FunctionEventAvg reprs carry torch's fields (times formatted as torch's; the event ids and
    thread numbers are the library's own)"""
    import re
    reprs = []
    for T in (ct, torch):
        with T.autograd.profiler.profile() as prof:
            with T.autograd.profiler.record_function("abc"):
                T.neg(T.ones(2))

        def norm(text):
            return re.sub(r"\d+\.\d+(us|ms|s)", "T", re.sub(r"(id|start_us|end_us|thread)=[\d.]+", r"\1=N",
                                                             re.sub(r"cpu_children=\[[\d, ]+\]", "C", text)))
        reprs.append([norm(repr(prof.function_events[0])), norm(repr(prof.key_averages()[0])),
                      norm(repr(prof.total_average()))])
    assert reprs[0][:2] == reprs[1][:2]
    assert reprs[0][2].split(" input_shapes")[0] == reprs[1][2].split(" input_shapes")[0]


def test_experimental_config_is_torch_c_profiler():
    """torch._C._profiler._ExperimentalConfig(verbose=True) goes to profile(experimental_config=...) in the
    profiler recipe; torch.profiler.ProfilerActivity is the _C._profiler enum"""
    assert ct.profiler.ProfilerActivity is ct._C._profiler.ProfilerActivity
    cfg = ct._C._profiler._ExperimentalConfig(verbose=True)
    with ct.profiler.profile(with_stack=True, experimental_config=cfg) as prof:
        ct.ones(2).neg()
    assert [e.key for e in prof.key_averages()] == ["aten::ones", "aten::neg"] or "aten::neg" in \
        [e.key for e in prof.key_averages()]
    from cthtorch._C._profiler import _ExperimentalConfig  # noqa: F401
    with pytest.raises(TypeError):
        ct._C._profiler._ExperimentalConfig(verbos=True)
    with pytest.raises(TypeError):
        torch._C._profiler._ExperimentalConfig(verbos=True)


def test_torch_profiler_schedule_and_handler(tmp_path):
    import cthtorch.profiler as P
    import torch.profiler as TP
    for lib in (P, TP):
        s = lib.schedule(wait=1, warmup=1, active=2, repeat=1)
        assert [s(i).name for i in range(6)] == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "NONE"]
    ready = []
    with pytest.warns(UserWarning, match="won't be using warmup"):
        sched = P.schedule(wait=1, warmup=0, active=2)
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=sched,
                   on_trace_ready=lambda p: ready.append([e.name for e in p.events()])) as prof:
        for i in range(6):
            with P.record_function("step%d" % i):
                pass
            prof.step()
    assert ready[:2] == [["step1", "step2"], ["step4", "step5"]]
    with P.profile(on_trace_ready=P.tensorboard_trace_handler(str(tmp_path), worker_name="w")):
        with P.record_function("x"):
            pass
    assert len(list(tmp_path.glob("w.*.pt.trace.json"))) == 1


# ---- post-accumulate-grad hooks ----

def _optimizer_in_backward(lib):
    w = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    b = lib.tensor([0.1, 0.2], requires_grad=True)
    seen = {"w": [], "b": []}
    opts = {id(p): lib.optim.SGD([p], lr=0.1, momentum=0.9) for p in (w, b)}

    def hook(p):   # step and free each grad as soon as it is accumulated
        seen["w" if p is w else "b"].append(p.grad.clone().tolist())
        opts[id(p)].step()
        p.grad = None
    handles = [p.register_post_accumulate_grad_hook(hook) for p in (w, b)]
    x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
    for _ in range(3):
        ((x @ w + b) ** 2).sum().backward()
    handles[1].remove()
    ((x @ w + b) ** 2).sum().backward()
    return seen["w"], seen["b"], w.tolist(), b.tolist(), b.grad.tolist(), w.grad


def test_post_accumulate_grad_hook_matches_torch():
    mine, ref = _optimizer_in_backward(ct), _optimizer_in_backward(torch)
    assert mine[5] is None and ref[5] is None and len(mine[0]) == 4 and len(mine[1]) == 3
    for a, b in zip(mine[:5], ref[:5]):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-5)


def test_post_accumulate_grad_hook_errors():
    for lib in (ct, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)
        calls = []
        x.register_post_accumulate_grad_hook(lambda t: calls.append(1))
        lib.autograd.grad((x * 2).sum(), x)   # no accumulation, no hook
        assert calls == []


# ---- final callbacks (what DDP waits on at the end of backward) ----

def _queue_callbacks(lib):
    engine = lib.autograd.Variable._execution_engine
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0], requires_grad=True)
    log = []

    def hook(p):   # queued mid-backward; runs after every .grad is written
        log.append(("hook", p is w))
        engine.queue_callback(lambda: log.append(("cb", w.grad.tolist(), x.grad.tolist())))
        engine.queue_callback(lambda: engine.queue_callback(lambda: log.append("nested")))
    w.register_post_accumulate_grad_hook(hook)
    (w * x).sum().backward()
    inner = []

    def reentrant(p):   # a backward inside a hook has its own callback list
        y = lib.ones(1, requires_grad=True)
        engine.queue_callback(lambda: inner.append("outer"))
        with lib.enable_grad():
            z = y * 3
            z.register_hook(lambda g: engine.queue_callback(lambda: inner.append("inner")) or g)
            z.sum().backward()
        inner.append("after inner backward")
    x.register_post_accumulate_grad_hook(reentrant)
    (w * x).sum().backward()
    errors = []
    for bad in (lambda: None, 5):
        try:
            engine.queue_callback(bad)
        except RuntimeError as e:
            errors.append(str(e))
    return log, inner, errors


def test_queue_callback_matches_torch():
    mine, ref = _queue_callbacks(ct), _queue_callbacks(torch)
    assert mine == ref
    assert mine[0][:3] == [("hook", True), ("cb", [3.0, 4.0], [1.0, 2.0]), "nested"]
    assert mine[1] == ["inner", "after inner backward", "outer"] and len(mine[2]) == 2


def test_saved_only_for_inputs_that_need_a_gradient():
    """As torch: a tensor only a non-required gradient's formula uses is not
    saved, so changing it in place before backward is allowed (embedding_bag's
    weight without per_sample_weights, pytorch/examples rpc/ddp_rpc)."""
    results = []
    for lib in (ct, torch):
        w = lib.tensor(np.arange(40.0).reshape(10, 4), requires_grad=True)
        idx, offs = lib.tensor([1, 2, 3, 3]), lib.tensor([0, 1])
        out = lib.nn.functional.embedding_bag(idx, w, offs, mode="sum")
        assert out.grad_fn._saved_weight is None
        with lib.no_grad():
            w.add_(1)
        (out * lib.arange(8.0, dtype=out.dtype).view(2, 4)).sum().backward()
        results.append(w.grad.numpy().copy())
        # with per_sample_weights requiring grad the weight is saved and checked
        psw = lib.ones(4, dtype=w.dtype, requires_grad=True)
        out = lib.nn.functional.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=psw)
        with lib.no_grad():
            w.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
        a, b = lib.ones(3, requires_grad=True), lib.full((3,), 2.0)
        y = a * b
        assert y.grad_fn._saved_self is None and y.grad_fn._saved_other is not None
        y.sum().backward()
        assert a.grad.tolist() == [2.0, 2.0, 2.0]
    np.testing.assert_array_equal(results[0], results[1])


def test_jacobian_forward_mode_strategy():
    a, ta = pair((3,))
    f = (lambda lib: lambda x: (x.sin() * x.sum(), x.exp()))
    jc = ct.autograd.functional.jacobian(f(ct), a, vectorize=True, strategy="forward-mode")
    jt = torch.autograd.functional.jacobian(f(torch), ta, vectorize=True, strategy="forward-mode")
    for c, t in zip(jc, jt):
        np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    for kw in (dict(), dict(vectorize=True, create_graph=True)):
        oracle.raises_like(lambda: ct.autograd.functional.jacobian(f(ct), a, strategy="forward-mode", **kw),
                           lambda: torch.autograd.functional.jacobian(f(torch), ta, strategy="forward-mode", **kw))


# ---- torch.autograd.graph.saved_tensors_hooks (the saved tensors hooks tutorial) ----

def _saved_hooks_run(L):
    """What pack/unpack hooks see and what backward computes with them, for builtin ops, a custom
    Function, save_on_cpu, double backward through a hooked saved output, and the error cases."""
    out, log = [], []

    def pack(x):
        log.append(("pack", tuple(x.shape), x.requires_grad))
        return x.detach().clone()

    def unpack(x):
        log.append(("unpack", tuple(x.shape)))
        return x

    a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a.pow(2)
        z = (y.exp() * a).sum()
    s = y.grad_fn._saved_self
    out += [s.tolist(), s.requires_grad]
    z.backward()
    out += [a.grad.tolist(), list(log)]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()

    class Sq(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    log.clear()
    with L.autograd.graph.saved_tensors_hooks(pack, unpack):
        q = Sq.apply(a).sum()
    a.grad = None
    q.backward()
    out += [a.grad.tolist(), list(log)]
    L.manual_seed(0)
    b = L.randn(4, 3, requires_grad=True)
    with L.autograd.graph.save_on_cpu():
        loss = L.tanh(L.nn.Linear(3, 2)(b)).sum()
    loss.backward()
    out.append(b.grad.numpy())
    with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        e = a.exp()
    g, = L.autograd.grad(e.sum(), a, create_graph=True)
    a.grad = None
    g.sum().backward()
    out.append(a.grad.tolist())
    with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: 3):
        w = a.sin().sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        w.backward()

    def boom(x):
        raise ValueError("pack failed")

    with L.autograd.graph.saved_tensors_hooks(boom, unpack):
        with pytest.raises(ValueError, match="pack failed"):
            a.exp()
        with pytest.raises(ValueError, match="pack failed"):
            (a * 1).exp_()
    with L.autograd.graph.disable_saved_tensors_hooks("hooks are off"):
        with pytest.raises(RuntimeError, match="hooks are off"):
            with L.autograd.graph.saved_tensors_hooks(pack, unpack):
                pass
        out.append((a * a).sum().item())
    return out


def test_saved_tensors_hooks_match_torch():
    oracle.runs_match(_saved_hooks_run(ct), _saved_hooks_run(torch))


def test_saved_leaf_under_hooks_keeps_its_double_backward():
    """a leaf saved through saved_tensors_hooks: the unpacked tensor's history still reaches the leaf, so
    the second derivative of x*x is 2 (it was None: the unpacked leaf was a new, unconnected one)"""
    got = []
    for L in (ct, torch):
        x = L.tensor([1.5, -2.0], dtype=L.float64, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda a: a * 1, lambda a: a):
            y = (x * x * x).sum()
        g, = L.autograd.grad(y, x, create_graph=True)
        gg, = L.autograd.grad(g.sum(), x, allow_unused=True)
        got.append((g.tolist(), None if gg is None else gg.tolist()))
    assert got[0] == got[1] and got[0][1] is not None


def _raw_saved_run(L):
    """grad_fn._raw_saved_<name> (SavedTensor) and its register_hooks, as the saved tensors hooks tutorial uses
    them: hooks on one saved tensor of one node, the repeated and the freed cases' errors"""
    out, log = [], []
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    out.append(type(raw).__module__ + "." + type(raw).__name__ if type(raw).__module__ != "builtins"
               else type(raw).__name__)
    raw.register_hooks(lambda t: (log.append(("pack", t.tolist())), t * 1)[1],
                       lambda p: (log.append(("unpack", p.tolist())), p)[1])
    with pytest.raises(RuntimeError) as e:
        raw.register_hooks(lambda t: t, lambda t: t)
    out.append(str(e.value))
    out.append(y.grad_fn._saved_self.tolist())
    y.sum().backward()
    out += [x.grad.tolist(), list(log)]
    with pytest.raises(RuntimeError) as e:
        raw.register_hooks(lambda t: t, lambda t: t)
    out.append(str(e.value))
    e2 = x.exp()
    e2.sum().backward()
    with pytest.raises(RuntimeError) as e:
        e2.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    out.append(str(e.value))
    # an output's raw handle: the unpacked result keeps the node as its grad_fn (double backward works)
    z = x.exp()
    z.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach().clone(), lambda t: t)
    g, = L.autograd.grad(z.sum(), x, create_graph=True)
    out.append(L.autograd.grad(g.sum(), x)[0].tolist())
    return out


def test_raw_saved_tensor_register_hooks_matches_torch():
    ours, ref = _raw_saved_run(ct), _raw_saved_run(torch)
    assert ours == ref


# ---- legacy Variable ----

def test_variable_volatile_warns_and_checks_like_torch():
    """pre-0.4 programs (Variable(x, volatile=True) at test time, t.volatile) warn as torch does"""
    for lib in (ct, torch):
        V = lib.autograd.Variable
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            v = V(lib.ones(2), volatile=True)
            assert not v.requires_grad and v.volatile is False
            v.volatile = True
        assert [str(x.message) for x in w] == [
            "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
            "volatile was removed (Variable.volatile is always False)",
            "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."]
        assert w[0].filename == __file__
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="can't be volatile and require_grad at the same time"):
                V(lib.ones(2), requires_grad=True, volatile=True)
        with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
            V(lib.ones(2), volatile=None)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            V([1.0])
        with pytest.raises(TypeError, match="_grad_fn has to be a Function object or None, but got int"):
            V(lib.ones(2), True, False, 1)
        assert V(lib.ones(2), requires_grad=1).requires_grad and V().shape == (0,)


def test_legacy_function_instance_warns_and_call_raises_as_torch():
    """pre-0.4 Functions were instantiated and called: torch warns (DeprecationWarning) on instantiation and
    refuses the call with its text"""
    import warnings
    got = []
    for m in (ct, torch):
        class Double(m.autograd.Function):
            def forward(self, a):
                return a * 2

            def backward(self, g):
                return g * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = Double()
        with pytest.raises(RuntimeError) as e:
            f(m.ones(2))
        got.append(([(r.category, str(r.message)) for r in w], str(e.value)))
    assert got[0] == got[1] and len(got[0][0]) == 1
