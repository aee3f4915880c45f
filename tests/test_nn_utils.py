"""nn.utils weight_norm / spectral_norm (hooks and parametrizations), parametrize, prune vs torch."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
import torch.nn.utils.prune  # noqa: E402,F401  (a submodule torch does not import by itself)
rs = np.random.RandomState(1)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def pair_linear(i=5, o=4):
    tm, cm = torch.nn.Linear(i, o), ct.nn.Linear(i, o)
    cm.load_state_dict({k: ct.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return cm, tm


def load(cm, tm):
    cm.load_state_dict({k: ct.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def step(cm, tm, x):
    ya, yb = cm(ct.tensor(x)), tm(torch.tensor(x))
    close(ya, yb)
    ya.pow(2).sum().backward()
    yb.pow(2).sum().backward()


def test_weight_norm_warns_from_apply_like_torch():
    """torch deprecates WeightNorm.apply, so the FutureWarning is raised there and names one line inside the
    library (a program building many weight-normed layers prints it once), and direct apply calls warn too"""
    for lib in (ct, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
            lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
            lib.nn.utils.weight_norm.__globals__["WeightNorm"].apply(lib.nn.Linear(3, 2), "weight", 0)
        assert [x.category for x in w] == [FutureWarning] * 3, lib
        assert "parametrizations.weight_norm" in str(w[0].message)
        # the first two name the same library line, not this test's two call sites
        assert (w[0].filename, w[0].lineno) == (w[1].filename, w[1].lineno), lib
        assert w[0].filename.endswith("weight_norm.py") and w[2].filename == __file__, lib


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook(dim):
    cm, tm = pair_linear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ct.nn.utils.weight_norm(cm, dim=dim)
        torch.nn.utils.weight_norm(tm, dim=dim)
    assert sorted(dict(cm.named_parameters())) == sorted(dict(tm.named_parameters()))
    close(cm.weight_g, tm.weight_g)
    step(cm, tm, rs.randn(3, 5).astype(np.float32))
    close(cm.weight_g.grad, tm.weight_g.grad)
    close(cm.weight_v.grad, tm.weight_v.grad)
    ct.nn.utils.remove_weight_norm(cm)
    torch.nn.utils.remove_weight_norm(tm)
    close(cm.weight, tm.weight)
    assert sorted(dict(cm.named_parameters())) == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        ct.nn.utils.remove_weight_norm(cm)


def test_weight_norm_parametrization():
    cm, tm = pair_linear()
    ct.nn.utils.parametrizations.weight_norm(cm)
    torch.nn.utils.parametrizations.weight_norm(tm)
    assert sorted(cm.state_dict()) == sorted(tm.state_dict())
    assert type(cm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    step(cm, tm, rs.randn(3, 5).astype(np.float32))
    close(cm.parametrizations.weight.original0.grad, tm.parametrizations.weight.original0.grad)
    close(cm.parametrizations.weight.original1.grad, tm.parametrizations.weight.original1.grad)
    ct.nn.utils.parametrize.remove_parametrizations(cm, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert type(cm) is ct.nn.Linear
    close(cm.weight, tm.weight)


def test_spectral_norm_hook():
    cm, tm = pair_linear(6, 4)
    ct.nn.utils.spectral_norm(cm)
    torch.nn.utils.spectral_norm(tm)
    load(cm, tm)   # same u, v start
    for _ in range(2):
        step(cm, tm, rs.randn(3, 6).astype(np.float32))
    close(cm.weight_u, tm.weight_u)
    close(cm.weight_orig.grad, tm.weight_orig.grad, 1e-4)
    cm.eval(), tm.eval()
    step(cm, tm, rs.randn(3, 6).astype(np.float32))
    ct.nn.utils.remove_spectral_norm(cm)
    torch.nn.utils.remove_spectral_norm(tm)
    close(cm.weight, tm.weight)


def test_spectral_norm_parametrization_conv():
    tm, cm = torch.nn.Conv2d(3, 4, 3), ct.nn.Conv2d(3, 4, 3)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    ct.nn.utils.parametrizations.spectral_norm(cm)
    assert sorted(cm.state_dict()) == sorted(tm.state_dict())
    load(cm, tm)
    x = rs.randn(2, 3, 5, 5).astype(np.float32)
    step(cm, tm, x)
    close(cm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, 1e-4)
    close(cm.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u)


def test_parametrize_custom_and_cached():
    class Sym(ct.nn.Module):
        def forward(self, x):
            return (x + x.t()) / 2

    m = ct.nn.Linear(3, 3)
    ct.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
    assert ct.nn.utils.parametrize.is_parametrized(m, "weight")
    w = m.weight
    np.testing.assert_allclose(w.detach().numpy(), w.detach().numpy().T, atol=1e-6)
    with ct.nn.utils.parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    with pytest.raises(RuntimeError, match="parametrization Sym does not implement right_inverse"):
        m.weight = ct.eye(3) * 2


def test_parametrize_errors():
    class Bad(ct.nn.Module):
        def forward(self, x):
            return x[:1]

    m = ct.nn.Linear(3, 3)
    with pytest.raises(ValueError, match="may not change the shape of the tensor"):
        ct.nn.utils.parametrize.register_parametrization(m, "weight", Bad())
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        ct.nn.utils.parametrize.register_parametrization(m, "nope", Bad())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        ct.nn.utils.parametrize.remove_parametrizations(m, "weight")


def test_prune_l1_and_remove():
    cm, tm = pair_linear(6, 5)
    ct.nn.utils.prune.l1_unstructured(cm, "weight", amount=0.3)
    torch.nn.utils.prune.l1_unstructured(tm, "weight", amount=0.3)
    np.testing.assert_array_equal(cm.weight_mask.numpy(), tm.weight_mask.numpy())
    ct.nn.utils.prune.l1_unstructured(cm, "weight", amount=4)
    torch.nn.utils.prune.l1_unstructured(tm, "weight", amount=4)
    np.testing.assert_array_equal(cm.weight_mask.numpy(), tm.weight_mask.numpy())
    assert ct.nn.utils.prune.is_pruned(cm)
    step(cm, tm, rs.randn(2, 6).astype(np.float32))
    close(cm.weight_orig.grad, tm.weight_orig.grad)
    ct.nn.utils.prune.remove(cm, "weight")
    torch.nn.utils.prune.remove(tm, "weight")
    close(cm.weight, tm.weight)
    assert not ct.nn.utils.prune.is_pruned(cm)
    assert sorted(cm.state_dict()) == ["bias", "weight"]


def test_prune_random_amounts():
    m = ct.nn.Linear(10, 10)
    ct.nn.utils.prune.random_unstructured(m, "weight", 0.25)
    assert int((m.weight_mask == 0).sum()) == 25 and int((m.weight == 0).sum()) >= 25
    with pytest.raises(ValueError, match="should either be a float in the range"):
        ct.nn.utils.prune.random_unstructured(m, "bias", 1.5)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune"):
        ct.nn.utils.prune.l1_unstructured(m, "bias", 11)


def test_prune_structured_and_container_match_torch():
    """the pruning tutorial's sequence: random_unstructured, l1 on the bias, ln_structured on top (a
    PruningContainer whose structured method sees only the kept channels), random_structured; masks equal torch's"""
    tm, cm = torch.nn.Conv2d(3, 6, 3), ct.nn.Conv2d(3, 6, 3)
    load(cm, tm)
    torch.manual_seed(4)
    ct.manual_seed(4)
    for lib, m in ((ct, cm), (torch, tm)):
        P = lib.nn.utils.prune
        P.random_unstructured(m, "weight", amount=0.3)
        P.l1_unstructured(m, "bias", amount=3)
        P.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
        P.ln_structured(m, "weight", amount=1, n=1, dim=1)
        P.random_structured(m, "bias", amount=0.5, dim=0)
    for name in ("weight_mask", "bias_mask"):
        np.testing.assert_array_equal(getattr(cm, name).numpy(), getattr(tm, name).numpy())
    close(cm.weight, tm.weight)
    hook = [h for h in cm._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
    assert isinstance(hook, ct.nn.utils.prune.PruningContainer)
    assert [type(h).__name__ for h in hook] == ["RandomUnstructured", "LnStructured", "LnStructured"]
    assert len(hook) == 3 and isinstance(hook[1], ct.nn.utils.prune.LnStructured)
    step(cm, tm, rs.randn(2, 3, 5, 5).astype(np.float32))
    close(cm.weight_orig.grad, tm.weight_orig.grad)
    ct.nn.utils.prune.remove(cm, "weight")
    torch.nn.utils.prune.remove(tm, "weight")
    close(cm.weight, tm.weight)
    # torch's text names the class (its module path differs): compare the rest
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
                                        'method .*LnStructured.* of type structured'):
        ct.nn.utils.prune.global_unstructured([(cm, "bias")], ct.nn.utils.prune.LnStructured, amount=1, n=1, dim=0)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 4)])
def test_orthogonal_parametrization_matches_torch(shape, orthogonal_map):
    """the weight at registration (the old weight made orthogonal; a wide/tall one completed with the generator's
    randn, as torch), after a step on `original`, its gradient, and the next random numbers, all as torch's"""
    out = []
    for lib in (torch, ct):
        lib.manual_seed(0)
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.randn(*shape))
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
        W0 = m.weight.detach().clone()
        with lib.no_grad():   # keeps householder's sign diagonal (-1) as it is
            m.parametrizations.weight.original.add_(0.3 * lib.ones(shape).tril(-1) - 0.2 * lib.ones(shape).triu(1))
        m.weight.pow(3).sum().backward()
        out.append((W0, m.weight.detach(), m.parametrizations.weight.original.grad, lib.randn(3)))
    for t, c in zip(*out):
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)
    W = out[1][1]
    tall = W.mT if shape[-2] < shape[-1] else W
    np.testing.assert_allclose((tall.mT @ tall).numpy(), np.broadcast_to(np.eye(tall.shape[-1]), tall.mT.shape[:-1]
                               + (tall.shape[-1],)), atol=1e-5)


@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 3)])
def test_householder_without_trivialization_matches_torch(shape):
    """orthogonal(..., 'householder', use_trivialization=False) stores the weight's QR reflectors (geqrf, R's
    diagonal signs on the diagonal), so the weight at registration is the weight's orthogonal factor; the
    reflectors, the weight, a gradient and an assigned orthogonal matrix read back, all as torch's"""
    out = []
    for lib in (torch, ct):
        lib.manual_seed(0)
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.randn(*shape))
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
        orig = m.parametrizations.weight.original
        W0 = m.weight.detach().clone()
        m.weight.pow(3).sum().backward()
        Q = lib.linalg.qr(lib.randn(*shape) if shape[-2] >= shape[-1] else lib.randn(*shape).mT).Q
        m.weight = Q if shape[-2] >= shape[-1] else Q.mT
        out.append((orig.detach().clone(), W0, orig.grad, m.weight.detach()))
    for t, c in zip(*out):
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


def test_orthogonal_errors_match_torch():
    for bad in (lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr"),
                lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="bias"),
                lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="nope")):
        oracle.raises_like(lambda: bad(ct), lambda: bad(torch), first_line=True)
    cm, tm = pair_linear(3, 3)
    ct.nn.utils.parametrizations.orthogonal(cm, use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(tm, use_trivialization=False)
    close(cm.weight, tm.weight)   # the map of the Linear's own weight: right_inverse declined
    oracle.raises_like(lambda: setattr(cm, "weight", ct.eye(3)), lambda: setattr(tm, "weight", torch.eye(3)))
    cm = ct.nn.utils.parametrizations.orthogonal(ct.nn.Linear(3, 3))
    tm = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 3))
    oracle.raises_like(lambda: setattr(cm, "weight", ct.eye(2)), lambda: setattr(tm, "weight", torch.eye(2)))


def grads_pair():
    g = [rs.randn(3, 4), rs.randn(5)]
    out = []
    for m in (ct, torch):
        ps = [m.nn.Parameter(m.tensor(a)) for a in g] + [m.nn.Parameter(m.ones(2))]   # the last has no grad
        for p, a in zip(ps, g):
            p.grad = m.tensor(a * 3)
        out.append(ps)
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1, "inf", 0.5])
def test_get_total_norm_and_clip_grads_with_norm(norm_type):
    cps, tps = grads_pair()
    cn = ct.nn.utils.get_total_norm([p.grad for p in cps[:2]], norm_type)
    tn = torch.nn.utils.get_total_norm([p.grad for p in tps[:2]], norm_type)
    close(cn, tn, 1e-10)
    assert cn.dtype == ct.float64
    assert not cn.requires_grad and not tn.requires_grad   # no graph, even from a leaf that requires grad
    assert not ct.nn.utils.get_total_norm([cps[0]], norm_type).requires_grad
    assert not torch.nn.utils.get_total_norm([tps[0]], norm_type).requires_grad
    ct.nn.utils.clip_grads_with_norm_(cps, 2.5, cn)
    torch.nn.utils.clip_grads_with_norm_(tps, 2.5, tn)
    for a, b in zip(cps[:2], tps[:2]):
        close(a.grad, b.grad, 1e-10)
    assert cps[2].grad is None
    assert float(ct.nn.utils.get_total_norm([])) == 0.0
    cps, tps = grads_pair()
    close(ct.nn.utils.clip_grad_norm_(cps, 1.0, norm_type), torch.nn.utils.clip_grad_norm_(tps, 1.0, norm_type), 1e-10)
    close(cps[0].grad, tps[0].grad, 1e-10)
    bad = [ct.tensor([1.0, float("nan")])], [torch.tensor([1.0, float("nan")])]
    oracle.raises_like(lambda: ct.nn.utils.get_total_norm(bad[0], error_if_nonfinite=True),
                       lambda: torch.nn.utils.get_total_norm(bad[1], error_if_nonfinite=True))


def test_fusion_exports_and_skip_init():
    conv, bn = ct.nn.Conv2d(3, 4, 3), ct.nn.BatchNorm2d(4)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    conv.eval(), bn.eval()
    x = ct.randn(2, 3, 6, 6)
    close(ct.nn.utils.fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)))
    lin, bn1 = ct.nn.Linear(5, 4), ct.nn.BatchNorm1d(4)
    lin.eval(), bn1.eval()
    x = ct.randn(3, 5)
    close(ct.nn.utils.fuse_linear_bn_eval(lin, bn1)(x), bn1(lin(x)))
    m = ct.nn.utils.skip_init(ct.nn.Linear, 6, out_features=2, bias=False)
    assert type(m) is ct.nn.Linear and m.weight.shape == (2, 6) and m.bias is None and m.weight.requires_grad
    oracle.raises_like(lambda: ct.nn.utils.skip_init(int), lambda: torch.nn.utils.skip_init(int))

    class NoDevice(ct.nn.Module):
        pass

    class TNoDevice(torch.nn.Module):
        pass
    oracle.raises_like(lambda: ct.nn.utils.skip_init(NoDevice), lambda: torch.nn.utils.skip_init(TNoDevice))


def test_convert_conv2d_weight_memory_format_keeps_values():
    seq = ct.nn.Sequential(ct.nn.Conv2d(3, 4, 3), ct.nn.ReLU(), ct.nn.Sequential(ct.nn.ConvTranspose2d(4, 2, 3)))
    before = [seq[0].weight.detach().clone(), seq[2][0].weight.detach().clone()]
    x = ct.randn(1, 3, 7, 7)
    y = seq(x)
    assert ct.nn.utils.convert_conv2d_weight_memory_format(seq, ct.channels_last) is seq
    assert isinstance(seq[0].weight, ct.nn.Parameter)
    close(seq[0].weight, before[0], 0)
    close(seq[2][0].weight, before[1], 0)
    close(seq(x), y)


@pytest.mark.parametrize("old,new,args", [("eye", "eye_", (3, 4)), ("dirac", "dirac_", (4, 2, 3)),
                                          ("uniform", "uniform_", (3,)), ("sparse", "sparse_", (4, 3))])
def test_init_deprecated_aliases_warn_like_torch(old, new, args):
    extra = (0.5,) if old == "sparse" else ()
    with warnings.catch_warnings(record=True) as cw:
        warnings.simplefilter("always")
        out = getattr(ct.nn.init, old)(ct.empty(*args), *extra)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        getattr(torch.nn.init, old)(torch.empty(*args), *extra)
    assert [w.category for w in cw] == [w.category for w in tw] == [FutureWarning]
    assert str(cw[0].message) == str(tw[0].message)
    if old in ("eye", "dirac"):
        ref = getattr(torch.nn.init, new)(torch.empty(*args))
        close(out, ref, 0)


def test_flatten_dense_tensors_as_torch():
    """torch._utils._flatten_dense_tensors/_unflatten_dense_tensors (improved-diffusion's fp16_util keeps its
    master weights with them): one flat buffer, a lone contiguous tensor viewed not copied, views back out"""
    from cthtorch._utils import _flatten_dense_tensors as flat_c, _unflatten_dense_tensors as unflat_c
    from torch._utils import _flatten_dense_tensors as flat_t, _unflatten_dense_tensors as unflat_t
    shapes = [(2, 3), (4,), (1, 2, 2)]
    ts = [rs.randn(*s).astype(np.float32) for s in shapes]
    c = flat_c([ct.tensor(a).t() if a.ndim == 2 else ct.tensor(a) for a in ts])
    t = flat_t([torch.tensor(a).t() if a.ndim == 2 else torch.tensor(a) for a in ts])
    assert c.shape == t.shape and np.array_equal(c.numpy(), t.numpy())
    a = ct.ones(2, 2)
    assert flat_c([a])._base is a and flat_t([torch.ones(2, 2)])._base is not None
    parts = unflat_c(c, [ct.zeros(*s) for s in shapes])
    assert isinstance(parts, tuple) and [tuple(p.shape) for p in parts] == shapes
    assert all(p._base is c for p in parts)
    assert np.array_equal(parts[1].numpy(), unflat_t(t, [torch.zeros(*s) for s in shapes])[1].numpy())
    parts[0].fill_(7)          # views: writing one writes the buffer
    assert c[:6].eq(7).all()
    x = ct.ones(2, requires_grad=True)
    assert type(flat_c([x, x * 2]).grad_fn).__name__ == "CatBackward0"
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(3\) exceeds dimension size \(4\)"):
        unflat_c(ct.arange(4.), [ct.zeros(2), ct.zeros(3)])
    with pytest.raises(ValueError) as e:
        flat_c([])
    with pytest.raises(ValueError) as e_t:
        flat_t([])
    assert str(e.value) == str(e_t.value)


def test_clip_grad_norm_without_underscore_warns_as_torchs_deprecation():
    got = []
    for lib in (ct, torch):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.full((3,), 4.0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            n = lib.nn.utils.clip_grad_norm(p, 1.0)
        got.append(([(x.category, str(x.message), x.filename) for x in w], float(n), p.grad.tolist()))
    assert got[0] == got[1] and got[0][0][0][2] == __file__


def _deprecation_warnings(lib):
    calls = [lambda: lib.nn.utils.clip_grad_norm(lib.nn.Linear(2, 2).parameters(), 1.0),
             lambda: lib.nn.functional.upsample(lib.ones(1, 1, 2, 2), scale_factor=2),
             lambda: lib.nn.functional.upsample_nearest(lib.ones(1, 1, 2, 2), scale_factor=2),
             lambda: lib.nn.functional.upsample_bilinear(lib.ones(1, 1, 2, 2), scale_factor=2)]
    out = []
    for call in calls:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        out.append([(x.category.__name__, str(x.message).split(" (Triggered")[0], x.filename) for x in w])
    return out


def test_deprecated_spellings_warn_as_torch():
    """clip_grad_norm (FutureWarning), F.upsample/upsample_nearest/upsample_bilinear: torch's category and text,
    from the caller's line"""
    assert _deprecation_warnings(ct) == _deprecation_warnings(torch)


_ONCE_WARNINGS = """
import sys, warnings, importlib
torch = importlib.import_module(sys.argv[1])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    torch.ones(2, 3, 4).T
    torch.ones(2, 3, 4).T
    torch.set_default_tensor_type(torch.FloatTensor)
    torch.set_default_tensor_type(torch.FloatTensor)
print([str(x.message).split(" (Triggered")[0] for x in w])
"""


def test_once_per_process_deprecations_as_torch():
    """x.T beyond 2-D and set_default_tensor_type warn once per process (torch's TORCH_WARN_ONCE), each run
    in a fresh process"""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outs = [subprocess.run([sys.executable, "-c", _ONCE_WARNINGS, lib], capture_output=True, text=True, timeout=120,
                           env=env).stdout for lib in ("cthtorch", "torch")]
    assert outs[0] == outs[1] and outs[0].count("deprecated") == 2


def test_clip_grad_norm_without_underscore_warns_and_clips_as_torch():
    """the pre-0.4 name still clips in place and returns the total norm, with torch's FutureWarning"""
    got = []
    for m in (ct, torch):
        p = m.nn.Parameter(m.tensor([3.0, 4.0]))
        p.grad = m.tensor([3.0, 4.0])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = m.nn.utils.clip_grad_norm([p], 1.0)
            m.nn.utils.clip_grad_norm_([p], 1.0)
        got.append((float(total), p.grad.tolist(), [(x.category.__name__, str(x.message)) for x in w]))
    assert got[0] == got[1] and len(got[0][2]) == 1
