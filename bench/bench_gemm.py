"""sgemm rate (GF/s, more is better) of cthtorch's matmul beside torch's and
numpy's, square sizes 64..512 (issue 22: at least torch's rate) and 2048
(within 5% of the machine's limit), in one process at equal threads; then
small-M products against a weight that many calls reuse (a recurrent layer's
per-step shapes), where cthtorch's packed-weight GEMM (_C._internal.
_gemm_packed, the weight packed once outside the loop) runs beside mm.
Rounds alternate between the libraries so a load change on a shared machine
hits all three alike; each cell is the best of 5 rounds' mean rate.
OpenBLAS's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE caps are lifted for all as
bench_rnn.py does. After numpy's round the bench waits (_settle): numpy's
OpenBLAS worker threads keep polling for about 0.1 s after each call, and a
library timed in that window gets half the cores (at 2 threads, 1024^3, right
after a numpy product: cthtorch 68-89 GF/s and torch 55-78, against 130-168
after a pause; this made cthtorch's 1024 row, which followed numpy's, drop
to half now and then). Run: PYTHONPATH=. python bench/bench_gemm.py [threads]"""
import os
import sys

_CAPS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(k in os.environ for k in _CAPS):
    env = {k: v for k, v in os.environ.items() if k not in _CAPS}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import cthtorch  # noqa: E402

SIZES = (64, 128, 256, 384, 512, 1024, 2048)


def _rate(fn, n, round_s):
    """GF/s of one round: as many calls as last round_s seconds"""
    reps, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t = time.perf_counter() - t0
        if t > round_s:
            return 2 * n ** 3 * reps / t / 1e9
        reps *= 2


def _settle(key):
    """after numpy's round: let its OpenBLAS workers stop polling before the next library's round"""
    if key == "numpy":
        time.sleep(0.25)


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else cthtorch.get_num_threads()
    try:   # numpy's own OpenBLAS at the same thread count (this sets every OpenBLAS loaded...)
        from threadpoolctl import threadpool_limits
        threadpool_limits(threads)
    except ImportError:
        pass
    cthtorch.set_num_threads(threads)   # ...and cthtorch's own goes back to 1 under its OpenMP split
    torch.set_num_threads(threads)
    print("%-12s %10s %10s %10s %9s %9s" % ("sgemm (t=%d)" % threads, "cthtorch", "torch", "numpy",
                                          "ct/torch", "ct/numpy"))
    rs = np.random.RandomState(0)
    for n in SIZES:
        a, b = rs.rand(n, n).astype(np.float32), rs.rand(n, n).astype(np.float32)
        fns = {"ct": (lambda x, y: lambda: x @ y)(cthtorch.from_numpy(a), cthtorch.from_numpy(b)),
               "torch": (lambda x, y: lambda: x @ y)(torch.from_numpy(a), torch.from_numpy(b)),
               "numpy": lambda: a @ b}
        best = {k: 0.0 for k in fns}
        round_s = 0.3 if n >= 2048 else 0.05
        for _ in range(5):
            for k, f in fns.items():
                best[k] = max(best[k], _rate(f, n, round_s))
                _settle(k)
        print("%-12s %9.1f %10.1f %10.1f %8.2fx %8.2fx" % (n, best["ct"], best["torch"], best["numpy"],
                                                          best["ct"] / best["torch"], best["ct"] / best["numpy"]))
    small_m(rs)


def small_m(rs):
    from cthtorch._C import _internal
    print("\n%-16s %10s %10s %10s %10s %9s" % ("M x K x N", "ct packed", "ct mm", "torch", "numpy", "pk/torch"))
    for m, k, n in ((32, 256, 1024), (32, 1024, 256), (64, 128, 384), (64, 512, 512), (16, 256, 768)):
        a, b = rs.rand(m, k).astype(np.float32), rs.rand(k, n).astype(np.float32)
        ca, cb = cthtorch.from_numpy(a), cthtorch.from_numpy(b)
        wp = _internal._gemm_pack(cb)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fns = {"pk": lambda: _internal._gemm_packed(ca, wp, n), "ct": lambda: ca @ cb, "torch": lambda: ta @ tb,
               "numpy": lambda: a @ b}
        best = {key: 0.0 for key in fns}
        for _ in range(5):
            for key, f in fns.items():
                best[key] = max(best[key], _rate(f, (m * k * n) ** (1 / 3), 0.05))
                _settle(key)
        print("%-16s %9.1f %10.1f %10.1f %10.1f %8.2fx" % ("%dx%dx%d" % (m, k, n), best["pk"], best["ct"],
                                                           best["torch"], best["numpy"], best["pk"] / best["torch"]))


if __name__ == "__main__":
    main()
