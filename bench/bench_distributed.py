"""all_reduce bandwidth over 2 local ranks: cthtorch (MPI; a same-node
all_reduce this large goes through an MPI shared-memory window, see
cthtorch/distributed/_shm_allreduce.py) beside torch's gloo backend, both
launched from this script.

    python bench/bench_distributed.py [--mb 64] [--iters 10]

Bandwidth is the all-reduced tensor's bytes over the median time of one
all_reduce (what torch's and nccl-tests' "algorithm bandwidth" reports).
Each side is one 2-rank job: cthtorch under its launcher, torch under
torch.multiprocessing.spawn with gloo on loopback. The jobs run one after
the other, so they do not share the cores.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(torch, dist, mb, iters):
    n = mb * (1 << 20) // 4
    t = torch.ones(n, dtype=torch.float32)
    for _ in range(2):   # warm-up: first-touch of the buffers, connection set-up
        dist.all_reduce(t)
    times = []
    for _ in range(iters):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - t0)
    ok = float(t[0]) == 2.0 ** (iters + 2) and float(t[-1]) == 2.0 ** (iters + 2)
    # the slower rank's time is the collective's time
    worst = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return float(worst[0]), ok


def _torch_rank(rank, port, mb, iters, out):
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2)
    sec, ok = measure(torch, dist, mb, iters)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"sec": sec, "ok": ok}, f)
    dist.destroy_process_group()


def rank_main(mb, iters, out):
    import cthtorch as torch
    import cthtorch.distributed as dist
    dist.init_process_group("gloo")
    sec, ok = measure(torch, dist, mb, iters)
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump({"sec": sec, "ok": ok}, f)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rank-main", metavar="OUT")
    a = ap.parse_args()
    if a.rank_main:
        return rank_main(a.mb, a.iters, a.rank_main)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = "/tmp/bench_distributed_%d.json" % os.getpid()
    results = {}
    subprocess.run([sys.executable, "-m", "cthtorch.distributed.run", "--nproc_per_node=2", "--standalone",
                    os.path.abspath(__file__), "--mb", str(a.mb), "--iters", str(a.iters), "--rank-main", out],
                   env=env, check=True, timeout=600)
    results["cthtorch (MPI)"] = json.load(open(out))
    try:
        import torch.multiprocessing as tmp
    except ImportError:
        print("torch is not installed: no gloo baseline")
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        tmp.spawn(_torch_rank, args=(port, a.mb, a.iters, out), nprocs=2)
        results["torch gloo"] = json.load(open(out))
    os.unlink(out)
    nbytes = a.mb * (1 << 20)
    print("all_reduce of %d MB float32 over 2 local ranks (median of %d)" % (a.mb, a.iters))
    for name, r in results.items():
        print("  %-16s %8.2f ms  %6.2f GB/s  %s" % (name, r["sec"] * 1e3, nbytes / r["sec"] / 1e9,
                                                  "" if r["ok"] else "WRONG RESULT"))
    if len(results) == 2:
        print("  bandwidth ratio cthtorch/gloo: %.2fx" % (results["torch gloo"]["sec"] / results["cthtorch (MPI)"]["sec"]))


if __name__ == "__main__":
    main()
