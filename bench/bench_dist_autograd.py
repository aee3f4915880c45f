"""One distributed-autograd training step over RPC on 2 local ranks: the
trainer (rank 1) runs a local Linear(512, 512), sends the activation to the
parameter server (rank 0) whose Linear(512, 512) + tanh returns the result,
then dist_autograd.backward and DistributedOptimizer(SGD).step. cthtorch
(MPI engine) beside torch (TensorPipe), each as its own 2-rank job under its
own launcher; rank 1 reports the median of 30 steps after 5 warm-up steps, and of 30
empty rpc_sync round trips (the transport's share).

Run: PYTHONPATH=. python bench/bench_dist_autograd.py"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARMUP, STEPS, BATCH, WIDTH = 5, 30, 64, 512
_ps = {}


def _ps_forward(x):
    return _ps["tanh"](_ps["lin"](x))


def _noop():
    return None


def _ps_params():
    import importlib
    rpc = importlib.import_module(_ps["lib"] + ".distributed.rpc")
    return [rpc.RRef(p) for p in _ps["lin"].parameters()]


def worker(lib_name):
    import importlib
    torch = importlib.import_module(lib_name)
    rpc = importlib.import_module(lib_name + ".distributed.rpc")
    dist_autograd = importlib.import_module(lib_name + ".distributed.autograd")
    DistributedOptimizer = importlib.import_module(lib_name + ".distributed.optim").DistributedOptimizer
    rank = int(os.environ["RANK"])
    torch.manual_seed(0)
    _ps.update(lib=lib_name, lin=torch.nn.Linear(WIDTH, WIDTH), tanh=torch.tanh)
    rpc.init_rpc("ps" if rank == 0 else "trainer", rank=rank, world_size=2)
    if rank == 1:
        local = torch.nn.Linear(WIDTH, WIDTH)
        params = rpc.rpc_sync("ps", _ps_params) + [rpc.RRef(p) for p in local.parameters()]
        opt = DistributedOptimizer(torch.optim.SGD, params, lr=0.01)
        x = torch.randn(BATCH, WIDTH)
        steps = []
        for i in range(WARMUP + STEPS):
            t0 = time.perf_counter()
            with dist_autograd.context() as cid:
                out = rpc.rpc_sync("ps", _ps_forward, args=(local(x),))
                dist_autograd.backward(cid, [out.pow(2).mean()])
                opt.step(cid)
            if i >= WARMUP:
                steps.append(time.perf_counter() - t0)
        trips = []
        for i in range(WARMUP + STEPS):
            t0 = time.perf_counter()
            rpc.rpc_sync("ps", _noop)
            if i >= WARMUP:
                trips.append(time.perf_counter() - t0)
        print("RESULT " + json.dumps({"step_ms": 1e3 * statistics.median(steps),
                                      "rpc_ms": 1e3 * statistics.median(trips)}), flush=True)
    rpc.shutdown()


def run_job(lib_name):
    launcher = "torch.distributed.run" if lib_name == "torch" else "cthtorch.distributed.run"
    cmd = [sys.executable, "-m", launcher, "--standalone", "--nproc_per_node=2", os.path.abspath(__file__),
           "--worker", lib_name]
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    for line in r.stdout.splitlines():
        if "RESULT " in line:
            return json.loads(line[line.index("RESULT ") + 7:])
    raise RuntimeError("%s job failed:\n%s\n%s" % (lib_name, r.stdout[-2000:], r.stderr[-4000:]))


def main():
    ours = run_job("cthtorch")
    theirs = run_job("torch")
    print("dist_autograd step (trainer Linear(%d,%d) -> RPC -> ps Linear + tanh, backward, DistributedOptimizer), "
          "batch %d, 2 ranks (median of %d steps):" % (WIDTH, WIDTH, BATCH, STEPS))
    print("  cthtorch (MPI)      %8.2f ms" % ours["step_ms"])
    print("  torch (TensorPipe)  %8.2f ms   ratio cthtorch/torch %.2f"
          % (theirs["step_ms"], ours["step_ms"] / theirs["step_ms"]))
    print("an empty rpc_sync round trip: cthtorch %.2f ms, torch %.2f ms (ratio %.2f)"
          % (ours["rpc_ms"], theirs["rpc_ms"], ours["rpc_ms"] / theirs["rpc_ms"]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        main()
