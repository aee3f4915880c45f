"""The C engine: graphs, accumulation, hooks, retain/create graph, errors, freeing."""
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def test_seed_example():
    x = ct.ones(2, 2, requires_grad=True)
    y = x + 2
    assert repr(y.grad_fn).startswith("<AddBackward0")
    z = y * y * 3
    out = z.mean()
    assert type(z.grad_fn).__name__ == "MulBackward0" and out.grad_fn.name() == "MeanBackward0"
    out.backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_double_backward_seed_example():
    x = ct.tensor([3.0], requires_grad=True)
    y = x * x
    y.backward(create_graph=True)
    assert x.grad.tolist() == [6.0] and x.grad.requires_grad
    g = x.grad.clone()
    g.backward()
    assert x.grad.tolist() == [8.0]


def test_grad_second_order():
    x = ct.tensor([1.5, -2.0], requires_grad=True, dtype=ct.float64)
    y = (x ** 3).sum()
    (g,) = ct.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.tolist(), [3 * 1.5 ** 2, 3 * 4.0])
    (h,) = ct.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.tolist(), [6 * 1.5, 6 * -2.0])


def test_gradient_penalty_reaches_weights_whose_forward_node_gets_none():
    """A WGAN-GP penalty through conv -> leaky_relu -> conv, by backward() (every leaf): the first conv's weight
    is reached through the second-order node and through its forward node, whose gradient is None; it still gets
    torch's gradient (it was left None when the None path stopped at the forward node)"""
    x0 = np.random.RandomState(0).randn(2, 3, 6, 6).astype(np.float32)
    grads = []
    for lib in (ct, torch):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.LeakyReLU(0.2), lib.nn.Conv2d(4, 1, 3))
        x = lib.tensor(x0, requires_grad=True)
        y = m(x)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean().backward()
        grads.append([None if p.grad is None else p.grad.numpy().copy() for p in m.parameters()])
    ours, theirs = grads
    assert [a is None for a in ours] == [b is None for b in theirs] == [False, False, False, True]
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_next_functions_and_accumulate_grad():
    x = ct.ones(2, requires_grad=True)
    y = x * 2
    (fn, nr), (none, _) = y.grad_fn.next_functions
    assert type(fn).__name__ == "AccumulateGrad" and fn.variable is x and none is None
    assert x.is_leaf and not y.is_leaf and y.requires_grad


def test_number_on_the_left_is_the_second_operand():
    """2 * b and 2 + b are b.mul(2) and b.add(2), as torch's reflected operators make them: b's edge comes first
    in next_functions (pytorch/tutorials' autograd tutorial walks next_functions[0][0] down to the leaf)"""
    torch = oracle.require_torch()

    def shape(lib):
        a = lib.linspace(0.0, 1.0, steps=5, requires_grad=True)
        b = lib.sin(a)
        out = []
        for y in (2 * b, 2 + b, 2.5 * b, True * b, b * 2):
            out.append([(type(f).__name__ if f is not None else None, k) for f, k in y.grad_fn.next_functions])
        d = 2 * b + 1
        walk = d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        out.append((type(walk).__name__, walk.variable is a))
        out.append(((2 * b).dtype, (3 * lib.tensor([True])).tolist(), (1 + lib.tensor([2], dtype=lib.uint8)).dtype))
        return out

    assert str(shape(ct)) == str(shape(torch))


def test_accumulates_across_backward_calls():
    x = ct.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0] * 3
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0] * 3


def test_broadcast_gradients_are_reduced():
    a = ct.ones(3, 1, requires_grad=True)
    b = ct.ones(4, requires_grad=True)
    (a * b + b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.tolist() == [6.0] * 4


def test_errors():
    x = ct.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        ct.ones(2).sum().backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        (x * 2).requires_grad = False


def test_retain_graph():
    x = ct.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_inplace_version_check():
    x = ct.ones(2, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def _modified_saved_cases(lib):
    def saved_input():
        x = lib.randn(3, requires_grad=True); y = x * 2; z = y.sin(); y.add_(1); z.sum().backward()
    def saved_output():
        x = lib.randn(3, requires_grad=True); y = x.sigmoid(); y.mul_(2); y.sum().backward()
    def saved_leaf():
        x = lib.randn(3, requires_grad=True); y = x * x
        with lib.no_grad():
            x.add_(1)
        y.sum().backward()
    def saved_view_of_changed_weight():   # Linear's weight.t(), changed under no_grad (a GAN step's pattern)
        layer = lib.nn.Linear(4, 1); y = layer(lib.randn(3, 4, requires_grad=True))
        with lib.no_grad():
            layer.weight.add_(1)
        y.sum().backward()
    def custom_function_input():
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2
            @staticmethod
            def backward(ctx, g):
                return g * ctx.saved_tensors[0]
        x = lib.randn(3, requires_grad=True); a = x * 1; y = Double.apply(a); a.add_(1); y.sum().backward()
    return [saved_input, saved_output, saved_leaf, saved_view_of_changed_weight, custom_function_input]


def test_inplace_version_error_text_matches_torch():
    """torch names the node without its Backward0 suffix (AsStrided for a view of a changed base), says
    nothing for a leaf, and hints check_nan=False"""
    for c, t in zip(_modified_saved_cases(ct), _modified_saved_cases(torch)):
        oracle.raises_like(c, t)


def test_inplace_on_nonleaf_rebases_history():
    for lib in (ct, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.mul_(x)
        y.add_(1)
        y.sum().backward()
        if lib is ct:
            got = x.grad.tolist()
            assert type(y.grad_fn).__name__ == "AddBackward0"
        else:
            want = x.grad.tolist()
    assert got == want


def test_no_grad_and_detach():
    x = ct.ones(2, requires_grad=True)
    with ct.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    z = (x * 2).detach()
    assert not z.requires_grad and z.is_leaf
    assert x.detach().data_ptr() == x.data_ptr()
    d = x.data
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()


def test_hooks():
    x = ct.ones(2, requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    y = x * 3
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert seen == [[6.0, 6.0]] and x.grad.tolist() == [12.0, 12.0]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    node_seen = []
    z = x * 5
    z.grad_fn.register_hook(lambda gi, go: node_seen.append(len(gi)))
    z.sum().backward()
    assert node_seen == [2]


def test_retain_grad():
    x = ct.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 4.0]


def test_grad_and_inputs():
    x = ct.ones(2, requires_grad=True)
    w = ct.ones(2, requires_grad=True)
    y = (x * w * 3).sum()
    (gx,) = ct.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [3.0, 3.0] and x.grad is None and w.grad is None
    y.backward(inputs=[w])
    assert w.grad.tolist() == [3.0, 3.0] and x.grad is None
    u = ct.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ct.autograd.grad((x * 2).sum(), [x, u])
    gx, gu = ct.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None


def test_custom_function():
    class Exp(ct.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            r = i.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    x = ct.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_long_chain_frees_without_recursion():
    x = ct.ones(1, requires_grad=True)
    y = x
    for _ in range(150000):
        y = y * 1.0
    r = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert r() is None


def test_graph_freed_after_backward_and_del():
    x = ct.ones(2, requires_grad=True)
    y = x * 2
    z = y * y
    r = weakref.ref(z.grad_fn)
    z.sum().backward()
    del z, y
    assert r() is None
    before = sys.getrefcount(x)
    for _ in range(10):
        (x * x).sum().backward()
    assert sys.getrefcount(x) == before


def test_backward_from_threads():
    results = []

    def work(k):
        x = ct.full((100,), float(k), requires_grad=True)
        for _ in range(20):
            (x * x).sum().backward()
        results.append((k, x.grad[0].item()))
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert sorted(results) == [(k, 40.0 * k) for k in range(4)]


def test_grad_mode_is_thread_local():
    flags = []
    with ct.no_grad():
        t = threading.Thread(target=lambda: flags.append(ct.is_grad_enabled()))
        t.start()
        t.join()
        flags.append(ct.is_grad_enabled())
    assert flags == [True, False]


@pytest.mark.parametrize("expr", [
    "(a + b).sum()", "(a - b * 2).sum()", "(a * b).sum()", "(a / b).sum()", "(a.exp() * b.tanh()).sum()",
    "(a.sigmoid() + b.log()).mean()", "((a ** 2) * b.sqrt()).sum()", "a.sum(0).mul(b.sum(1)).sum()",
"(a.view(-1) * b.reshape(-1)).sum()",
    "a.permute(1, 0).expand(2, 3, 3).sum()", "(a[0] * b[:, 1]).sum()", "a.abs().sum() + b.neg().mean()",
    "(a.maximum(b) + a.minimum(b)).sum()", "a.clone().mean(1).sum()", "a.unsqueeze(0).squeeze().sum()",
    "(a.pow(b)).sum()", "ct_or_t.where(a > b, a, b).sum()",
])


def test_gradients_match_torch(expr):
    an = np.random.RandomState(0).rand(3, 3) + 0.5
    bn = np.random.RandomState(1).rand(3, 3) + 0.5
    grads = {}
    for lib in (ct, torch):
        a = lib.tensor(an, requires_grad=True)
        b = lib.tensor(bn, requires_grad=True)
        ct_or_t = lib  # noqa: F841  (used by the where case)
        try:
            out = eval(expr)
        except AttributeError as e:
            pytest.skip("op not available yet: %s" % e)
        out.backward()
        grads[lib.__name__] = (np.asarray(a.grad.tolist()), np.asarray(b.grad.tolist()) if b.grad is not None else None)
    ga, gb = grads["cthtorch"], grads["torch"]
    np.testing.assert_allclose(ga[0], gb[0], rtol=1e-6)
    if gb[1] is not None:
        np.testing.assert_allclose(ga[1], gb[1], rtol=1e-6)


def test_sizes_only_formulas_keep_no_tensor():
    # sum/view/reshape backward need only shapes: the input is not kept (nor
    # version-checked), so writing into it afterwards is fine, as in PyTorch,
    # and a graph of such nodes can run backward twice
    x = ct.ones(3, 4, requires_grad=True)
    y = x * 1
    r = y.reshape(-1).view(4, 3).sum(0)
    y.copy_(ct.zeros(3, 4))
    r.sum().backward()
    assert x.grad.tolist() == [[1.0] * 4] * 3   # r was recorded from y before the write (torch gives the same)
    z = ct.ones(2, requires_grad=True)
    s = z.sum()
    s.backward()
    s.backward()
    assert z.grad.tolist() == [2.0, 2.0]


def _diamond_order(L):
    """Runs backward over two diamonds sharing a leaf, recording the order in
    which tensor hooks and node hooks fire."""
    order = []
    x = L.tensor([0.5, 1.5], requires_grad=True)
    w = L.tensor([2.0, -1.0], requires_grad=True)
    a = x * w
    b = a.exp()
    c = a.sin()
    e = w.cos()
    d = b * c + e * a
    for name, t in (("x", x), ("w", w), ("a", a), ("b", b), ("c", c), ("e", e), ("d", d)):
        t.register_hook(lambda g, name=name: order.append("tensor " + name))
    for name, t in (("a", a), ("b", b), ("c", c), ("e", e), ("d", d)):
        t.grad_fn.register_prehook(lambda go, name=name: order.append("pre " + name))
        t.grad_fn.register_hook(lambda gi, go, name=name: order.append("post " + name))
    d.sum().backward()
    return order, x.grad.tolist(), w.grad.tolist()


def test_engine_runs_nodes_in_torch_order_on_a_diamond():
    got, gx, gw = _diamond_order(ct)
    want, tx, tw = _diamond_order(torch)
    assert got == want
    np.testing.assert_allclose(gx, tx, rtol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-6)


def test_engine_backward_through_a_long_chain():
    x = ct.ones(2, requires_grad=True)
    y = x
    for _ in range(150000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_engine_error_mid_backward_frees_queue():
    x = ct.ones(2, requires_grad=True)
    a = x * 2
    b = a * 3
    c = a * 4

    def boom(g):
        raise ValueError("hook failed")
    b.register_hook(boom)
    r = weakref.ref(c.grad_fn)
    with pytest.raises(ValueError, match="hook failed"):
        (b + c).sum().backward()
    del a, b, c
    gc.collect()
    assert r() is None


def test_float_of_a_tensor_requiring_grad_warns_once_per_process():
    """float(loss) / '%.4f' % loss warn once per process where grad mode is on, as torch; item(), int() and
    bool() do not"""
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prog = ("import sys, importlib; m = importlib.import_module(sys.argv[1]); a = m.ones((), requires_grad=True) * 2\n"
            "with m.no_grad(): float(a)\n"   # not under no_grad (LBFGS's float(closure())), nor using up the once
            "a.item(); int(a); bool(a); print('before', flush=True); float(a); '%.3f' % a; float(a.detach())\n")
    outs = []
    for lib in ("cthtorch", "torch"):
        r = subprocess.run([sys.executable, "-W", "always", "-c", prog, lib], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=root), timeout=120)
        assert r.returncode == 0, r.stderr
        lines = [l for l in r.stderr.splitlines() if "UserWarning" in l]
        outs.append([l.split("UserWarning: ")[1] for l in lines])
    assert outs[0] == outs[1] == ["Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                                  "behavior."]


def test_gradients_summed_in_place_only_where_nothing_else_sees_them():
    """the engine sums a slot's later gradients into its first in place when only the buffer holds it (three
    narrow backwards into one base): the values stay torch's, and a gradient that retain_grad exposes or
    that create_graph records is never written. A gradient a node hook kept is not written either (torch's
    InputBuffer does write into it here: it sums into the first gradient whatever else holds it)"""
    got = []
    for L in (ct, torch):
        x = L.tensor(np.arange(24.0).reshape(2, 12), requires_grad=True)
        y = x * 1
        a, b, c = (y.narrow(-1, 4 * i, 4) for i in range(3))   # chunk's pieces share one node (no sum)
        kept = []
        b.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
        (a * 2 + b * 3 + c * 4).sum().backward()
        z = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = z * 2
        w.retain_grad()
        u = w * 1
        (u * u + u * 3).sum().backward()
        q = L.tensor([0.5, 1.5], requires_grad=True)
        (g,) = L.autograd.grad((q * q + q.exp()).sum(), q, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), q)
        got.append((x.grad.tolist(), w.grad.tolist(), z.grad.tolist(), g.tolist(), gg.tolist()))
        if L is ct:
            assert kept[0].tolist() == [[0.0] * 4 + [3.0] * 4 + [0.0] * 4] * 2
    assert got[0] == got[1]


def test_grad_of_a_non_leaf_warns_as_torch():
    """reading .grad of an intermediate (old loops printing it) returns None with torch's UserWarning each time;
    leaves, tensors that retain_grad(), and tensors not requiring grad stay quiet"""
    import warnings
    got = []
    for m in (ct, torch):
        x = m.ones(2, requires_grad=True)
        y = x * 2
        z = x * 3
        z.retain_grad()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            seen = [y.grad, y.grad, x.grad, z.grad, m.ones(2).grad]
            (y.sum() + z.sum()).backward()
            seen += [y.grad, x.grad.tolist(), z.grad.tolist()]
        got.append((seen, [(r.category, str(r.message).split(" (Triggered")[0]) for r in w]))
    assert got[0] == got[1] and len(got[0][1]) == 3
