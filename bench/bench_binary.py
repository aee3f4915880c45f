"""igamma / igammac (special.gammainc / gammaincc) and atan2: cthtorch and torch timed
side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_binary.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    a = L.from_numpy(rs.uniform(0.1, 20, 1_000_000))
    x = L.from_numpy(rs.uniform(0, 25, 1_000_000))
    af, xf = a.float(), x.float()
    xg = x[:100_000].clone().requires_grad_()
    yn, xn = L.from_numpy(rs.randn(1_000_000).astype(np.float32)), L.from_numpy(rs.randn(1_000_000).astype(np.float32))

    def grad():
        L.igamma(a[:100_000], xg).sum().backward()
    return {
        "igamma 1M float64": lambda: L.igamma(a, x),
        "igammac 1M float64": lambda: L.igammac(a, x),
        "igamma 1M float32": lambda: L.igamma(af, xf),
        "igamma fwd+bwd 100k float64": grad,
        "atan2 1M float32": lambda: L.atan2(yn, xn),
        "atan2 1M float32, x broadcast": lambda: L.atan2(yn, xn[:1]),
    }


if __name__ == "__main__":
    main(cases)
