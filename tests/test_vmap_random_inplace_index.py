"""vmap's in-place ops on unbatched targets, random ops in each randomness mode, and batched integer indices
(gather, index_select, take_along_dim, scatter, advanced indexing), against torch.func.vmap."""
import sys
import warnings

import numpy as np
import pytest

import cthtorch
import cthtorch.func
import oracle

torch = oracle.require_torch()
_vmap_mod = sys.modules["cthtorch.func._vmap"]
_batched = sys.modules["cthtorch.func._batched"]

RNG = np.random.RandomState(0)
X = RNG.randn(4, 5, 6).astype(np.float32)
IDX = RNG.randint(0, 5, size=(4, 3))
IDX3 = RNG.randint(0, 6, size=(4, 5, 6))
ROWS = np.array([[1., 2, 3], [4, 5, 6]], dtype=np.float32)


def _both(fn):
    """fn's result or (error type, message) in torch and in cthtorch"""
    out = []
    for L in (torch, cthtorch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(L))
        except Exception as e:     # compared below: the same type and message as torch
            out.append((type(e).__name__, str(e)))
    return out


# ---------------------------------------------------------------- in-place ops

def _into_zeros(op):
    def build(L):
        def f(a):
            z = L.zeros(3)
            op(L, z, a)
            return z
        return L.func.vmap(f)(L.tensor(ROWS))
    return build


INPLACE_UNBATCHED_TARGET = {
    "setitem_int": lambda L, z, a: z.__setitem__(0, a[0]),
    "setitem_slice": lambda L, z, a: z.__setitem__(slice(None), a),
    "setitem_tensor_index": lambda L, z, a: z.__setitem__(L.tensor([0, 2]), a[:2]),
    "copy_": lambda L, z, a: z.copy_(a),
    "mul_": lambda L, z, a: z.mul_(a),
    "sub_": lambda L, z, a: z.sub_(a),
    "imul": lambda L, z, a: z.__imul__(a),
    "add_": lambda L, z, a: z.add_(a),
    "masked_fill_": lambda L, z, a: z.masked_fill_(a > 2, 1.),
    "index_put_": lambda L, z, a: z.index_put_((L.tensor([0]),), a[:1]),
    "fill_": lambda L, z, a: z.fill_(a[0]),
    "scatter_": lambda L, z, a: z.scatter_(0, L.tensor([0]), a[:1]),
    "lerp_": lambda L, z, a: z.lerp_(a, 0.5),
}


@pytest.mark.parametrize("case", sorted(INPLACE_UNBATCHED_TARGET))
def test_inplace_into_unbatched_target_raises_as_torch(case):
    ref, ours = _both(_into_zeros(INPLACE_UNBATCHED_TARGET[case]))
    assert isinstance(ref, tuple) and ref[0] == "RuntimeError"
    assert ours == ref


def test_augmented_assignment_into_unbatched_target_raises():
    # z += a must not fall back to z = z + a (rebinding z to a batched value)
    def build(L):
        def f(a):
            z = L.zeros(3)
            z += a
            return z
        return L.func.vmap(f)(L.tensor(ROWS))
    ref, ours = _both(build)
    assert ref == ("RuntimeError", "output with shape [3] doesn't match the broadcast shape [2, 3]")
    assert ours == ref


INPLACE_BATCHED_TARGET = {
    "setitem_row": lambda L, t, a: t.__setitem__(0, a[1]),
    "setitem_tensor_index": lambda L, t, a: t.__setitem__(L.tensor([0, 2]), a[:2]),
    "index_put_": lambda L, t, a: t.index_put_((L.tensor([1]),), L.tensor([9.])),
    "masked_fill_": lambda L, t, a: t.masked_fill_(a > 2, -1.),
    "copy_add_": lambda L, t, a: t.copy_(a * 2).add_(a),
    "unbatched_value": lambda L, t, a: t.__setitem__(1, L.tensor(7.)),
    "index_put_accumulate": lambda L, t, a: t.index_put_((L.tensor([1, 1, 0]),), a * 2, accumulate=True),
    "index_put_out_of_place": lambda L, t, a: t.copy_(t.index_put((L.tensor([2]),), a[:1])),
    "setitem_mask": lambda L, t, a: t.__setitem__(L.tensor([True, False, True]), a[1]),
    "setitem_tensor_index_scalar": lambda L, t, a: t.__setitem__(L.tensor([[0], [2]]), 5.),
}


@pytest.mark.parametrize("case", sorted(INPLACE_BATCHED_TARGET))
def test_inplace_into_batched_target_matches_torch(case):
    op = INPLACE_BATCHED_TARGET[case]

    def build(L):
        def f(a):
            t = a.clone()
            op(L, t, a)
            return t
        return L.func.vmap(f)(L.tensor(ROWS))
    before = _batched.per_op_loops
    ref, ours = _both(build)
    assert _vmap_mod.last_path == "batched" and _batched.per_op_loops == before
    np.testing.assert_allclose(ours.numpy(), ref.numpy())


# ---------------------------------------------------------------- randomness

F_CASES = {
    "rand": lambda L, a: L.rand(4) + a * 0,
    "randn_size_tuple": lambda L, a: L.randn((2, 4)),
    "randint": lambda L, a: L.randint(0, 10, (4,)),
    "randn_like": lambda L, a: L.randn_like(a),
    "rand_like": lambda L, a: L.rand_like(a),
    "randint_like": lambda L, a: L.randint_like(a, 10),
    "normal_": lambda L, a: a.clone().normal_(),
    "uniform_": lambda L, a: a.clone().uniform_(),
    "bernoulli_": lambda L, a: a.clone().bernoulli_(0.5),
    "exponential_": lambda L, a: a.clone().exponential_(),
    "normal_size": lambda L, a: L.normal(0., 1., (4,)),
    "randperm": lambda L, a: L.randperm(4),
    "dropout_mask": lambda L, a: L.nn.functional.dropout(L.ones_like(a), 0.5),
    "dropout_unbatched": lambda L, a: L.nn.functional.dropout(L.ones(4), 0.5) + a * 0,
    "bernoulli_p": lambda L, a: L.bernoulli(a),
    "bernoulli_float": lambda L, a: L.bernoulli(a, 0.5),
    "normal_mean": lambda L, a: L.normal(a, 1.0),
    "multinomial": lambda L, a: L.multinomial(a, 2),
    "unbatched_inplace": lambda L, a: L.empty(4).normal_() + a * 0,
}


@pytest.mark.parametrize("mode", ["same", "different"])
@pytest.mark.parametrize("case", sorted(F_CASES))
def test_random_ops_batched_by_mode(case, mode):
    op = F_CASES[case]
    ref, ours = _both(lambda L: L.func.vmap(lambda a: op(L, a), randomness=mode)(L.rand(6, 4) * 0.8 + 0.1))
    if isinstance(ref, tuple):
        assert ours == ref      # 'same' with a batched input, 'different' in place on an unbatched tensor
        return
    assert _vmap_mod.last_path == "batched"     # drawn in the batched run, no per-sample rerun
    assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == str(ref.dtype)
    rows_equal = [bool((ours[i] == ours[0]).all()) for i in range(1, ours.shape[0])]
    if mode == "same":
        assert all(rows_equal)
    else:
        assert not all(rows_equal)      # independent samples (six rows of 4 draws cannot all coincide)


@pytest.mark.parametrize("case", sorted(F_CASES))
def test_random_ops_in_error_mode_raise_as_torch(case):
    op = F_CASES[case]
    ref, ours = _both(lambda L: L.func.vmap(lambda a: op(L, a))(L.rand(6, 4) * 0.8 + 0.1))
    assert ref[0] == "RuntimeError" and "randomness error mode" in ref[1]
    assert ours == ref


def test_random_different_draws_independent_statistics():
    # 'different': 2000 samples of one uniform each; they are spread as independent draws are
    cthtorch.manual_seed(0)
    u = cthtorch.func.vmap(lambda a: cthtorch.rand(()) + a, randomness="different")(cthtorch.zeros(2000))
    assert _vmap_mod.last_path == "batched"
    assert abs(float(u.mean()) - 0.5) < 0.05 and len(set(u.tolist())) > 1990


def test_random_nested_different_batches_both_levels():
    f = cthtorch.func.vmap(cthtorch.func.vmap(lambda a: cthtorch.rand(2) + a, randomness="different"),
                           randomness="different")
    out = f(cthtorch.zeros(3, 4))
    assert tuple(out.shape) == (3, 4, 2)
    assert len(set(out.reshape(-1).tolist())) == 24


def test_random_wrappers_removed_after_the_call():
    before = (cthtorch.rand, cthtorch.dropout, cthtorch.Tensor.normal_)
    cthtorch.func.vmap(lambda a: cthtorch.rand(2) + a.normal_(), randomness="different")(cthtorch.zeros(3, 2))
    assert (cthtorch.rand, cthtorch.dropout, cthtorch.Tensor.normal_) == before
    assert ("normal_" in vars(cthtorch.Tensor)) == ("normal_" in vars(torch.Tensor))


def test_random_captured_reference_still_correct_by_the_loop():
    # a reference taken before vmap bypasses the wrappers: the generator moved behind batching's back,
    # so the loop redoes func and the samples still differ
    r = cthtorch.rand
    out = cthtorch.func.vmap(lambda a: r(3) + a, randomness="different")(cthtorch.zeros(4, 3))
    assert _vmap_mod.last_path == "loop"
    assert not bool((out == out[0]).all())


# ---------------------------------------------------------------- batched indices

INDEX_CASES = {
    "index_select_batched_index": lambda L: L.func.vmap(lambda x, i: x.index_select(0, i))(
        L.tensor(X), L.tensor(IDX)),
    "index_select_unbatched_input": lambda L: L.func.vmap(lambda i, x: L.index_select(x, 1, i), in_dims=(0, None))(
        L.tensor(IDX), L.tensor(X[0])),
    "getitem_batched_index": lambda L: L.func.vmap(lambda x, i: x[i])(L.tensor(X), L.tensor(IDX)),
    "getitem_batched_index_dim1": lambda L: L.func.vmap(lambda x, i: x[:, i])(L.tensor(X), L.tensor(IDX)),
    "getitem_unbatched_tensor": lambda L: L.func.vmap(lambda i, x: x[i], in_dims=(0, None))(
        L.tensor(IDX), L.tensor(X[0])),
    "getitem_two_indices": lambda L: L.func.vmap(lambda x, i: x[i, i])(L.tensor(X), L.tensor(IDX)),
    "getitem_negative": lambda L: L.func.vmap(lambda x, i: x[i - 5])(L.tensor(X), L.tensor(IDX)),
    "gather": lambda L: L.func.vmap(lambda x, i: x.gather(1, i))(L.tensor(X), L.tensor(IDX3)),
    "gather_unbatched_index": lambda L: L.func.vmap(lambda x: L.gather(x, 0, L.tensor([[0, 1, 2, 3, 4, 0]] * 2)))(
        L.tensor(X)),
    "gather_unbatched_input": lambda L: L.func.vmap(lambda i, x: L.gather(x, 1, i), in_dims=(0, None))(
        L.tensor(IDX3), L.tensor(X[0])),
    "take_along_dim": lambda L: L.func.vmap(lambda x, i: L.take_along_dim(x, i % 5, 0))(L.tensor(X),
                                                                                       L.tensor(IDX3)),
    "take_along_dim_flat": lambda L: L.func.vmap(lambda x, i: L.take_along_dim(x, i))(L.tensor(X), L.tensor(IDX)),
    "scatter": lambda L: L.func.vmap(lambda x, i: L.zeros(5, 6).scatter(1, i, x))(L.tensor(X), L.tensor(IDX3)),
    "scatter_add": lambda L: L.func.vmap(lambda x, i: L.zeros(5, 6).scatter_add(0, i % 5, x))(L.tensor(X),
                                                                                             L.tensor(IDX3)),
    "scatter_add_inplace": lambda L: L.func.vmap(lambda x, i: x.clone().scatter_add_(0, i % 5, x))(
        L.tensor(X), L.tensor(IDX3)),
    "scatter_value": lambda L: L.func.vmap(lambda x, i: x.scatter(0, i % 5, 2.0))(L.tensor(X), L.tensor(IDX3)),
    "where_batched_condition": lambda L: L.func.vmap(lambda c, x: L.where(c > 0, x, 0.), in_dims=(0, None))(
        L.tensor(X), L.tensor(X[0])),
}


@pytest.mark.parametrize("case", sorted(INDEX_CASES))
def test_batched_index_rule_matches_torch(case):
    before = _batched.per_op_loops
    ours = INDEX_CASES[case](cthtorch)
    assert _vmap_mod.last_path == "batched" and _batched.per_op_loops == before   # a rule, not the op loop
    ref = INDEX_CASES[case](torch)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.numpy(), ref.numpy())


def test_batched_index_gradient_matches_torch():
    def build(L):
        def loss(w, i):
            return (w[i] * w.index_select(0, i)).sum() + w.gather(0, i).sum()
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(L.tensor(X[0, :, 0]), L.tensor(IDX))
    ours, ref = build(cthtorch), build(torch)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


def test_batched_index_out_of_range_raises():
    with pytest.raises(IndexError, match="out of bounds"):
        cthtorch.func.vmap(lambda x, i: x[i + 5])(cthtorch.tensor(X), cthtorch.tensor(IDX))


# ---------------------------------------------------------------- vmap of a vjp_fn

def test_vmap_of_vjp_fn_is_one_batched_backward():
    calls = []

    def build(L):
        w, b, x = (L.tensor(a) for a in (X[0, :, :5], X[1, :, 0], X[2, 0, :5]))

        def f(x):
            calls.append(1)
            return L.nn.functional.linear(x, w, b).tanh(), (x * 2).sum()
        _, vjp_fn, aux = L.func.vjp(f, x, has_aux=True)
        return L.func.vmap(vjp_fn)(L.eye(5))[0]
    ours = build(cthtorch)
    assert len(calls) == 2      # the recording and one batched rerun, instead of five backward passes
    ref = build(torch)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_of_vjp_fn_matches_torch_for_several_primals():
    def build(L):
        w, x = L.tensor(X[0]), L.tensor(X[1, 0])
        _, vjp_fn = L.func.vjp(lambda w, x: (w @ x).sin(), w, x)
        return L.func.vmap(vjp_fn)(L.tensor(X[3, :, :5].T.copy()))
    ours, ref = build(cthtorch), build(torch)
    for o, r in zip(ours, ref):
        assert tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_of_vjp_fn_of_a_random_function_keeps_the_recorded_graph():
    # rerunning func would draw another dropout mask: the recorded graph answers, one cotangent at a time
    x = cthtorch.ones(6)
    cthtorch.manual_seed(3)
    out, vjp_fn = cthtorch.func.vjp(lambda x: cthtorch.nn.functional.dropout(x, 0.5) * 3, x)
    rng = cthtorch.get_rng_state()
    rows = cthtorch.func.vmap(vjp_fn)(cthtorch.eye(6))[0]
    assert bool(cthtorch.equal(cthtorch.get_rng_state(), rng))
    assert bool(cthtorch.equal(rows.diagonal(), out / x))


def test_autograd_grad_is_grads_batched_matches_torch():
    def build(L):
        w = L.tensor(X[0, :3, :3], requires_grad=True)
        x = L.tensor(X[1, 0, :3], requires_grad=True)
        y = (w @ x).tanh()
        gw, gx = L.autograd.grad(y, (w, x), L.tensor(X[2, :2, :3]), is_grads_batched=True)
        return gw, gx
    for o, r in zip(build(cthtorch), build(torch)):
        assert tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_random_wrappers_delegate_on_other_threads():
    # while one thread's vmap has the wrappers in place, another thread's draws stay plain
    import threading
    started, done, shapes = threading.Event(), threading.Event(), []

    def f(a):
        started.set()
        done.wait(10)
        return a + cthtorch.rand(2)

    t = threading.Thread(target=lambda: cthtorch.func.vmap(f, randomness="different")(cthtorch.zeros(3, 2)))
    t.start()
    try:
        assert started.wait(10)
        shapes.append(tuple(cthtorch.rand(2).shape))
        shapes.append(tuple(cthtorch.ones(4).normal_().shape))
    finally:
        done.set()
        t.join()
    assert shapes == [(2,), (4,)]


# random ops at an inner vmap on a value the outer vmap does not batch: the outer 'different' still gives every
# outer sample its own draw (the op's physical call is batched again at the outer level)
NESTED_CASES = {
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.5),
    "rand_like": lambda L, x: L.rand_like(x),
    "bernoulli": lambda L, x: L.bernoulli(x * 0.5),
    "multinomial": lambda L, x: L.multinomial(x, 2).float(),
    "normal_mean": lambda L, x: L.normal(x, 1.0),
    "inplace": lambda L, x: x.clone().normal_(),
    "factory": lambda L, x: L.rand(4) + x,
}


@pytest.mark.parametrize("inner", ["same", "different"])
@pytest.mark.parametrize("case", sorted(NESTED_CASES))
def test_random_nested_inner_only_batched_value(case, inner):
    op = NESTED_CASES[case]

    def run(L):
        X, Y = L.ones(3, 4), L.zeros(5)
        out = L.func.vmap(lambda y: L.func.vmap(lambda x: op(L, x), randomness=inner)(X) + y,
                          randomness="different")(Y)
        # whether the outer samples share their draws, and whether the inner ones do
        return (tuple(out.shape), all(bool((out[i] == out[0]).all()) for i in range(5)),
                all(bool((out[:, j] == out[:, 0]).all()) for j in range(3)))
    ref, ours = _both(run)
    assert ours == ref


def test_autograd_grad_is_grads_batched_unused_and_errors_match_torch():
    def run(L, **kw):
        w, u = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        outs, gos = [(w * 2).sum(), w * 3], kw.pop("gos", [L.ones(3), L.ones(3, 2)])
        return [None if g is None else (tuple(g.shape), g.tolist())
                for g in L.autograd.grad(outs, (w, u), gos, is_grads_batched=True, **kw)]
    for kw in ({"allow_unused": True}, {"materialize_grads": True},     # unused: None / the input's zeros
               {"gos": None, "allow_unused": True},                       # nothing to map over: ValueError
               {"gos": lambda L: [L.ones(3), L.ones(4, 2)], "allow_unused": True}):   # batch sizes differ
        def case(L, kw=kw):
            k = dict(kw)
            if callable(k.get("gos")):
                k["gos"] = k["gos"](L)
            return run(L, **k)
        ref, ours = _both(case)
        assert ours == ref


def test_random_wrappers_removed_when_func_raises():
    # nested vmaps in the batched random modes, func raising after a draw: every level's exit still puts the
    # module functions back (a leftover wrapper would batch draws of later, unrelated code on this thread)
    before = (cthtorch.rand, cthtorch.dropout, cthtorch.Tensor.normal_)

    def bad(a):
        cthtorch.rand(2)
        raise KeyError("boom")
    for inner in ("same", "different"):
        with pytest.raises(KeyError):
            cthtorch.func.vmap(cthtorch.func.vmap(bad, randomness=inner), randomness="different")(
                cthtorch.zeros(2, 3, 2))
        assert (cthtorch.rand, cthtorch.dropout, cthtorch.Tensor.normal_) == before
        assert tuple(cthtorch.rand(3).shape) == (3,)


@pytest.mark.parametrize("method", ["split", "norm", "masked_fill"])
def test_python_tensor_methods_keep_their_vmap_rules(method):
    """Tensor.split/norm/masked_fill are wrappers of the torch.* composites (their own signatures and argument
    errors); named as the op, vmap still finds the op's batching rule instead of looping per example"""
    call = {"split": lambda L, t: L.cat(t.split(2)[::-1]), "norm": lambda L, t: t.norm(),
            "masked_fill": lambda L, t: t.masked_fill(t > 0, 0.0)}[method]
    before = _batched.per_op_loops
    ref, ours = _both(lambda L: L.func.vmap(lambda t: call(L, t))(L.tensor(ROWS)))
    assert _batched.per_op_loops == before
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)
