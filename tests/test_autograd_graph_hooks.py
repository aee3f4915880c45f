"""torch.autograd.graph's multi-tensor gradient hooks, increment_version, get_gradient_edge and
allow_mutation_on_saved_tensors against torch: what the hooks see per backward, removal, the version counter
and the error it causes, and gradients through a saved tensor mutated inside the block."""
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def _multi_hook_log(L):
    a = L.ones(2, requires_grad=True)
    b = L.full((2,), 3.0, requires_grad=True)
    x, y = a * 2, b * 3
    log = []
    h = L.autograd.graph.register_multi_grad_hook(
        (x, y), lambda gs: log.append(("all", [None if t is None else t.tolist() for t in gs])))
    (x * y).sum().backward(retain_graph=True)
    (x.sum() * 5).backward(retain_graph=True)       # y not reached: None in its place
    h2 = L.autograd.graph.register_multi_grad_hook((x, y), lambda t: log.append(("any", t.tolist())), mode="any")
    (x * y * 2).sum().backward(retain_graph=True)
    h.remove()
    h2.remove()
    (x * y).sum().backward()
    (L.ones(1, requires_grad=True) * 2).sum().backward()   # a backward reaching neither
    return log


def test_register_multi_grad_hook_matches_torch():
    mine, ref = _multi_hook_log(ct), _multi_hook_log(torch)
    assert [m[0] for m in mine] == [r[0] for r in ref] == ["all", "all", "any", "all"]
    assert mine[:2] == ref[:2] and mine[3] == ref[3]
    assert mine[2][1] in ([6.0, 6.0], [4.0, 4.0])   # 'any': whichever gradient the engine computes first
    oracle.raises_like(lambda: ct.autograd.graph.register_multi_grad_hook([ct.ones(1)], print, mode="some"),
                       lambda: torch.autograd.graph.register_multi_grad_hook([torch.ones(1)], print, mode="some"))


def test_increment_version_invalidates_saved_tensors():
    for L in (ct, torch):
        t = L.ones(2)
        v = t._version
        L.autograd.graph.increment_version(t)
        L.autograd.graph.increment_version([t, t])
        assert t._version - v == 3
        w = L.ones(2, requires_grad=True)
        s = w * 1
        out = s.sin()            # saves s
        L.autograd.graph.increment_version(s)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()



@pytest.mark.parametrize("call", ["g.increment_version(3)", "g.increment_version([t, 3])", "C._increment_version(t)",
                                  "C._increment_version((t, t))", "C._increment_version(L.tensor(1.))"])
def test_increment_version_arguments_as_torch(call):
    """_C._increment_version takes an iterable of tensors, as torch's; anything else is its RuntimeError"""
    def run(L):
        t = L.ones(2)
        v = t._version
        try:
            eval(call, {"g": L.autograd.graph, "C": L._C, "L": L, "t": t})
            err = None
        except RuntimeError as e:
            err = str(e)
        return err, t._version - v
    assert run(ct) == run(torch)

def test_get_gradient_edge():
    for L in (ct, torch):
        a = L.ones(2, requires_grad=True)
        x = a * 2
        e = L.autograd.graph.get_gradient_edge(x)
        assert type(e).__name__ == "GradientEdge" and e.node is x.grad_fn and e.output_nr == 0
        e = L.autograd.graph.get_gradient_edge(a)
        assert e.node.name().endswith("AccumulateGrad") and e.output_nr == 0
        assert L.autograd.graph.get_gradient_edge(a).node is e.node
    oracle.raises_like(lambda: ct.autograd.graph.get_gradient_edge(ct.ones(1)),
                       lambda: torch.autograd.graph.get_gradient_edge(torch.ones(1)))


def test_allow_mutation_on_saved_tensors():
    grads = []
    for L in (ct, torch):
        w = L.arange(3.0, requires_grad=True)
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            p = w.clone()
            q = p.sin()
            p.mul_(2)            # would make backward fail outside the block
            (q.sum() + p.sum()).backward()
        grads.append(w.grad)
    oracle.same(*grads)


def test_node_post_hook_sees_gradients_summed_to_the_inputs_shapes():
    """torch validates a node's outputs before its post hooks: addmm's bias gradient (broadcast over the
    batch in the forward) reaches the hook as [out], and what the hook returns flows on"""
    got = []
    for lib in (ct, torch):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        x = lib.randn(4, 3, requires_grad=True)
        y = x * 2 + lib.ones(1, 3)
        seen = []
        out = lin(y)
        out.grad_fn.register_hook(lambda gi, go: seen.append([tuple(g.shape) for g in gi]))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[1]))
        out.sum().backward()
        got.append((seen, x.grad.tolist(), lin.bias.grad.tolist()))
    assert got[0] == got[1] and got[0][0] == [[(2,), (4, 3), (3, 2)]]
