"""pdist forward and backward over p = 1, 2, 3, inf: cthtorch and torch timed
side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_distance.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.randn(1000, 64).astype(np.float32))
    xg = L.from_numpy(rs.randn(500, 64).astype(np.float32)).requires_grad_()

    def bwd(p):
        def run():
            L.pdist(xg, p).sum().backward()
        return run
    out = {"pdist 1000x64 p=%s" % p: (lambda p=p: L.pdist(x, p)) for p in (1.0, 2.0, 3.0, float("inf"))}
    out.update({"pdist fwd+bwd 500x64 p=%s" % p: bwd(p) for p in (1.0, 2.0, 3.0)})
    return out


if __name__ == "__main__":
    main(cases)
