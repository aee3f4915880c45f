"""The meta device: tensors with shapes, dtypes and strides but no data.
Each op on them gives what torch's meta kernels give (shape, dtype, strides,
printing, errors); ops without meta support raise NotImplementedError naming
the op. The tutorial flows are in tests/programs/meta_device_recipes.py."""
import copy
import os
import subprocess
import sys
import warnings

import pytest

import cthtorch as ct
from oracle import raises_like, require_torch

torch = require_torch()

HERE = os.path.dirname(os.path.abspath(__file__))


def geometry(t):
    return tuple(t.shape), str(t.dtype), tuple(t.stride()), t.device.type


def both(fn):
    """fn(lib) under cthtorch and torch: the same geometry, on meta."""
    a, b = fn(ct), fn(torch)
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert geometry(x) == geometry(y)
            assert x.is_meta
        return a
    assert geometry(a) == geometry(b)
    assert a.is_meta and a.data_ptr() == 0
    return a


def errors_alike(fn):
    raises_like(lambda: fn(ct), lambda: fn(torch), first_line=True)


def test_factories():
    m = "meta"
    both(lambda L: L.empty(2, 3, device=m))
    both(lambda L: L.zeros(2, 3, dtype=L.int32, device=m))
    both(lambda L: L.ones((4,), device=L.device("meta")))
    both(lambda L: L.full((2, 2), 7, device=m))
    both(lambda L: L.full((2, 2), 1.5, dtype=L.float64, device=m))
    both(lambda L: L.randn(3, 4, device=m))
    both(lambda L: L.rand(3, device=m))
    both(lambda L: L.randint(0, 5, (2, 3), device=m))
    state = ct.get_rng_state()
    big = ct.randn(10 ** 6, 10 ** 6, device=m)   # no memory, and no draws from the CPU generator
    assert big.shape == (10 ** 6, 10 ** 6) and ct.equal(ct.get_rng_state(), state)
    both(lambda L: L.arange(5, device=m))
    both(lambda L: L.empty_strided((2, 3), (1, 2), device=m))
    both(lambda L: L.tensor([1, 2, 3], device=m))
    both(lambda L: L.hann_window(8, device=m))
    x = lambda L: L.empty(2, 3, 4, device=m).permute(2, 0, 1)   # noqa: E731
    both(lambda L: L.empty_like(x(L)))
    both(lambda L: L.zeros_like(x(L), dtype=L.float16))
    both(lambda L: L.ones_like(x(L)))
    both(lambda L: L.full_like(x(L), 3))
    both(lambda L: L.randn_like(x(L)))
    both(lambda L: x(L).new_zeros(5))
    both(lambda L: x(L).new_empty((2, 2)))
    both(lambda L: L.ones(3).new_ones(2, device=m))
    c = ct.empty_like(ct.empty(2, 3, device="meta"), device="cpu")
    assert c.device.type == "cpu" and c.shape == (2, 3)


def test_device_context_and_default_device():
    with ct.device("meta"):
        t = ct.empty(2)
        lin = ct.nn.Linear(3, 4)
        like = ct.empty_like(ct.ones(2, device="cpu"))   # *_like follow their input, not the default
    assert t.is_meta and lin.weight.is_meta and lin.bias.is_meta and not like.is_meta
    assert not ct.empty(2).is_meta
    ct.set_default_device("meta")
    try:
        assert ct.zeros(3).is_meta and ct.get_default_device().type == "meta"
    finally:
        ct.set_default_device(None)
    assert ct.get_default_device().type == "cpu" and not ct.zeros(3).is_meta


def test_attributes_and_printing():
    for L in (ct, torch):
        t = L.empty(2, 3, device="meta")
        assert t.is_meta and not t.is_cuda and t.device == L.device("meta")
        assert str(t.device) == "meta" and t.data_ptr() == 0 and t.get_device() == -1
    for make in (lambda L: L.empty(2, 3, device="meta"), lambda L: L.empty(0, device="meta"),
                 lambda L: L.empty((), device="meta"), lambda L: L.ones(2, dtype=L.int64, device="meta"),
                 lambda L: L.empty(2, dtype=L.bool, device="meta"),
                 lambda L: L.empty(2, dtype=L.complex64, device="meta"),
                 lambda L: L.ones(2, device="meta", requires_grad=True),
                 lambda L: L.ones(2, device="meta", requires_grad=True) * 2):
        assert repr(make(ct)) == repr(make(torch))
    assert str(ct.nn.Parameter(ct.empty(2, device="meta"))) == str(torch.nn.Parameter(torch.empty(2, device="meta")))


def test_no_data_errors():
    m = lambda L: L.empty(2, 3, device="meta")   # noqa: E731
    one = lambda L: L.empty((), device="meta")   # noqa: E731
    errors_alike(lambda L: m(L).to("cpu"))
    errors_alike(lambda L: m(L).cpu())
    errors_alike(lambda L: one(L).item())
    errors_alike(lambda L: float(one(L)))
    errors_alike(lambda L: int(one(L)))
    errors_alike(lambda L: bool(one(L)))
    errors_alike(lambda L: L.tensor([one(L)]))
    errors_alike(lambda L: bool(m(L)))
    errors_alike(lambda L: m(L).numpy())
    errors_alike(lambda L: m(L).tolist())
    errors_alike(lambda L: L.ones(2, 3).copy_(m(L)))
    errors_alike(lambda L: m(L) + L.ones(2, 3))
    errors_alike(lambda L: L.ones(2, 3) * m(L))


def test_cpu_scalars_join_meta_and_copy_into_meta_is_a_no_op():
    both(lambda L: L.empty(2, 3, device="meta") + L.tensor(1.0))
    both(lambda L: L.empty(2, 3, device="meta").copy_(L.ones(3)))
    both(lambda L: L.empty(2, 3, device="meta").fill_(2))
    both(lambda L: L.empty(2, 3, device="meta").zero_())
    errors_alike(lambda L: L.empty(2, 3, device="meta").copy_(L.ones(4)))


def test_layouts_kept_by_to_meta_and_like():
    # .to('meta') keeps a dense layout's strides, size-1 dims' odd ones included, as torch's
    odd = lambda L: L.empty(3, 1).as_strided((3, 1), (1, 5))   # noqa: E731
    both(lambda L: odd(L).to("meta"))
    both(lambda L: L.empty(2, 3).t().to("meta", L.float64))
    both(lambda L: L.empty_like(L.empty(2, 3).t().to("meta")))
    both(lambda L: L.rand_like(L.empty(2, 3).t().to("meta")))


def test_autocast_cpu_leaves_meta_tensors_alone():
    def run(L):
        a = L.empty(4, 4, device="meta")
        with L.autocast("cpu"):
            return a @ a, L.nn.functional.linear(a, a), L.mm(a, a)
    for r in both(run):
        assert r.dtype == ct.float32


def test_views():
    x = lambda L: L.empty(2, 3, 4, device="meta")   # noqa: E731
    both(lambda L: x(L).view(6, 4))
    both(lambda L: x(L).reshape(4, -1))
    both(lambda L: x(L).transpose(0, 2))
    both(lambda L: x(L).permute(1, 2, 0))
    both(lambda L: x(L)[:, 1])
    both(lambda L: x(L)[1, :, ::2])
    both(lambda L: x(L).unsqueeze(1).expand(2, 5, 3, 4))
    both(lambda L: x(L).permute(2, 0, 1).reshape(4, 6))   # a copy: contiguous
    both(lambda L: x(L).permute(2, 0, 1).contiguous())
    both(lambda L: x(L).flatten(1))
    both(lambda L: x(L).narrow(2, 1, 2))
    both(lambda L: x(L).t() if False else x(L)[0].t())
    both(lambda L: x(L).squeeze(0).unflatten(2, (2, 2)))
    both(lambda L: x(L).chunk(2, dim=2))
    both(lambda L: x(L).split([1, 2], dim=1))
    both(lambda L: x(L).unbind(0))
    both(lambda L: x(L).detach())
    both(lambda L: x(L).clone())
    both(lambda L: L.cat([x(L), x(L)], 1))
    both(lambda L: L.stack([x(L), x(L)], -1))


def test_elementwise_broadcast_promotion():
    f32 = lambda L, *s: L.empty(*s, device="meta")   # noqa: E731
    both(lambda L: f32(L, 4, 1) + f32(L, 3))
    both(lambda L: f32(L, 2, 3) * L.empty(3, dtype=L.float64, device="meta"))
    both(lambda L: L.ones(2, 3, dtype=L.int8, device="meta") + 1)
    both(lambda L: L.ones(2, 3, dtype=L.int32, device="meta") * 1.5)
    both(lambda L: L.ones(2, 3, dtype=L.int32, device="meta") / 2)
    both(lambda L: f32(L, 2, 3) > 0)
    both(lambda L: L.where(f32(L, 2, 3) > 0, f32(L, 2, 3), 0.0))
    both(lambda L: f32(L, 2, 3).t().exp())
    both(lambda L: L.sigmoid(f32(L, 3, 4).t()))
    both(lambda L: f32(L, 2, 3).clamp(0, 1))
    both(lambda L: f32(L, 2, 3).pow(2))
    both(lambda L: L.nn.functional.gelu(f32(L, 5)))
    both(lambda L: f32(L, 2, 3).add_(f32(L, 3)))
    both(lambda L: f32(L, 2, 3).mul_(2))
    # torch's meta kernels word these two errors differently from its CPU ones; cthtorch keeps the CPU texts
    with pytest.raises(RuntimeError, match="must match the size"):
        f32(ct, 2, 3) + f32(ct, 4)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        f32(ct, 2, 3).add_(f32(ct, 4, 2, 3))


def test_reductions():
    x = lambda L: L.empty(3, 4, 5, device="meta")   # noqa: E731
    both(lambda L: x(L).sum())
    both(lambda L: x(L).sum((0, 2), keepdim=True))
    both(lambda L: x(L).mean(1))
    both(lambda L: L.ones(3, 4, dtype=L.int32, device="meta").sum(0))
    both(lambda L: x(L).amax(-1))
    both(lambda L: x(L).max(1))
    both(lambda L: x(L).argmin(2))
    both(lambda L: x(L).var(1))
    both(lambda L: x(L).std())
    both(lambda L: x(L).logsumexp(0))
    both(lambda L: x(L).prod(2))
    both(lambda L: (x(L) > 0).all(1))
    both(lambda L: x(L).permute(2, 0, 1).sum(1))


def test_nn_ops():
    F = lambda L: L.nn.functional   # noqa: E731
    e = lambda L, *s, **k: L.empty(*s, device="meta", **k)   # noqa: E731
    both(lambda L: e(L, 4, 3) @ e(L, 3, 5))
    both(lambda L: L.matmul(e(L, 7, 4, 3), e(L, 3, 5)))
    both(lambda L: L.bmm(e(L, 2, 4, 3), e(L, 2, 3, 5)))
    both(lambda L: F(L).linear(e(L, 8, 3), e(L, 5, 3), e(L, 5)))
    both(lambda L: F(L).conv2d(e(L, 2, 3, 9, 9), e(L, 6, 3, 3, 3), e(L, 6), stride=2, padding=1))
    both(lambda L: F(L).conv2d(e(L, 3, 9, 9), e(L, 6, 1, 3, 3), groups=3, dilation=2))
    both(lambda L: F(L).batch_norm(e(L, 4, 3, 5), e(L, 3), e(L, 3), e(L, 3), e(L, 3), training=True))
    both(lambda L: F(L).layer_norm(e(L, 4, 6), (6,), e(L, 6), e(L, 6)))
    both(lambda L: F(L).embedding(L.empty(2, 5, dtype=L.int64, device="meta"), e(L, 10, 3)))
    both(lambda L: F(L).softmax(e(L, 2, 7), -1))
    both(lambda L: F(L).max_pool2d(e(L, 2, 3, 9, 9), 3, 2, ceil_mode=True))
    both(lambda L: F(L).max_pool2d(e(L, 3, 9, 9), 2, return_indices=True))
    both(lambda L: F(L).avg_pool2d(e(L, 2, 3, 9, 9), 2, padding=1))
    both(lambda L: F(L).adaptive_avg_pool2d(e(L, 2, 3, 9, 9), (1, 1)))
    both(lambda L: F(L).adaptive_avg_pool3d(e(L, 2, 3, 4, 9, 9), 2))
    both(lambda L: F(L).dropout(e(L, 4, 5), 0.5))
    tgt = lambda L, *s: L.empty(*s, dtype=L.int64, device="meta")   # noqa: E731
    both(lambda L: F(L).cross_entropy(e(L, 4, 5), tgt(L, 4)))
    both(lambda L: F(L).nll_loss(e(L, 4, 5, 3), tgt(L, 4, 3), reduction="none"))
    both(lambda L: F(L).cross_entropy(e(L, 4, 5), tgt(L, 4), weight=e(L, 5), reduction="sum"))
    both(lambda L: F(L).log_softmax(e(L, 2, 7), 0))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):   # torch's meta text differs (its CPU one is this)
        e(ct, 4, 3) @ e(ct, 4, 5)


def test_autograd_records_on_meta():
    """grad_fn is recorded, and backward through meta ops gives meta gradients of the right shapes"""
    for L in (ct, torch):
        w = L.empty(5, 3, device="meta", requires_grad=True)
        x = L.empty(4, 3, device="meta", requires_grad=True)
        y = L.nn.functional.linear(x, w).relu().sum()
        assert type(y.grad_fn).__name__ == "SumBackward0"
        y.backward()
        assert w.grad.is_meta and w.grad.shape == (5, 3) and x.grad.shape == (4, 3)
        img = L.empty(2, 3, 8, 8, device="meta", requires_grad=True)
        k = L.empty(4, 3, 3, 3, device="meta", requires_grad=True)
        out = L.nn.functional.conv2d(img, k, padding=1)
        out = L.nn.functional.adaptive_avg_pool2d(L.nn.functional.avg_pool2d(out, 2), 1)
        L.nn.functional.cross_entropy(out.flatten(1), L.empty(2, dtype=L.int64, device="meta")).backward()
        assert img.grad.is_meta and img.grad.shape == img.shape and k.grad.shape == k.shape


def test_init_functions_are_no_ops():
    for fn in (lambda t: ct.nn.init.uniform_(t), lambda t: ct.nn.init.normal_(t),
               lambda t: ct.nn.init.kaiming_uniform_(t, a=5 ** 0.5), lambda t: ct.nn.init.xavier_normal_(t),
               lambda t: ct.nn.init.zeros_(t), lambda t: ct.nn.init.ones_(t), lambda t: ct.nn.init.constant_(t, 3),
               lambda t: ct.nn.init.trunc_normal_(t), lambda t: t.bernoulli_(0.5), lambda t: t.random_(0, 4),
               lambda t: t.exponential_()):
        t = ct.empty(4, 6, device="meta")
        assert fn(t) is t and t.is_meta


def test_unsupported_ops_raise_not_implemented():
    x = ct.empty(4, device="meta")
    for fn, op in ((lambda: ct.nonzero(x), "nonzero"), (lambda: ct.sort(x), "sort"),
                   (lambda: x[ct.tensor([0, 1])], "index"), (lambda: ct.cumsum(x, 0), "cumsum"),
                   (lambda: ct.tril(ct.empty(3, 3, device="meta")), "tril")):
        with pytest.raises(NotImplementedError, match="aten::%s.*not implemented for the meta device" % op):
            fn()


def test_modules_to_meta_deepcopy_state_dict_and_loading():
    net = ct.nn.Sequential(ct.nn.Linear(3, 4), ct.nn.BatchNorm1d(4), ct.nn.Linear(4, 2))
    ref = copy.deepcopy(net)
    net.to("meta")
    assert all(p.is_meta for p in net.parameters()) and all(b.is_meta for b in net.buffers())
    twin = copy.deepcopy(net)
    assert twin[0].weight is not net[0].weight and twin[0].weight.is_meta
    sd = net.state_dict()
    assert all(v.is_meta for v in sd.values()) and list(sd) == list(ref.state_dict())
    out = net(ct.empty(5, 3, device="meta"))
    assert out.is_meta and out.shape == (5, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        twin.load_state_dict(ref.state_dict())
    assert any("copying from a non-meta parameter" in str(x.message) for x in w)
    assert twin[0].weight.is_meta
    twin.load_state_dict(ref.state_dict(), assign=True)
    assert not twin[0].weight.is_meta and isinstance(twin[0].weight, ct.nn.Parameter)
    assert ct.equal(twin[0].weight, ref[0].weight)
    net.to_empty(device="cpu")
    assert all(p.device.type == "cpu" and p.shape == q.shape for p, q in zip(net.parameters(), ref.parameters()))


def test_tutorial_flows_print_torchs_output():
    def run(lib):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        out = subprocess.run([sys.executable, os.path.join(HERE, "programs", "meta_device_recipes.py"), lib],
                             capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.splitlines()
    assert run("cthtorch") == run("torch")


def _meta_branch(x):
    if x.is_meta:
        return x.sum()
    return x * 2


def test_script_and_loaded_archives_read_is_meta():
    """`x.is_meta` in TorchScript (prim::is_meta): scripted here, and in an archive torch saved, the branch
    taken is torch's on both devices (a loaded archive used to answer False for meta tensors)."""
    import io
    st = torch.jit.script(_meta_branch)
    buf = io.BytesIO()
    torch.jit.save(st, buf)
    sc, loaded = ct.jit.script(_meta_branch), ct.jit.load(io.BytesIO(buf.getvalue()))
    assert sc.code == st.code
    for dev in ("cpu", "meta"):
        want = st(torch.ones(2, device=dev))
        for m in (sc, loaded):
            got = m(ct.ones(2, device=dev))
            assert (tuple(got.shape), got.device.type) == (tuple(want.shape), want.device.type)


@pytest.mark.parametrize("make", [lambda L: L.Tensor(device="meta"), lambda L: L.Tensor(2, 3, device="meta"),
                                  lambda L: L.FloatTensor(2, device="meta"),
                                  lambda L: L.Tensor([1., 2.], device=L.device("meta")),
                                  lambda L: L.ones(2).new(2, device="meta")])
def test_legacy_constructors_refuse_meta_as_torch(make):
    """torch.Tensor(...) is a CPU type: device='meta' is torch's error, not a CPU tensor asked for on meta"""
    got = []
    for L in (ct, torch):
        with pytest.raises(RuntimeError) as e:
            make(L)
        got.append(str(e.value))
    assert got[0] == got[1] == "legacy constructor expects device type: cpu but device type: meta was passed"
    assert ct.Tensor(2, device="cpu").device.type == "cpu"
