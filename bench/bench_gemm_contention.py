"""GEMM rate (GF/s) of cthtorch's matmul beside torch's and numpy's while a controlled competitor
shares the cores (issue 22): split products must not collapse when the kernel keeps one of their
threads off its core. Modes: none; half (a busy-loop process at nice 0 busy 5 ms, asleep 5 ms: about
half a core); full (one busy process). Per size and library: the median and best of ROUNDS rounds'
rates (each round as many calls as last 0.05 s, libraries interleaved) and the rate per cpu-second
(cpu time counts threads that spin while they wait). The machine's own load adds to the competitor:
read the load average printed with each run.
Run: PYTHONPATH=. python bench/bench_gemm_contention.py [none|half|full] [threads] [sizes,...] [kind]
kind: nn (a @ b), tn (a transposed: OpenBLAS's slabs), dd (float64), bmm (8 matrices a batch)."""
import os
import statistics
import subprocess
import sys
import time

_CAPS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(k in os.environ for k in _CAPS):
    env = {k: v for k, v in os.environ.items() if k not in _CAPS}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import cthtorch  # noqa: E402

COMPETITORS = {
    "full": "while True: pass",
    "half": "import time\nwhile True:\n t = time.perf_counter() + 0.005\n while time.perf_counter() < t: pass\n"
            " time.sleep(0.005)",
}


def _round(fn, flops, round_s=0.05):
    reps = 1
    while True:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        if t > round_s:
            return flops * reps / t / 1e9, flops * reps / max(c, 1e-9) / 1e9
        reps *= 2


def _operands(kind, n, rs):
    if kind == "bmm":
        return rs.rand(8, n, n).astype(np.float32), rs.rand(8, n, n).astype(np.float32)
    a, b = rs.rand(n, n).astype(np.float32), rs.rand(n, n).astype(np.float32)
    if kind == "tn":
        a = np.ascontiguousarray(a.T).T
    if kind == "dd":
        a, b = a.astype(np.float64), b.astype(np.float64)
    return a, b


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    sizes = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [64, 128, 256, 384, 512, 1024]
    kind = sys.argv[4] if len(sys.argv) > 4 else "nn"
    rounds = int(os.environ.get("ROUNDS", 7))
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(threads)
    except ImportError:
        pass
    cthtorch.set_num_threads(threads)
    torch.set_num_threads(threads)
    comp = subprocess.Popen([sys.executable, "-c", COMPETITORS[mode]]) if mode in COMPETITORS else None
    try:
        time.sleep(0.3)
        print("competitor=%s threads=%d kind=%s load=%.1f (GF/s: median / best / per cpu-second)"
              % (mode, threads, kind, os.getloadavg()[0]))
        rs = np.random.RandomState(0)
        for n in sizes:
            a, b = _operands(kind, n, rs)
            flops = 2 * n ** 3 * (8 if kind == "bmm" else 1)
            ca, cb, ta, tb = cthtorch.from_numpy(a), cthtorch.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
            fns = {"cthtorch": lambda: ca @ cb, "torch": lambda: ta @ tb, "numpy": lambda: a @ b}
            wall = {k: [] for k in fns}
            cpu = {k: [] for k in fns}
            for _ in range(rounds):
                for k, f in fns.items():
                    w, c = _round(f, flops)
                    wall[k].append(w)
                    cpu[k].append(c)
            print("%5d  " % n + "   ".join("%s %6.1f / %6.1f / %6.1f" % (k, statistics.median(wall[k]), max(wall[k]),
                                                                      statistics.median(cpu[k])) for k in fns),
                  flush=True)
    finally:
        if comp:
            comp.kill()
            comp.wait()


if __name__ == "__main__":
    main()
