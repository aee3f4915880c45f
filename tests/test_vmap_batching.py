"""vmap's batching rules (cthtorch/func/_batched.py) against torch.func.vmap: each case must run batched
(func called once on BatchedTensors, no per-sample loop) and give torch's values, shapes and dtypes."""
import sys

import numpy as np
import pytest

import cthtorch
import cthtorch.func
import oracle

torch = oracle.require_torch()
_vmap_mod = sys.modules["cthtorch.func._vmap"]

RNG = np.random.RandomState(0)
A = RNG.randn(5, 3, 4).astype(np.float32)
W = RNG.randn(4, 6).astype(np.float32)
V = RNG.randn(4).astype(np.float32)
IMG = RNG.randn(4, 2, 3, 7, 7).astype(np.float32)
KER = RNG.randn(5, 3, 3, 3).astype(np.float32)
KERS = RNG.randn(4, 5, 3, 3, 3).astype(np.float32)
LOGITS = RNG.randn(6, 2, 5).astype(np.float32)
LABELS = RNG.randint(0, 5, size=(6, 2))


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for o in x for y in _leaves(o)]
    if isinstance(x, dict):
        return [y for o in x.values() for y in _leaves(o)]
    return [x]


def check(fn, rtol=1e-6, atol=1e-6, path="batched"):
    ours = fn(cthtorch)
    assert _vmap_mod.last_path == path
    ref = fn(torch)
    lo, lr = _leaves(ours), _leaves(ref)
    assert len(lo) == len(lr)
    for o, r in zip(lo, lr):
        assert tuple(o.shape) == tuple(r.shape)
        assert str(o.dtype).replace("cthtorch", "torch") == str(r.dtype)
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=rtol, atol=atol)


CASES = {
    # elementwise with broadcasting: logical shapes align on the right
    "unary": lambda L: L.func.vmap(lambda a: a.exp().tanh() + a.abs().sqrt())(L.tensor(A)),
    "binary_unbatched_bigger": lambda L: L.func.vmap(lambda v, a: v * a - 1, in_dims=(0, None))(L.tensor(V[:3]),
                                                                                          L.tensor(A[0])),
    "binary_both_batched_ranks": lambda L: L.func.vmap(lambda a, v: a / (v + 3))(L.tensor(A), L.tensor(A[:, 0, :])),
    "where_clamp": lambda L: L.func.vmap(lambda a: L.where(a > 0, a, a * 0.1).clamp(-0.5, 0.5))(L.tensor(A)),
    "inplace": lambda L: L.func.vmap(lambda a: a.clone().mul_(2).add_(1))(L.tensor(A)),
    "compare_dtype": lambda L: L.func.vmap(lambda a: (a > 0.1).sum(0))(L.tensor(A)),
    # reductions and dim ops over logical dims
    "sum_dims": lambda L: L.func.vmap(lambda a: (a.sum(), a.sum(-1), a.mean((0, 1)), a.amax(1, keepdim=True)))(
        L.tensor(A)),
    "max_min": lambda L: L.func.vmap(lambda a: (a.max(), a.max(1).values, a.min(0).indices, a.argmax()))(L.tensor(A)),
    "softmax": lambda L: L.func.vmap(lambda a: (a.softmax(-1), L.nn.functional.log_softmax(a, dim=0)))(L.tensor(A)),
    "cumsum_var": lambda L: L.func.vmap(lambda a: (a.cumsum(1), a.var(0), a.std(), a.logsumexp(-1)))(L.tensor(A)),
    # views and indexing
    "views": lambda L: L.func.vmap(lambda a: (a.view(12), a.reshape(2, -1), a.t(), a.permute(1, 0), a.transpose(0, 1),
                                         a.unsqueeze(0).unsqueeze(-1), a.flatten(), a.T))(L.tensor(A)),
    "expand_squeeze": lambda L: L.func.vmap(lambda a: (a[:1].expand(2, 3, 4), a.unsqueeze(1).squeeze(1),
                                                  a.reshape(3, 1, 4).squeeze()))(L.tensor(A)),
    "index": lambda L: L.func.vmap(lambda a: (a[0], a[:, 1:3], a[..., -1], a[None, 1], a[L.tensor([2, 0])],
                                         a.select(1, 2), a.narrow(0, 1, 2)))(L.tensor(A)),
    "movedim_in_out": lambda L: L.func.vmap(lambda a: a.sum(0), in_dims=2, out_dims=1)(L.tensor(A)),
    "cat_stack": lambda L: L.func.vmap(lambda a, b: (L.cat([a, b[:2]], 0), L.stack([a, a * 2], 1)),
                                  in_dims=(0, None))(L.tensor(A), L.tensor(A[0])),
    "split_unbind": lambda L: L.func.vmap(lambda a: (*a.split(2, 1), *a.unbind(0), *a.chunk(2, -1)))(L.tensor(A)),
    # matmul family: one batched GEMM
    "matmul_unbatched_rhs": lambda L: L.func.vmap(lambda a: a @ L.tensor(W))(L.tensor(A)),
    "matmul_vec": lambda L: L.func.vmap(lambda a, v: (a @ v, v @ L.tensor(W), L.dot(v, v), L.mv(a, v)),
                                   in_dims=(0, 0))(L.tensor(A), L.tensor(A[:, 0, :])),
    "matmul_unbatched_lhs": lambda L: L.func.vmap(lambda w: L.tensor(A[0]) @ w)(L.tensor(W[None].repeat(3, 0))),
    "bmm_both": lambda L: L.func.vmap(lambda a, b: L.bmm(a.unsqueeze(0), b.unsqueeze(0)))(L.tensor(A),
                                                                                  L.tensor(A).transpose(1, 2)),
    "mm_addmm": lambda L: L.func.vmap(lambda a: (L.mm(a, L.tensor(W)), L.addmm(L.tensor(W[0]), a, L.tensor(W))))(
        L.tensor(A)),
    "linear": lambda L: L.func.vmap(lambda a: L.nn.functional.linear(a, L.tensor(W.T), L.tensor(W[0])))(L.tensor(A)),
    "linear_batched_weight": lambda L: L.func.vmap(lambda w, a: L.nn.functional.linear(a, w), in_dims=(0, None))(
        L.tensor(A), L.tensor(A[0])),
    # convolution, pooling
    "conv2d": lambda L: L.func.vmap(lambda x: L.nn.functional.conv2d(x, L.tensor(KER), padding=1))(L.tensor(IMG)),
    "conv2d_batched_weight": lambda L: L.func.vmap(lambda x, k: L.nn.functional.conv2d(x, k, stride=2))(
        L.tensor(IMG), L.tensor(KERS)),
    "conv2d_unbatched_input": lambda L: L.func.vmap(lambda k: L.nn.functional.conv2d(L.tensor(IMG[0]), k))(
        L.tensor(KERS)),
    "pool": lambda L: L.func.vmap(lambda x: (L.nn.functional.max_pool2d(x, 2), L.nn.functional.avg_pool2d(x[0], 3)))(
        L.tensor(IMG)),
    # losses
    "cross_entropy": lambda L: L.func.vmap(lambda x, t: (L.nn.functional.cross_entropy(x, t),
                                                    L.nn.functional.cross_entropy(x, t, reduction="sum"),
                                                    L.nn.functional.nll_loss(x.log_softmax(-1), t,
                                                                             reduction="none")))(
        L.tensor(LOGITS), L.tensor(LABELS)),
    "cross_entropy_ignore": lambda L: L.func.vmap(lambda x, t: L.nn.functional.cross_entropy(x, t, ignore_index=1))(
        L.tensor(LOGITS), L.tensor(LABELS)),
    "mse": lambda L: L.func.vmap(lambda a, b: (L.nn.functional.mse_loss(a, b), L.nn.functional.l1_loss(a, b)),
                            in_dims=(0, None))(L.tensor(A), L.tensor(A[1])),
    # interpolate has no unbatched form: the logical rank (3-D here, 4-D below) gives its spatial dims
    "interpolate_1d": lambda L: L.func.vmap(lambda a: L.nn.functional.interpolate(a.unsqueeze(0), scale_factor=2))(
        L.tensor(A)),
    "interpolate_2d": lambda L: L.func.vmap(lambda a: L.nn.functional.interpolate(a[None, None], size=(5, 6),
                                                                                  mode="bilinear"))(L.tensor(A)),
    # nesting and chunks
    "nested": lambda L: L.func.vmap(L.func.vmap(lambda a, w: a @ w, in_dims=(0, None)), in_dims=(0, None))(
        L.tensor(A), L.tensor(W)),
    "nested_inner_batched_outer_not": lambda L: L.func.vmap(lambda w: L.func.vmap(lambda a: a * w)(L.tensor(A[0])))(
        L.tensor(A[:, 0, :])),
    "chunk_size": lambda L: L.func.vmap(lambda a: a.sum(0) * 2, chunk_size=2)(L.tensor(A)),
    "unbatched_output": lambda L: L.func.vmap(lambda a: (a * 2, L.tensor(V)))(L.tensor(A)),
}


# cthtorch's convolution kernel itself rounds differently from torch's (not a vmap matter)
LOOSE = {"conv2d": 1e-5, "conv2d_batched_weight": 1e-5, "conv2d_unbatched_input": 1e-5}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_matches_torch(case):
    check(CASES[case], rtol=LOOSE.get(case, 1e-6), atol=LOOSE.get(case, 1e-6))


def test_ops_without_rule_loop_per_op():
    # histc has no batching rule: it runs once per sample, the vmap itself stays batched
    check(lambda L: L.func.vmap(lambda a: L.histc(a, bins=4, min=-2, max=2) + a.sum())(L.tensor(A)))


def test_transforms_under_vmap():
    def f(w, x):
        return (x @ w).tanh().sum()

    check(lambda L: L.func.vmap(L.func.grad(f), in_dims=(None, 0))(L.tensor(W), L.tensor(A)), rtol=1e-5)
    check(lambda L: L.func.vmap(L.func.grad_and_value(f, argnums=(0, 1)), in_dims=(None, 0))(
        L.tensor(W), L.tensor(A)), rtol=1e-5)
    check(lambda L: L.func.vmap(L.func.jacrev(lambda v: (v * v.sin()).cumsum(0)))(L.tensor(A[:, 0])), rtol=1e-5)
    check(lambda L: L.func.vmap(L.func.hessian(lambda v: v.sin().sum() * v.pow(2).sum()))(L.tensor(A[:, 0])),
          rtol=1e-5, atol=1e-5)
    check(lambda L: L.func.vmap(lambda v, t: L.func.jvp(lambda u: u.exp() * 2, (v,), (t,)))(
        L.tensor(A[:, 0]), L.tensor(A[:, 1])), rtol=1e-5)
    check(lambda L: L.func.vmap(lambda v, c: L.func.vjp(lambda u: u.sin() @ L.tensor(W), v)[1](c))(
        L.tensor(A[:, 0]), L.tensor(np.tile(A[:, 1, :2], (1, 3)))), rtol=1e-5)


def test_batched_jacobian_equals_summed_jacobian():
    # the jacobians/hessians tutorial's check: vmap(jacrev) is the Jacobian of the batch-summed outputs
    w, b, x = cthtorch.randn(33, 31), cthtorch.randn(33), cthtorch.randn(64, 31)

    def predict(w, b, x):
        return cthtorch.nn.functional.linear(x, w, b).tanh()

    j0 = cthtorch.func.vmap(cthtorch.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, x)
    assert _vmap_mod.last_path == "batched"
    j1 = cthtorch.func.jacrev(lambda w, b, x: predict(w, b, x).sum(0), argnums=2)(w, b, x).movedim(1, 0)
    assert bool(cthtorch.equal(j0, j1))


def test_per_sample_grads_model():
    def run(L):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Conv2d(1, 4, 3), L.nn.ReLU(), L.nn.MaxPool2d(2), L.nn.Flatten(),
                                L.nn.Linear(16, 3), L.nn.LogSoftmax(-1))
        for p in model.parameters():
            p.data.copy_(L.tensor(np.random.RandomState(p.numel()).randn(*p.shape).astype(np.float32) * 0.3))
        params = {k: v.detach() for k, v in model.named_parameters()}
        data = L.tensor(IMG[0, :, :1, :, :].repeat(3, 0))
        targets = L.tensor([0, 2, 1, 1, 0, 2])

        def loss(p, x, t):
            return L.nn.functional.nll_loss(L.func.functional_call(model, p, (x.unsqueeze(0),)), t.unsqueeze(0))
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    check(run, rtol=1e-5, atol=1e-6)


def test_ensemble_functional_call():
    def run(L):
        models = []
        for s in range(3):
            L.manual_seed(s)
            m = L.nn.Sequential(L.nn.Linear(4, 5), L.nn.ReLU(), L.nn.Linear(5, 2))
            for p in m.parameters():
                p.data.copy_(L.tensor(np.random.RandomState(s + p.numel()).randn(*p.shape).astype(np.float32)))
            models.append(m)
        params, buffers = L.func.stack_module_state(models)
        x = L.tensor(A[0])
        return L.func.vmap(lambda p, b, x: L.func.functional_call(models[0], (p, b), (x,)),
                           in_dims=(0, 0, None))(params, buffers, x)
    check(run)


def test_fallbacks_to_the_loop():
    # data-dependent Python control flow cannot batch (torch raises): the per-sample loop gives the answer
    x = cthtorch.tensor(A[:, 0, 0])
    out = cthtorch.func.vmap(lambda a: a * 2 if a.sum() > 0 else a)(x)
    assert _vmap_mod.last_path == "loop"
    assert bool(cthtorch.equal(out, cthtorch.where(x > 0, x * 2, x)))
    # a draw no batched random path sees (a reference to rand taken before vmap) runs per sample in
    # 'different' mode; values are the loop's, not torch's RNG stream
    x = cthtorch.zeros(4, 3)
    rand = cthtorch.rand
    out = cthtorch.func.vmap(lambda a: a + rand(3), randomness="different")(x)
    assert _vmap_mod.last_path == "loop" and not bool((out == out[0]).all())


def test_errors_under_batching():
    x = cthtorch.tensor(A)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        cthtorch.func.vmap(lambda a: cthtorch.nn.functional.dropout(a, 0.5))(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        cthtorch.func.vmap(lambda a: a * 2, out_dims=None)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        cthtorch.func.vmap(lambda a: (a, 1.0))(x)


@pytest.mark.parametrize("kind", ["grad", "jacrev", "vjp", "jvp"])
def test_transform_of_captured_batched_value(kind):
    # the transform's own arguments are unbatched; func captures a batched value, so the transform is
    # redone lifted over that vmap level (still one batched call)
    xs, w = A[:, 0, :3], V[:3]

    def run(L):
        F = L.func

        def per_sample(x):
            f = (lambda u: (u * x).sin())
            if kind == "grad":
                return F.grad(lambda u: f(u).sum())(L.tensor(w))
            if kind == "jacrev":
                return F.jacrev(f)(L.tensor(w))
            if kind == "vjp":
                return F.vjp(f, L.tensor(w))[1](L.ones(3))[0]
            return F.jvp(f, (L.tensor(w),), (L.ones(3),))[1]
        return F.vmap(per_sample)(L.tensor(xs))
    check(run, rtol=1e-5)


def test_user_error_raised_once_from_the_batched_run():
    # func's own error is not a reason to rerun func per sample: raised once (side effects once), with
    # torch's message (the batched operand's shape, as torch's batching rule reports it)
    for L in (cthtorch, torch):
        calls = []

        def f(x):
            calls.append(1)
            return x @ L.ones(3, 3)
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x4 and 3x3\)"):
            L.func.vmap(f)(L.ones(2, 4))
        assert len(calls) == 1


def test_nested_vmap_batches_both_levels():
    # the inner vmap takes the outer level's BatchedTensor as its input: func runs once for all 5 x 3 samples
    def run(L):
        calls = []

        def f(r):
            calls.append(1)
            return r.sin().sum()
        out = L.func.vmap(L.func.vmap(f), in_dims=1)(L.tensor(A))
        return out, len(calls)
    ours, n = run(cthtorch)
    assert n == 1 and _vmap_mod.last_path == "batched"
    ref, _ = run(torch)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


def test_pointwise_loss_warns_as_torch():
    # equal logical sizes, one operand unbatched: no size warning (torch gives none); differing logical
    # sizes: the warning names the logical sizes, as torch's does
    import warnings
    for L in (cthtorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            L.func.vmap(L.nn.functional.mse_loss, in_dims=(0, None))(L.tensor(A), L.tensor(A[1]))
    msgs = []
    for L in (cthtorch, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.func.vmap(L.nn.functional.l1_loss, in_dims=(0, None))(L.tensor(A), L.tensor(V))
        msgs.append(sorted({str(x.message) for x in w if "target size" in str(x.message)}))
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


@pytest.mark.parametrize("under_vmap", [False, True])
def test_grad_of_non_scalar_output_errors_as_torch(under_vmap):
    # the same check for grad's plain and lifted (batched) paths: torch's RuntimeError and message
    for f in (lambda x: x * 2, lambda x: 1.0):
        msgs = []
        for L in (cthtorch, torch):
            g = L.func.grad(f)
            with pytest.raises(RuntimeError) as e:
                (L.func.vmap(g) if under_vmap else g)(L.ones(3, 2))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_index_error_names_the_logical_dim():
    msgs = []
    for L in (cthtorch, torch):
        with pytest.raises(IndexError) as e:
            L.func.vmap(lambda x: x[5])(L.ones(2, 3, 5))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "index 5 is out of bounds for dimension 0 with size 3"


def test_random_func_goes_straight_to_the_loop_after_its_first_call():
    # 'different' mode: the first call learns (batched run, then the loop) that func draws random numbers
    # behind batching's back (a reference to rand taken before vmap); later calls of the same vmap object run
    # only the per-sample loop
    calls = []
    rand = cthtorch.rand

    def f(a):
        calls.append(1)
        return a + rand(3)
    g = cthtorch.func.vmap(f, randomness="different")
    x = cthtorch.zeros(4, 3)
    g(x)
    assert len(calls) == 1 + 4 and _vmap_mod.last_path == "loop"
    calls.clear()
    out = g(x)
    assert len(calls) == 4 and not bool((out == out[0]).all())


def test_data_dependent_shapes_take_the_loop():
    # torch refuses ops with dynamic output shapes under vmap; here the per-sample loop answers them
    x = cthtorch.tensor([[0.5, 1.5, -0.2], [2., 0., 1.], [-1., -2., 3.]])
    out = cthtorch.func.vmap(lambda a: a.nonzero().sum() + a[a > 0].sum())(x)
    assert _vmap_mod.last_path == "loop"
    assert out.tolist() == [float(r.nonzero().sum() + r[r > 0].sum()) for r in x]
