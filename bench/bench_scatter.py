"""gather / scatter / scatter_add / scatter_reduce / index_add: cthtorch and
torch timed side by side in one process (median of repeats, ms).
Run: PYTHONPATH=. python bench/bench_scatter.py [threads]"""
import statistics
import sys
import time

import numpy as np
import torch

import cthtorch


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.rand(10000, 64).astype(np.float32))
    e = L.from_numpy(rs.randint(0, 10000, size=50000))
    src = L.from_numpy(rs.rand(50000, 64).astype(np.float32))
    q = L.from_numpy(rs.rand(256, 6).astype(np.float32))
    act = L.from_numpy(rs.randint(0, 6, size=(256, 1)))
    big = L.from_numpy(rs.rand(100000, 16).astype(np.float32))
    bidx = L.from_numpy(rs.randint(0, 16, size=(100000, 16)))
    eidx = e.reshape(-1, 1).expand(50000, 64)
    perm = L.from_numpy(np.argsort(rs.rand(100000, 16), axis=1)[:, :8].copy())
    return {
        "scatter_add gnn (50000x64 -> 10000x64)": lambda: x.scatter_add(0, eidx, src),
        "index_add gnn (50000x64 -> 10000x64)": lambda: x.index_add(0, e, src),
        "scatter_reduce amax gnn": lambda: x.scatter_reduce(0, eidx, src, "amax"),
        "scatter_reduce mean gnn": lambda: x.scatter_reduce(0, eidx, src, "mean"),
        "gather dqn q.gather(1, a) 256x6": lambda: q.gather(1, act),
        "gather 100000x16 dim 1": lambda: big.gather(1, bidx),
        "scatter src 100000x8 dim 1": lambda: big.scatter(1, perm, big[:, :8]),
        "scatter value 100000x8 dim 1": lambda: big.scatter(1, perm, 1.0),
    }


def timeit(f, reps=15):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.min(ts))



def _calls_per_round(fn, round_s):
    """a power of two calls lasting at least round_s seconds (after one warm-up call)"""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > round_s:
            return n
        n *= 2


def _round(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def median_time(fn, round_s=0.05, rounds=5):
    """median over `rounds` of the mean time of one call (ms), a round being as many calls
    (a power of two) as last round_s seconds; for cases too fast for timeit's single calls"""
    n = _calls_per_round(fn, round_s)
    return 1e3 * statistics.median([_round(fn, n) for _ in range(rounds)])


def median_times_interleaved(fa, fb, round_s=0.05, rounds=9):
    """median_time of fa and of fb with their rounds alternating (a, b, a, b, ...), so that a
    burst of load on the shared machine falls on both libraries' rounds alike"""
    na, nb = _calls_per_round(fa, round_s), _calls_per_round(fb, round_s)
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(_round(fa, na))
        tb.append(_round(fb, nb))
    return 1e3 * statistics.median(ta), 1e3 * statistics.median(tb)


def main(make_cases=cases):
    """times make_cases(cthtorch) against make_cases(torch), case by case (other benches reuse it)"""
    if len(sys.argv) > 1:
        cthtorch.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(cthtorch.get_num_threads())
    ct, tt = make_cases(cthtorch), make_cases(torch)
    for f in list(ct.values()) + list(tt.values()):   # warm-up: allocator caches reach their steady state
        timeit(f, 3)
    print("%-42s %10s %10s %9s" % ("case (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch", "ct/torch"))
    for name in ct:
        a, b = timeit(ct[name]), timeit(tt[name])
        print("%-42s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
