"""Run on 3 ranks (python -m cthtorch.distributed.run --nproc_per_node=3 ...):
torch.distributed.autograd and DistributedOptimizer over RPC. Rank 0 ("ps")
holds parameters; ranks 1 and 2 ("trainer1", "trainer2") drive. Every
distributed gradient is compared with the same computation in one process.
Rank 1 prints "ok <check>"; a failure on any rank fails the job."""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import cthtorch as torch  # noqa: E402
import cthtorch.distributed.autograd as dist_autograd  # noqa: E402
import cthtorch.distributed.rpc as rpc  # noqa: E402
from cthtorch.distributed.nn import RemoteModule  # noqa: E402
from cthtorch.distributed.optim import DistributedOptimizer  # noqa: E402

_model = {}
_lock = threading.Lock()


def make_model(seed):   # on ps: a Linear kept by the worker, as a parameter server keeps its model
    torch.manual_seed(seed)
    with _lock:
        _model["m"] = torch.nn.Linear(4, 3)
    return [p.detach().clone() for p in _model["m"].parameters()]


def model_forward(x, key="m"):
    return torch.tanh(_model[key](x))


def model_param_rrefs():
    return [rpc.RRef(p) for p in _model["m"].parameters()]


def model_params(key="m"):
    return [p.detach().clone() for p in _model[key].parameters()]


def model_grads(cid, key="m"):
    grads = dist_autograd.get_gradients(cid)
    return [grads.get(p) for p in _model[key].parameters()], [p.grad for p in _model[key].parameters()]


def hop_back(y, caller):      # on ps: a nested call back to the caller, whose result is used here
    z = rpc.rpc_sync(caller, torch.mul, args=(y, y))
    return z * 3 + _model["m"].bias.sum()


def via_third(x, third):      # a chain of hops: trainer1 -> ps -> trainer2 -> ps-side use
    return rpc.rpc_sync(third, torch.sin, args=(x * 2,)).exp()


def new_linear(seed):
    torch.manual_seed(seed)
    return torch.nn.Linear(3, 2)


def report(name):
    if rpc.get_worker_info().id == 1:
        # one write per line: with PYTHONUNBUFFERED print() writes its pieces
        # one by one, and mpiexec interleaves the ranks' writes
        sys.stdout.write("ok %s\n" % name)
        sys.stdout.flush()


def close(a, b):
    assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5), (a, b)


def main():
    rank = int(os.environ["RANK"])
    names = ["ps", "trainer1", "trainer2"]
    if rank == 0:
        torch.manual_seed(7)
        _model["shared"] = torch.nn.Linear(4, 3)
    rpc.init_rpc(names[rank], rank=rank, world_size=3)
    if rank > 0:
        shared_parameter_server(rank)
    if rank == 1:
        trainer1()
    rpc.shutdown()


def shared_parameter_server(rank):
    """Both trainers at once: backward passes through the same ps parameters, each in its own context."""
    w, b = rpc.rpc_sync("ps", model_params, args=("shared",))
    ref = torch.nn.Linear(4, 3)
    with torch.no_grad():
        ref.weight.copy_(w)
        ref.bias.copy_(b)
    torch.manual_seed(rank)
    for _ in range(5):
        x = torch.randn(8, 4)
        with dist_autograd.context() as cid:
            out = rpc.rpc_sync("ps", model_forward, args=(x, "shared"))
            dist_autograd.backward(cid, [out.pow(3).mean()])
            grads, dot_grad = rpc.rpc_sync("ps", model_grads, args=(cid, "shared"))
        ref.zero_grad()
        torch.tanh(ref(x)).pow(3).mean().backward()
        close(grads[0], ref.weight.grad)
        close(grads[1], ref.bias.grad)
        assert dot_grad == [None, None]
    sys.stdout.write("ok parameter server with 2 trainers: rank %d\n" % rank)
    sys.stdout.flush()


def trainer1():
    # Context ids are unique across workers: (worker id << 48) + n.
    with dist_autograd.context() as cid:
        assert cid >> 48 == 1 and dist_autograd._current_context()._context_id() == cid
    report("context ids")

    # A model split across 2 workers: a local first layer, the second on ps (an RRef's methods).
    w, b = rpc.rpc_sync("ps", make_model, args=(0,))
    torch.manual_seed(1)
    first = torch.nn.Linear(5, 4)
    x = torch.randn(6, 5)
    with dist_autograd.context() as cid:
        h = first(x)
        out = rpc.rpc_sync("ps", model_forward, args=(h,))
        loss = (out * out).sum()
        dist_autograd.backward(cid, [loss])
        local = dist_autograd.get_gradients(cid)
        remote_grads, remote_dot_grad = rpc.rpc_sync("ps", model_grads, args=(cid,))
    assert set(local) == {first.weight, first.bias}, list(local)
    assert first.weight.grad is None and remote_dot_grad == [None, None]   # not into .grad
    # the same in one process
    ref2 = torch.nn.Linear(4, 3)
    with torch.no_grad():
        ref2.weight.copy_(w)
        ref2.bias.copy_(b)
    r1 = torch.nn.Linear(5, 4)
    r1.load_state_dict(first.state_dict())
    ref_out = torch.tanh(ref2(r1(x)))
    (ref_out * ref_out).sum().backward()
    close(out.detach(), ref_out.detach())
    close(local[first.weight], r1.weight.grad)
    close(local[first.bias], r1.bias.grad)
    close(remote_grads[0], ref2.weight.grad)
    close(remote_grads[1], ref2.bias.grad)
    report("model split across 2 workers")

    # Nested: ps calls back to this worker; gradients come back through both hops.
    x = torch.randn(3, requires_grad=True)
    with dist_autograd.context() as cid:
        y = rpc.rpc_async("ps", hop_back, args=(x * 2, "trainer1")).wait()
        dist_autograd.backward(cid, [y.sum()])
        g = dist_autograd.get_gradients(cid)
        remote_grads, _ = rpc.rpc_sync("ps", model_grads, args=(cid,))
    close(g[x], 24 * x.detach())          # d/dx sum(3 (2x)^2) = 24x
    close(remote_grads[1], torch.full((3,), 3.0))
    assert remote_grads[0] is None
    report("nested rpc back to the caller")

    # Three workers in a chain, and the root is the received tensor itself.
    x = torch.randn(4, requires_grad=True)
    with dist_autograd.context() as cid:
        y = rpc.rpc_sync("ps", via_third, args=(x, "trainer2"))
        s = rpc.rpc_sync("trainer2", torch.sum, args=(y,))
        dist_autograd.backward(cid, [s])
        g = dist_autograd.get_gradients(cid)[x]
    xr = x.detach().clone().requires_grad_()
    torch.sin(xr * 2).exp().sum().backward()
    close(g, xr.grad)
    report("three hops")

    # remote() + RRef.to_here(), and RRef.backward on the owner.
    x = torch.randn(3, requires_grad=True)
    with dist_autograd.context() as cid:
        rref = rpc.remote("trainer2", torch.mul, args=(x, 3.0))
        y = rref.to_here()
        dist_autograd.backward(cid, [(y * y).sum()])
        close(dist_autograd.get_gradients(cid)[x], 18 * x.detach())
    with dist_autograd.context() as cid:
        rref = rpc.remote("trainer2", torch.sum, args=(x * x,))
        rref.backward(cid)
        close(dist_autograd.get_gradients(cid)[x], 2 * x.detach())
    report("remote and to_here")

    # Accumulation within a context; retain_graph lets a second backward add to it.
    x = torch.randn(3, requires_grad=True)
    with dist_autograd.context() as cid:
        y = rpc.rpc_sync("ps", torch.mul, args=(x, x))
        loss = y.sum() + (x * 5).sum()
        dist_autograd.backward(cid, [loss], retain_graph=True)
        dist_autograd.backward(cid, [loss])
        close(dist_autograd.get_gradients(cid)[x], 2 * (2 * x.detach() + 5))
    report("accumulation")

    # DistributedOptimizer over parameters on ps and here.
    here = new_linear(3)
    w, b = rpc.rpc_sync("ps", make_model, args=(2,))
    param_rrefs = rpc.rpc_sync("ps", model_param_rrefs) + [rpc.RRef(p) for p in here.parameters()]
    opt = DistributedOptimizer(torch.optim.SGD, param_rrefs, lr=0.1, momentum=0.5)
    ref_ps, ref_here = torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)
    with torch.no_grad():
        ref_ps.weight.copy_(w)
        ref_ps.bias.copy_(b)
    ref_here.load_state_dict(here.state_dict())
    ref_opt = torch.optim.SGD(list(ref_ps.parameters()) + list(ref_here.parameters()), lr=0.1, momentum=0.5)
    torch.manual_seed(5)
    for _ in range(3):
        x = torch.randn(2, 4)
        with dist_autograd.context() as cid:
            loss = here(rpc.rpc_sync("ps", model_forward, args=(x,))).pow(2).sum()
            dist_autograd.backward(cid, [loss])
            opt.step(cid)
        ref_opt.zero_grad()
        ref_here(torch.tanh(ref_ps(x))).pow(2).sum().backward()
        ref_opt.step()
    got = rpc.rpc_sync("ps", model_params)
    close(got[0], ref_ps.weight.detach())
    close(got[1], ref_ps.bias.detach())
    close(here.weight.detach(), ref_here.weight.detach())
    close(here.bias.detach(), ref_here.bias.detach())
    report("distributed optimizer")

    # RemoteModule: a Linear built on ps, its forward over RPC, its parameters for the optimizer.
    torch.manual_seed(11)
    remote_lin = RemoteModule("ps/cpu", torch.nn.Linear, args=(4, 2), kwargs={"bias": True})
    rrefs = remote_lin.remote_parameters()
    assert len(rrefs) == 2 and all(r.owner().name == "ps" for r in rrefs)
    ref = torch.nn.Linear(4, 2)
    with torch.no_grad():
        for p, r in zip(ref.parameters(), rrefs):
            p.copy_(r.to_here())
    opt = DistributedOptimizer(torch.optim.SGD, rrefs, lr=0.5)
    x = torch.randn(3, 4)
    with dist_autograd.context() as cid:
        loss = remote_lin(x).sum() + remote_lin.forward_async(x * 2).wait().pow(2).sum()
        dist_autograd.backward(cid, [loss])
        opt.step(cid)
    (ref(x).sum() + ref(x * 2).pow(2).sum()).backward()
    for p, r in zip(ref.parameters(), rrefs):
        close(r.to_here(), p.detach() - 0.5 * p.grad)
    report("RemoteModule")

    # torch's errors.
    def error(f):
        try:
            f()
        except RuntimeError as e:
            return str(e)
        raise AssertionError("no error")
    assert error(lambda: dist_autograd._current_context()).startswith("Current thread doesn't have a valid autograd")
    assert error(lambda: dist_autograd.backward(cid, [loss])) == "Could not find autograd context with id: %d" % cid
    assert error(lambda: dist_autograd.get_gradients(123)) == "Could not find autograd context with id: 123"
    assert error(lambda: opt.step(123)) == "Could not find autograd context with id: 123"
    with dist_autograd.context() as cid:
        assert error(lambda: dist_autograd.backward(cid, [torch.ones(2, requires_grad=True) * 2])).endswith(
            "all roots need to be scalar")
    report("errors")
    report("all done")


if __name__ == "__main__":
    main()
