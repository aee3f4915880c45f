"""Random sampling: seeding/determinism, generator objects, distributions (statistical checks)."""
import math
import subprocess
import sys

import numpy as np
import pytest

import cthtorch as ct

N = 200000


def test_same_seed_same_stream_and_across_processes():
    ct.manual_seed(123)
    a = ct.rand(5).tolist() + ct.randn(3).tolist() + ct.randint(0, 100, (4,)).tolist()
    ct.manual_seed(123)
    b = ct.rand(5).tolist() + ct.randn(3).tolist() + ct.randint(0, 100, (4,)).tolist()
    assert a == b
    code = "import cthtorch as ct; ct.manual_seed(123); print(ct.rand(5).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == a[:5]
    assert ct.initial_seed() == 123


def test_generator_objects_and_state():
    g = ct.Generator().manual_seed(7)
    x = ct.rand(4, generator=g)
    g2 = ct.Generator()
    g2.manual_seed(7)
    assert ct.rand(4, generator=g2).tolist() == x.tolist()
    s = ct.get_rng_state()
    u = ct.rand(3).tolist()
    ct.set_rng_state(s)
    assert ct.rand(3).tolist() == u
    st = g.get_state()
    v = ct.randn(2, generator=g).tolist()
    g.set_state(st)
    assert ct.randn(2, generator=g).tolist() == v
    assert ct.default_generator.initial_seed() == ct.initial_seed()
    with pytest.raises((TypeError, RuntimeError)):
        ct.set_rng_state(ct.zeros(3))


def test_uniform_and_normal_moments():
    ct.manual_seed(0)
    u = ct.rand(N, dtype=ct.float64).numpy()
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    n = ct.randn(N, dtype=ct.float64).numpy()
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    t = ct.empty(N).uniform_(-2, 3).numpy()
    assert t.min() >= -2 and t.max() < 3 and abs(t.mean() - 0.5) < 0.02
    m = ct.empty(N).normal_(5, 2).numpy()
    assert abs(m.mean() - 5) < 0.03 and abs(m.std() - 2) < 0.03
    f = ct.rand(N).numpy()
    assert f.dtype == np.float32 and f.max() < 1


def test_integer_samplers():
    ct.manual_seed(1)
    r = ct.randint(3, 9, (N,)).numpy()
    assert r.min() == 3 and r.max() == 8
    counts = np.bincount(r - 3)
    assert np.all(np.abs(counts / N - 1 / 6) < 0.01)
    p = ct.randperm(1000).numpy()
    assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    assert ct.randperm(5, dtype=ct.int32).dtype == ct.int32
    x = ct.empty(N, dtype=ct.int64).random_(0, 4).numpy()
    assert set(np.unique(x).tolist()) == {0, 1, 2, 3}
    y = ct.empty(1000, dtype=ct.uint8).random_().numpy()
    assert y.max() > 200


def test_bernoulli_multinomial_poisson_exponential():
    ct.manual_seed(2)
    b = ct.bernoulli(ct.full((N,), 0.3)).numpy()
    assert set(np.unique(b).tolist()) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.005
    z = ct.empty(N).bernoulli_(0.8).numpy()
    assert abs(z.mean() - 0.8) < 0.005
    probs = ct.tensor([0.1, 0.2, 0.7])
    s = ct.multinomial(probs, N, replacement=True).numpy()
    freq = np.bincount(s, minlength=3) / N
    assert np.all(np.abs(freq - [0.1, 0.2, 0.7]) < 0.01)
    w = ct.multinomial(ct.tensor([[1.0, 1, 1, 1], [0, 0, 1, 1]]), 2)
    assert w.shape == (2, 2) and len(set(w[0].tolist())) == 2 and set(w[1].tolist()) == {2, 3}
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size\\(-1\\) samples without replacement"):
        ct.multinomial(ct.tensor([1.0, 1.0]), 3)
    with pytest.raises(RuntimeError):
        ct.multinomial(ct.tensor([-1.0, 1.0]), 1)
    po = ct.poisson(ct.full((N,), 4.0)).numpy()
    assert abs(po.mean() - 4) < 0.05 and abs(po.var() - 4) < 0.1
    big = ct.poisson(ct.full((N,), 100.0)).numpy()
    assert abs(big.mean() - 100) < 0.3
    e = ct.empty(N).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    g = ct.empty(N).geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.1
    ln = ct.empty(N, dtype=ct.float64).log_normal_(0, 0.5).numpy()
    assert abs(np.log(ln).mean()) < 0.01
    c = ct.empty(N).cauchy_().numpy()
    assert abs(np.median(c)) < 0.02


def test_normal_forms_and_like():
    ct.manual_seed(3)
    a = ct.normal(ct.full((N,), 2.0), ct.full((N,), 0.5)).numpy()
    assert abs(a.mean() - 2) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert ct.normal(0.0, 1.0, (2, 3)).shape == (2, 3)
    assert ct.normal(ct.zeros(3), 1.0).shape == (3,)
    assert ct.rand_like(ct.zeros(2, 2, dtype=ct.float64)).dtype == ct.float64
    assert ct.randn_like(ct.zeros(3)).shape == (3,)
    assert ct.randint_like(ct.zeros(4), 10).max().item() < 10 if hasattr(ct.Tensor, "max") else True
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        ct.empty(2).normal_(0, -1)
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range"):
        ct.empty(2).uniform_(1, 0)
    assert ct.rand(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [
    "L.rand_like(c)", "L.randn_like(c)", "L.randint_like(c, 10)", "L.randint_like(c, 3, 10)", "L.rand_like(t)",
    "L.rand_like(x, memory_format=L.channels_last)", "L.randn_like(x, memory_format=L.channels_last)",
    "L.randint_like(x, 5, memory_format=L.channels_last)", "L.rand_like(c, memory_format=L.contiguous_format)",
    "L.rand_like(x[:, :, ::2])", "L.rand_like(y, memory_format=L.channels_last)",
])
def test_random_like_layout_and_values_as_torch(call):
    """rand_like/randn_like/randint_like lay their result out as torch's (a dense input's strides, so
    channels_last stays so; memory_format= honoured: it was ignored) and draw the same values in it"""
    import oracle
    torch = oracle.require_torch()

    def run(lib):
        env = {"L": lib, "x": lib.ones(2, 3, 4, 5), "y": lib.ones(2, 3), "t": lib.ones(3, 4).t(),
               "c": lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)}
        lib.manual_seed(7)
        try:
            r = eval(call, env)
        except RuntimeError as e:
            return str(e)
        return tuple(r.shape), r.stride(), str(r.dtype), r.flatten().tolist()
    assert run(ct) == run(torch)


@pytest.mark.parametrize("view", [
    "L.zeros(4, 6)[:, ::2].t()", "L.zeros(4, 6).t()", "L.zeros(2, 3, 4, 5).to(memory_format=L.channels_last)",
    "L.zeros(5, 7, dtype=L.int32)[1::2, ::3]", "L.zeros(6, 4, dtype=L.int64).t()[::2]",
])
def test_random_inplace_draws_in_memory_order(view):
    """random_ draws in the target's memory order, as torch's (and as uniform_ already did): a strided
    view with gaps (not dense) got them in its logical order"""
    import oracle
    torch = oracle.require_torch()

    def run(lib):
        lib.manual_seed(3)
        out = []
        for args in [(0, 1000), (), (7,)]:
            x = eval(view, {"L": lib})
            x.random_(*args)
            out.append(x.tolist())
        return out
    assert run(ct) == run(torch)


def test_rng_state_is_torchs_byte_image():
    """get_rng_state is torch's CPUGeneratorImplState byte for byte (5056 bytes: seed, left/next of the
    mt19937, the words widened to 64 bits, the cached Box-Muller normal), after seeding and after uniform,
    small normal (which caches) and large normal draws; a state from either library continues the other's
    stream (checkpoints save torch.get_rng_state()); torch's errors for a wrong size or a bad mt19937 state"""
    import oracle
    torch = oracle.require_torch()
    steps = [lambda m: None, lambda m: m.rand(3), lambda m: m.randn(1), lambda m: m.randn(1, dtype=m.float64),
             lambda m: m.randn(1000), lambda m: m.randint(0, 9, (700,))]
    ct.manual_seed(3)
    torch.manual_seed(3)
    for step in steps:
        step(ct)
        step(torch)
        s, ts = ct.get_rng_state(), torch.get_rng_state()
        assert s.dtype == ct.uint8 and s.shape == (5056,)
        np.testing.assert_array_equal(s.numpy(), ts.numpy())
    torch.manual_seed(11)
    torch.randn(5)
    ct.set_rng_state(ct.tensor(torch.get_rng_state().numpy()))
    assert ct.randn(7).tolist() == torch.randn(7).tolist()
    ct.manual_seed(12)
    ct.rand(100)
    torch.set_rng_state(torch.tensor(ct.get_rng_state().numpy()))
    assert ct.rand(9).tolist() == torch.rand(9).tolist()
    g, tg = ct.Generator(), torch.Generator()
    g.set_state(ct.tensor(tg.get_state().numpy()))
    assert ct.rand(4, generator=g).tolist() == torch.rand(4, generator=tg).tolist()
    oracle.raises_like(lambda: g.set_state(ct.zeros(5048, dtype=ct.uint8)),
                       lambda: tg.set_state(torch.zeros(5048, dtype=torch.uint8)))
    bad = ct.get_rng_state()
    bad[8:12] = 0   # left = 0: torch's check of the mt19937 state
    tbad = torch.get_rng_state()
    tbad[8:12] = 0
    oracle.raises_like(lambda: ct.set_rng_state(bad), lambda: torch.set_rng_state(tbad))
    oracle.raises_like(lambda: ct.set_rng_state(bad[:100]), lambda: torch.set_rng_state(tbad[:100]))


@pytest.mark.parametrize("seed,warm", [(0, 0), (123, 5), (7, 700), (2**40 + 3, 624)])
def test_rng_state_is_torchs_layout_both_ways(seed, warm):
    """get_rng_state is torch's 5056-byte CPUGeneratorImplState, byte for byte, and a state saved by torch
    restores in cthtorch to torch's next numbers (and the reverse)"""
    torch_ = __import__("oracle").require_torch()
    torch_.manual_seed(seed)
    ct.manual_seed(seed)
    torch_.rand(warm)
    ct.rand(warm)
    ts, cs = torch_.get_rng_state(), ct.get_rng_state()
    assert cs.dtype == ct.uint8 and tuple(cs.shape) == (5056,)
    np.testing.assert_array_equal(cs.numpy(), ts.numpy())
    ct.manual_seed(999)
    ct.set_rng_state(ct.from_numpy(ts.numpy().copy()))
    np.testing.assert_array_equal(ct.randn(7).numpy(), torch_.randn(7).numpy())
    assert ct.randint(0, 100, (4,)).tolist() == torch_.randint(0, 100, (4,)).tolist()
    assert ct.initial_seed() == torch_.initial_seed() == seed
    torch_.manual_seed(1)
    torch_.set_rng_state(torch_.from_numpy(ct.get_rng_state().numpy().copy()))
    np.testing.assert_array_equal(ct.rand(9).numpy(), torch_.rand(9).numpy())


def test_a_state_of_another_size_is_refused():
    with pytest.raises(RuntimeError):
        ct.set_rng_state(ct.zeros(2520, dtype=ct.uint8))
    bad = ct.get_rng_state().clone()
    bad[8:12] = ct.tensor([0, 0, 0, 0], dtype=ct.uint8)   # left = 0: not a state torch's engine can be in
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ct.set_rng_state(bad)


@pytest.mark.parametrize("case", ["float", "strided", "meta", "list", "two_d"])
def test_set_rng_state_checks_the_tensor_like_torch(case):
    """set_state checks the state tensor as torch's check_rng_state does, before its size: a uint8 CPU tensor
    (TypeError otherwise; a meta state has no bytes and crashed), contiguous (a strided state is refused, as
    torch refuses it), then any shape of 5056 bytes"""
    import oracle
    torch = oracle.require_torch()

    def state(L):
        s = L.get_rng_state()
        return {"float": lambda: s.float(), "strided": lambda: L.stack([s, s], 1)[:, 0],
                "meta": lambda: L.empty(5056, dtype=L.uint8, device="meta"), "list": lambda: s.tolist(),
                "two_d": lambda: s.view(2, 2528)}[case]()
    if case == "two_d":
        ct.manual_seed(5)
        torch.manual_seed(5)
        s, ts = state(ct), state(torch)
        ct.rand(3)
        torch.rand(3)
        ct.set_rng_state(s)
        torch.set_rng_state(ts)
        assert ct.rand(4).tolist() == torch.rand(4).tolist()
        return
    oracle.raises_like(lambda: ct.set_rng_state(state(ct)), lambda: torch.set_rng_state(state(torch)))
