"""cthtorch.func (vmap, grad/vjp/jvp/jacrev/hessian on autograd, functional_call) against torch.func."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cthtorch
import cthtorch.func
import oracle

torch = oracle.require_torch()


def _np(t):
    return t.detach().numpy()


def assert_same(ours, ref, atol=1e-5, rtol=1e-5):
    """Same structure, shapes, dtypes and values (pytrees of tensors)."""
    if isinstance(ref, (tuple, list)):
        assert type(ours) is type(ref) and len(ours) == len(ref)
        for o, r in zip(ours, ref):
            assert_same(o, r, atol, rtol)
    elif isinstance(ref, dict):
        assert isinstance(ours, dict) and list(ours) == list(ref)
        for k in ref:
            assert_same(ours[k], ref[k], atol, rtol)
    else:
        assert isinstance(ours, cthtorch.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(ref.shape)
        assert str(ours.dtype) == str(ref.dtype)
        np.testing.assert_allclose(_np(ours), _np(ref), atol=atol, rtol=rtol)


def both(fn):
    """fn(lib) run with cthtorch and with torch on the same data (fn builds its inputs from numpy)."""
    return fn(cthtorch), fn(torch)


RNG = np.random.RandomState(0)
X = RNG.randn(3, 4).astype(np.float32)
Y = RNG.randn(4).astype(np.float32)
Z = RNG.randn(4, 3).astype(np.float32)


# ---------------------------------------------------------------- vmap

@pytest.mark.parametrize("case", [
    "plain", "in_dims_none", "in_dims_1", "neg_in_dim", "out_dims_1", "tuple_out", "dict_out", "list_in",
    "dict_in", "nested", "nested_in_dims", "kwargs", "scalar_result", "int_dtype", "unbatched_out",
    "out_dims_none", "empty_batch",
])
def test_vmap_matches_torch(case):
    def run(lib):
        F = lib.func
        x, y, z = lib.tensor(X), lib.tensor(Y), lib.tensor(Z)
        if case == "plain":
            return F.vmap(lambda a: a.sin() * 2)(x)
        if case == "in_dims_none":
            return F.vmap(lambda a, b: a * b, in_dims=(0, None))(x, y)
        if case == "in_dims_1":
            return F.vmap(lambda a, b: a @ b, in_dims=(1, None))(z, y)
        if case == "neg_in_dim":
            return F.vmap(lambda a: a.cumsum(0), in_dims=-1)(x)
        if case == "out_dims_1":
            return F.vmap(lambda a: a.outer(a), out_dims=1)(x)
        if case == "tuple_out":
            return F.vmap(lambda a: (a.sum(), a * 3), out_dims=(0, 1))(x)
        if case == "dict_out":
            return F.vmap(lambda a: {"m": a.max(), "e": a.exp()})(x)
        if case == "list_in":
            return F.vmap(lambda ab: ab[0] - ab[1], in_dims=([0, 1],))([x, z])
        if case == "dict_in":
            return F.vmap(lambda d, s: d["w"] * d["b"] + s, in_dims=({"w": 0, "b": None}, 0))(
                {"w": x, "b": y}, x.sum(1))
        if case == "nested":
            return F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(0, None))(x, y[0])
        if case == "nested_in_dims":
            return F.vmap(F.vmap(lambda a, b: a + b, in_dims=(None, 0)), in_dims=(0, None))(y, x)
        if case == "kwargs":
            return F.vmap(lambda a, scale=1.0: a * scale)(x, scale=y)
        if case == "scalar_result":
            return F.vmap(lambda a: a.sum())(x)
        if case == "int_dtype":
            return F.vmap(lambda a: a.argmax())(x)
        if case == "unbatched_out":   # an output not depending on the input is expanded
            return F.vmap(lambda a: lib.tensor(3))(x)
        if case == "out_dims_none":
            return F.vmap(lambda a: (a * 2, y), out_dims=(0, None))(x)
        if case == "empty_batch":
            return F.vmap(lambda a: (a.sum(), a * 2))(lib.zeros(0, 3))
        raise AssertionError(case)

    ours, ref = both(run)
    assert_same(ours, ref)


def test_vmap_torch_alias_and_lazy_import():
    assert cthtorch.vmap is cthtorch.func.vmap
    code = "import sys, cthtorch; assert 'cthtorch.func' not in sys.modules; cthtorch.vmap; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_vmap_autograd_through_loop():
    # vmap's result keeps autograd history: grad through vmap matches torch
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        out = lib.func.vmap(lambda a: (a ** 2).sum())(x)
        out.sum().backward()
        return x.grad

    ours, ref = both(run)
    assert_same(ours, ref)
    g = both(lambda lib: lib.func.grad(lambda a: lib.func.vmap(lambda r: r.sin().sum())(a).sum())(lib.tensor(X)))
    assert_same(*g)


def _err(lib, fn):
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.type, str(info.value)


@pytest.mark.parametrize("case", [
    "in_dims_None", "all_none", "mismatch", "bad_type", "in_dims_list", "structure", "non_tensor", "range",
    "no_inputs", "python_scalar", "returns_none", "out_dims_structure", "batched_out_none", "chunk_size",
    "randomness_arg", "random_op",
])
def test_vmap_errors_match_torch(case):
    def named(a):
        return a.sum()

    def run(lib):
        F = lib.func
        x = lib.tensor(X)
        if case == "in_dims_None":
            return F.vmap(named, in_dims=None)(x)
        if case == "all_none":
            return F.vmap(named, in_dims=(None,))(x)
        if case == "mismatch":
            return F.vmap(lambda a, b: a + b)(x, lib.zeros(5, 4))
        if case == "bad_type":
            return F.vmap(named, in_dims="a")(x)
        if case == "in_dims_list":
            return F.vmap(named, in_dims=[0])(x)
        if case == "structure":
            return F.vmap(named, in_dims=(0,))(x, x)
        if case == "non_tensor":
            return F.vmap(lambda a, b: a, in_dims=(0, 0))(x, 1)
        if case == "range":
            return F.vmap(named, in_dims=2)(x)
        if case == "no_inputs":
            return F.vmap(named)()
        if case == "python_scalar":
            return F.vmap(lambda a: 1.0)(x)
        if case == "returns_none":
            return F.vmap(lambda a: None)(x)
        if case == "out_dims_structure":
            return F.vmap(named, out_dims=(0, 1))(x)
        if case == "batched_out_none":
            return F.vmap(named, out_dims=None)(x)
        if case == "chunk_size":
            return F.vmap(named, chunk_size=0)
        if case == "randomness_arg":
            return F.vmap(named, randomness="foo")
        if case == "random_op":
            return F.vmap(lambda a: a + lib.rand(4))(x)
        raise AssertionError(case)

    ours, ref = _err(cthtorch, run), _err(torch, run)
    assert ours[0] is ref[0] or ours[0].__name__ == ref[0].__name__
    assert ours[1] == ref[1].replace("torch.", "cthtorch.") or ours[1] == ref[1]


def test_vmap_randomness_modes():
    x = cthtorch.zeros(4, 3)
    cthtorch.manual_seed(1)
    same = cthtorch.func.vmap(lambda a: a + cthtorch.rand(3), randomness="same")(x)
    assert bool((same == same[0]).all())
    cthtorch.manual_seed(1)
    diff = cthtorch.func.vmap(lambda a: a + cthtorch.rand(3), randomness="different")(x)
    assert not bool((diff == diff[0]).all())
    with pytest.raises(RuntimeError, match="randomness error mode"):
        cthtorch.func.vmap(lambda a: cthtorch.nn.functional.dropout(a, 0.5))(x)


# ---------------------------------------------------------------- grad / vjp / jvp / jacobians

def test_grad_and_value_argnums_aux():
    def run(lib):
        F = lib.func
        x, y = lib.tensor(Y), lib.tensor(X)

        def f(a, b):
            return (a.sin() * b).sum(), b.mean()

        g0 = F.grad(lambda a, b: f(a, b)[0])(x, y)
        g01 = F.grad(lambda a, b: f(a, b)[0], argnums=(0, 1))(x, y)
        gv = F.grad_and_value(f, argnums=1, has_aux=True)(x, y)
        ga = F.grad(f, has_aux=True)(x, y)
        gd = F.grad(lambda d: (d["u"] * d["v"]).sum())({"u": x, "v": x.cos()})
        gneg = F.grad(lambda a, b: (a * b).sum(), argnums=-1)(x, x + 1)
        return g0, g01, gv, ga, gd, gneg

    ours, ref = both(run)
    assert_same(ours, ref)
    for t in cthtorch.utils._pytree.tree_leaves(ours):
        assert not t.requires_grad


def test_grad_nested_and_errors():
    assert_same(*both(lambda lib: lib.func.grad(lib.func.grad(lambda a: a.sin() * a ** 3))(lib.tensor(0.7))))
    for bad in (lambda lib: lib.func.grad(lambda a: a * 2)(lib.tensor(Y)),
                lambda lib: lib.func.grad(lambda a: 1.0)(lib.tensor(Y)),
                lambda lib: lib.func.grad(lambda a: a.sum(), argnums=3)(lib.tensor(Y)),
                lambda lib: lib.func.grad(lambda a: a.sum(), argnums=(0, 0))(lib.tensor(Y)),
                lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(lib.tensor(Y))):
        ours, ref = _err(cthtorch, bad), _err(torch, bad)
        assert ours == ref


def test_grad_connects_to_outer_autograd():
    # inputs that already require grad keep the result attached (torch.func composes with autograd)
    def run(lib):
        x = lib.tensor(Y, requires_grad=True)
        g = lib.func.grad(lambda a: (a ** 3).sum())(x)
        g.sum().backward()
        return g.detach(), x.grad

    ours, ref = both(run)
    assert_same(ours, ref)


def test_grad_output_independent_of_input_is_zero():
    assert_same(*both(lambda lib: lib.func.grad(lambda a, b: (b * 2).sum())(lib.tensor(Y), lib.tensor(Y))))


def test_vjp_jvp():
    def run(lib):
        F = lib.func
        x, z = lib.tensor(X), lib.tensor(Z)

        def f(a, b):
            return (a @ b).tanh(), a.sum()

        out, fn = F.vjp(f, x, z)
        ct = (lib.ones(3, 3), lib.tensor(2.0))
        out_aux, fn_aux, aux = F.vjp(lambda a: (a.exp(), a.max()), x, has_aux=True)
        jv = F.jvp(f, (x, z), (lib.ones(3, 4), lib.full((4, 3), 0.5)))
        jv_aux = F.jvp(lambda a: (a.sin().sum(0), a.cos()), (x,), (x * 0 + 1,), has_aux=True)
        jv_dict = F.jvp(lambda d: d["p"] * d["q"], ({"p": x, "q": x.T.T},), ({"p": x, "q": x.exp()},))
        return out, fn(ct), out_aux, fn_aux(lib.ones(3, 4)), aux, jv, jv_aux, jv_dict

    ours, ref = both(run)
    assert_same(ours, ref)


def test_jacrev_jacfwd_hessian():
    def run(lib):
        F = lib.func
        x, y = lib.tensor(Y), lib.tensor(X)

        def f(a, b):
            return (b @ a).sin(), (a ** 2).sum()

        def scalar(a, b):
            return (b @ a.tanh()).pow(2).sum() + (a ** 3).sum()

        return (F.jacrev(f)(x, y), F.jacrev(f, argnums=(0, 1))(x, y), F.jacfwd(lambda a: a.exp() * a[0])(x),
                F.hessian(scalar)(x, y), F.hessian(scalar, argnums=(0,))(x, y),
                F.jacrev(lambda a: (a.sum(), a.mean()), has_aux=False)(x),
                F.jacrev(lambda d: d["a"] * d["b"].sum())({"a": x, "b": x.cos()}),
                F.jacrev(lambda a: (a.sin(), a.max()), has_aux=True)(x))

    ours, ref = both(run)
    assert_same(ours, ref, atol=1e-4)


def test_jacobians_of_tall_outputs():
    """Outputs with many more elements than the inputs (the Jacobians tutorial's 2048 x 32 linear-tanh) are
    computed column by column; values, nesting, and outputs independent of an input match torch's."""
    w, b, v = RNG.randn(64, 3).astype(np.float32), RNG.randn(64).astype(np.float32), RNG.randn(3).astype(np.float32)

    def run(lib):
        F = lib.func
        W, B, x = lib.tensor(w), lib.tensor(b), lib.tensor(v)

        def predict(weight, bias, a):
            return lib.nn.functional.linear(a, weight, bias).tanh()

        def tall(a, c):
            return (W @ a).sin().reshape(8, 8) * c[0], B.reshape(8, 8)

        return (F.jacrev(predict, argnums=2)(W, B, x), F.jacfwd(predict, argnums=2)(W, B, x),
                F.jacrev(tall, argnums=(0, 1))(x, x[:2].clone()),
                F.jacrev(F.jacrev(lambda a: (W @ a).tanh(), argnums=0))(x))

    ours, ref = both(run)
    assert_same(ours, ref, atol=1e-4)


def test_tall_jacobian_without_double_backward_goes_by_rows():
    """A custom Function whose backward is once_differentiable has no double backward, so the column
    pass fails and the Jacobian is taken row by row: diag(2 W a) W."""
    W, x = cthtorch.tensor(RNG.randn(64, 3).astype(np.float32)), cthtorch.tensor(RNG.randn(3).astype(np.float32))

    class Square(cthtorch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @cthtorch.autograd.function.once_differentiable
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    jac = cthtorch.func.jacrev(lambda a: Square.apply(W @ a))(x)
    np.testing.assert_allclose(_np(jac), _np((2 * (W @ x))[:, None] * W), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- modules

def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


def _copy_state(src, dst):
    with cthtorch.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            p.copy_(cthtorch.tensor(q.detach().numpy()))


def test_per_sample_gradients_mlp():
    data = RNG.randn(5, 4).astype(np.float32)
    targets = np.array([0, 2, 1, 1, 0])

    def run(lib, model):
        F = lib.func
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss_fn(p, x, t):
            out = F.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))

        per_sample = F.vmap(F.grad(loss_fn), in_dims=(None, 0, 0))(params, lib.tensor(data), lib.tensor(targets))
        value = F.vmap(F.grad_and_value(loss_fn), in_dims=(None, 0, 0))(params, lib.tensor(data),
                                                                         lib.tensor(targets))[1]
        return per_sample, value

    ours_model, ref_model = _mlp(cthtorch), _mlp(torch)
    _copy_state(ours_model, ref_model)
    ours, ref = run(cthtorch, ours_model), run(torch, ref_model)
    assert_same(ours, ref, atol=1e-5)
    assert list(ours[0]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert ours[0]["0.weight"].shape == (5, 8, 4)
    # the per-sample gradients average to the full-batch gradient
    ours_model.zero_grad()
    cthtorch.nn.functional.cross_entropy(ours_model(cthtorch.tensor(data)), cthtorch.tensor(targets)).backward()
    np.testing.assert_allclose(_np(ours[0]["2.weight"].mean(0)), _np(ours_model[2].weight.grad), atol=1e-6)


def test_functional_call_swaps_and_restores():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        x = lib.tensor(RNG_BN)
        orig_w = model[0].weight
        new = {"0.weight": lib.ones(2, 3), "0.bias": lib.zeros(2), "1.running_mean": lib.zeros(2),
               "1.running_var": lib.ones(2), "1.num_batches_tracked": lib.tensor(0)}
        out_train = lib.func.functional_call(model, new, x)
        assert model[0].weight is orig_w and isinstance(model[0].weight, lib.nn.Parameter)
        model.eval()
        out_eval = lib.func.functional_call(model, (new, {"1.weight": lib.full((2,), 2.0)}), (x,))
        partial = lib.func.functional_call(model, {"0.bias": lib.ones(2)}, args=x)
        return (out_train, out_eval, partial, new["1.running_mean"], new["1.running_var"],
                new["1.num_batches_tracked"], model[1].running_mean, model[1].num_batches_tracked)

    ours, ref = run(cthtorch), run(torch)
    assert_same(ours[:5], ref[:5])
    assert int(ours[5]) == int(ref[5]) == 1
    assert_same(ours[6:], ref[6:])


RNG_BN = RNG.randn(6, 3).astype(np.float32)


def test_functional_call_restores_on_exception_and_checks_keys():
    model = cthtorch.nn.Linear(3, 2)
    w, b = model.weight, model.bias
    with pytest.raises(RuntimeError):
        cthtorch.func.functional_call(model, {"weight": cthtorch.ones(5, 5)}, cthtorch.ones(1, 3))
    assert model.weight is w and model.bias is b
    for lib in (cthtorch, torch):
        m = lib.nn.Linear(3, 2)
        with pytest.raises(RuntimeError) as info:
            lib.func.functional_call(m, {"weight": lib.ones(2, 3), "extra": lib.ones(1)}, lib.ones(1, 3), strict=True)
        msg = str(info.value)
        assert "Unexpected key(s): 'extra'." in msg and "Missing key(s): 'bias'." in msg
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(m, ({"weight": lib.ones(2, 3)}, {"weight": lib.ones(2, 3)}), lib.ones(1, 3))
    assert not hasattr(model, "extra")


def test_functional_call_tied_weights():
    def run(lib):
        m = lib.nn.Linear(2, 2, bias=False)
        m.tied = m.weight
        m.forward = lambda x: x @ m.weight.T + x @ m.tied.T
        x = lib.ones(1, 2)
        return (lib.func.functional_call(m, {"weight": lib.eye(2)}, x),
                lib.func.functional_call(m, {"weight": lib.zeros(2, 2)}, x, tie_weights=False) - x @ m.weight.T)

    ours, ref = run(cthtorch), run(torch)
    assert_same(ours, ref)


def test_stateless_functional_call_alias():
    from cthtorch.nn.utils import stateless
    assert cthtorch.nn.utils.stateless is stateless
    m = cthtorch.nn.Linear(2, 1)
    with pytest.warns(FutureWarning):
        out = stateless.functional_call(m, {"weight": cthtorch.ones(1, 2), "bias": cthtorch.zeros(1)},
                                        (cthtorch.tensor([[1.0, 2.0]]),))
    assert float(out) == 3.0


def test_stack_module_state_ensemble():
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3)) for _ in range(3)]
        for i, m in enumerate(models):
            with lib.no_grad():
                m[0].weight.fill_(0.1 * (i + 1))
                m[0].bias.fill_(-0.2 * i)
            m.eval()
        params, buffers = lib.func.stack_module_state(models)

        def call(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))

        out = lib.func.vmap(call, in_dims=(0, 0, None))(params, buffers, lib.tensor(Z.T[:2].copy()))
        return params, buffers, out, [p.requires_grad and p.is_leaf for p in params.values()]

    ours, ref = run(cthtorch), run(torch)
    assert_same(ours[:3], ref[:3])
    assert ours[3] == ref[3] == [True, True, True, True]
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        cthtorch.func.stack_module_state([])


def test_replace_all_batch_norm_modules_():
    m = cthtorch.nn.Sequential(cthtorch.nn.Linear(2, 2), cthtorch.nn.BatchNorm1d(2))
    cthtorch.func.replace_all_batch_norm_modules_(m)
    assert m[1].running_mean is None and not m[1].track_running_stats


def test_no_warnings_from_transforms():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cthtorch.func.hessian(lambda a: (a ** 3).sum())(cthtorch.ones(3))


def _functorch_api_run(L):
    """functorch's make_functional(_with_buffers) and combine_state_for_ensemble (torch._functorch), with the
    deprecation warnings its names give: shapes, values, requires_grad and the errors, as torch's"""
    import importlib
    dep = importlib.import_module(L.__name__ + "._functorch.deprecated")
    nn, out = L.nn, []
    L.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    x = L.randn(5, 4)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f, params = dep.make_functional(model)
        dep.vmap(lambda a: a * 2)(x)
    out.append([(c.category.__name__, str(c.message)) for c in w])
    warnings.simplefilter("ignore")
    out += [type(f).__name__, [tuple(p.shape) for p in params], params[0].requires_grad,
            f(params, x).detach().numpy(), model(x).detach().numpy()]
    g = dep.vmap(dep.grad(lambda p, xi: f(p, xi).pow(2).sum()), in_dims=(None, 0))(params, x)
    out += [t.detach().numpy() for t in g]
    bn = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).eval()
    with pytest.raises(RuntimeError) as e:
        dep.make_functional(bn)
    out.append(str(e.value))
    f2, p2, b2 = dep.make_functional_with_buffers(bn, disable_autograd_tracking=True)
    out += [len(p2), [tuple(b.shape) for b in b2], p2[0].requires_grad, f2(p2, b2, x).detach().numpy()]
    models = [nn.Linear(4, 3) for _ in range(3)]
    fm, ps, bs = dep.combine_state_for_ensemble(models)
    out += [[tuple(p.shape) for p in ps], bs, ps[0].requires_grad,
            dep.vmap(fm, in_dims=(0, 0, None))(ps, bs, x).detach().numpy()]
    with pytest.raises(RuntimeError) as e:
        dep.combine_state_for_ensemble([nn.Linear(2, 2), nn.Linear(2, 2).eval()])
    out.append(str(e.value))
    return out


def test_functorch_make_functional_and_ensembles_match_torch():
    with warnings.catch_warnings():
        oracle.runs_match(_functorch_api_run(cthtorch), _functorch_api_run(torch), rtol=1e-5, atol=1e-6)
