"""Run on 2 ranks (python -m cthtorch.distributed.run --nproc_per_node=2 ...):
torch.distributed.rpc between "ps" (rank 0, a parameter server) and
"trainer" (rank 1). Rank 1 prints "ok <check>"; a failure on either rank
fails the job."""
import os
import time
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import cthtorch as torch  # noqa: E402
import cthtorch.distributed.rpc as rpc  # noqa: E402


class ParameterServer:
    """Holds a linear model; trainers fetch its weights and push gradients."""

    def __init__(self, n_in, n_out):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(n_in, n_out)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.5)
        self.lock = threading.Lock()
        self.updates = 0

    def get_weights(self):
        with self.lock:
            return [p.detach().clone() for p in self.model.parameters()]

    def apply_grads(self, grads):
        with self.lock:
            for p, g in zip(self.model.parameters(), grads):
                p.grad = g
            self.opt.step()
            self.updates += 1
            return self.updates


def add(a, b):
    return a + b


def fail(msg):
    raise ValueError(msg)


def whoami():
    return rpc.get_worker_info().name


def call_back(to):   # an RPC that makes an RPC back to its caller
    return rpc.rpc_sync(to, whoami)


def rref_sum(rref):   # an RRef passed by value: fetched from its owner
    return rref.to_here().sum().item()


def report(name):
    if rpc.get_worker_info().id == 1:
        print("ok", name, flush=True)


def trainer_checks():
    assert rpc.rpc_sync("ps", add, args=(torch.ones(3), 2)).tolist() == [3.0, 3.0, 3.0]
    futs = [rpc.rpc_async("ps", add, args=(i, 10)) for i in range(5)]
    assert [f.wait() for f in futs] == [10, 11, 12, 13, 14]
    report("rpc_sync and rpc_async")
    try:
        rpc.rpc_sync("ps", fail, args=("bad input",))
    except ValueError as e:
        assert "bad input" in str(e)
    else:
        raise AssertionError("the remote error was not raised")
    report("remote exception")
    assert rpc.rpc_sync("ps", call_back, args=("trainer",)) == "trainer"
    assert rpc.get_worker_info("ps").id == 0 and rpc.get_worker_info().name == "trainer"
    report("nested rpc")
    t = rpc.remote("ps", torch.arange, args=(6,))
    assert t.owner().name == "ps" and not t.is_owner()
    assert t.to_here().tolist() == list(range(6))
    assert rpc.rpc_sync("ps", rref_sum, args=(t,)) == 15
    mine = rpc.RRef(torch.full((4,), 2.0))
    assert mine.is_owner() and rpc.rpc_sync("ps", rref_sum, args=(mine,)) == 8
    report("remote and RRef")
    # parameter server training: y = 3 x1 - 2 x2 + 1
    ps = rpc.remote("ps", ParameterServer, args=(2, 1))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 2, generator=g)
    y = x @ torch.tensor([[3.0], [-2.0]]) + 1
    for step in range(60):
        w, b = ps.rpc_sync().get_weights()
        w.requires_grad_(), b.requires_grad_()
        loss = ((x @ w.t() + b - y) ** 2).mean()
        loss.backward()
        n = ps.rpc_sync().apply_grads([w.grad, b.grad])
    w, b = ps.rpc_sync().get_weights()
    assert n == 60 and abs(w[0, 0].item() - 3) < 1e-2 and abs(w[0, 1].item() + 2) < 1e-2, (w, b)
    assert abs(b.item() - 1) < 1e-2, b
    report("parameter server")
    # timeouts (seconds): the call's own, then the agent's default; a late reply is dropped
    try:
        rpc.rpc_sync("ps", time.sleep, args=(1.0,), timeout=0.2)
    except RuntimeError as e:
        assert str(e) == "RPC ran for more than set timeout (200 ms) and will now be marked with an error", str(e)
    else:
        raise AssertionError("rpc_sync(timeout=0.2) did not time out")
    fut = rpc.rpc_async("ps", time.sleep, args=(0.5,), timeout=0.1)
    try:
        fut.wait()
    except RuntimeError as e:
        assert "(100 ms)" in str(e), str(e)
    else:
        raise AssertionError("rpc_async(timeout=0.1) did not time out")
    assert rpc.rpc_sync("ps", add, args=(1, 2), timeout=0) == 3   # 0: no timeout
    time.sleep(1.0)   # the late replies arrive and are dropped
    assert rpc.rpc_sync("ps", add, args=(2, 2), timeout=5) == 4
    report("timeouts")
    try:   # timeout=-1 (the default): the agent's rpc_timeout, 2 s here (main)
        rpc.rpc_sync("ps", time.sleep, args=(2.5,))
    except RuntimeError as e:
        assert "(2000 ms)" in str(e), str(e)
    else:
        raise AssertionError("the backend options' rpc_timeout was not applied")
    report("default timeout from the backend options")


def main():
    rank = int(os.environ["RANK"])
    rpc.init_rpc("ps" if rank == 0 else "trainer", rank=rank, world_size=int(os.environ["WORLD_SIZE"]),
                 rpc_backend_options=rpc.TensorPipeRpcBackendOptions(rpc_timeout=2.0))
    if rank == 1:
        trainer_checks()
    rpc.shutdown()   # the parameter server serves until the trainer is done
    if rank == 1:
        print("ok all done", flush=True)


if __name__ == "__main__":
    main()
