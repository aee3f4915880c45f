"""The transcendental unary ops (unary.yaml, gelu/silu/mish) on 1M contiguous elements of each
float dtype, at 1 and 2 threads: cthtorch, torch and numpy timed side by side in one process
(min of repeats, ms), with cthtorch's ratio to torch. numpy has no float16 sin etc. worth
comparing for bfloat16 and no erf/gelu/silu/mish: those cells show '-'.
Run: PYTHONPATH=. python bench/bench_unary.py [ops,comma,separated] [repeats]"""
import sys

import numpy as np

import bench_scatter   # the timing loop (bench/ is on the path when run as a script)
import cthtorch

try:
    import torch
except ImportError:   # the cthtorch column alone still says something
    torch = None

N = 1 << 20
OPS = ["sin", "cos", "tan", "exp", "expm1", "log", "log1p", "log2", "tanh", "sigmoid", "erf", "erfc",
       "atan", "asin", "sqrt", "rsqrt", "gelu", "silu", "mish"]
DTYPES = ["float32", "float64", "float16", "bfloat16"]
NUMPY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "expm1": np.expm1, "log": np.log,
         "log1p": np.log1p, "log2": np.log2, "tanh": np.tanh, "atan": np.arctan, "asin": np.arcsin,
         "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "sigmoid": lambda a: 1 / (1 + np.exp(-a))}


def domain(op, rs):
    """inputs inside the op's domain, spread over the range its kernels reduce"""
    if op in ("log", "log2", "sqrt", "rsqrt"):
        return rs.uniform(1e-3, 1e3, N)
    if op == "log1p":
        return rs.uniform(-0.9, 100, N)
    if op == "asin":
        return rs.uniform(-1, 1, N)
    if op in ("exp", "expm1"):
        return rs.uniform(-20, 20, N)
    return rs.randn(N) * 4


def fn(lib, op):
    if op in ("gelu", "silu", "mish"):
        return getattr(lib.nn.functional, op)
    return getattr(lib, op)


def main():
    ops = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else OPS
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rs = np.random.RandomState(0)
    print("%-9s %-9s %3s %9s %9s %9s %7s" % ("op", "dtype", "thr", "cthtorch", "torch", "numpy", "ratio"))
    ratios = []
    for threads in (1, 2):
        cthtorch.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        for op in ops:
            base = domain(op, rs).astype(np.float64)
            for dt in DTYPES:
                x = cthtorch.from_numpy(base).to(getattr(cthtorch, dt))
                ours = bench_scatter.timeit(lambda: fn(cthtorch, op)(x), reps)
                theirs = nump = float("nan")
                if torch is not None:
                    xt = torch.from_numpy(base).to(getattr(torch, dt))
                    theirs = bench_scatter.timeit(lambda: fn(torch, op)(xt), reps)
                if op in NUMPY and dt != "bfloat16":
                    xn = base.astype(dt)
                    with np.errstate(all="ignore"):
                        nump = bench_scatter.timeit(lambda: NUMPY[op](xn), reps)
                r = ours / theirs
                ratios.append(r)
                print("%-9s %-9s %3d %9.3f %9.3f %9s %7.2f" % (op, dt, threads, ours, theirs,
                                                               "-" if nump != nump else "%.3f" % nump, r),
                      flush=True)
    if torch is not None:
        print("geomean ratio to torch: %.2f" % float(np.exp(np.mean(np.log(ratios)))))


if __name__ == "__main__":
    main()
