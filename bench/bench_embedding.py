"""embedding_bag (sum / mean / max, per_sample_weights) forward and backward:
cthtorch and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_embedding.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    w = L.from_numpy(rs.randn(100_000, 64).astype(np.float32))
    idx = L.from_numpy(rs.randint(0, 100_000, 200_000))
    offs = L.from_numpy(np.arange(0, 200_000, 50))        # 4000 bags of 50
    psw = L.from_numpy(rs.rand(200_000).astype(np.float32))
    wg = w[:20_000].clone().requires_grad_()
    idx_g = idx % 20_000
    F = L.nn.functional

    def bwd(mode):
        def run():
            F.embedding_bag(idx_g, wg, offs, mode=mode).sum().backward()
        return run
    return {
        "embedding_bag sum 200k idx, 4000 bags, D=64": lambda: F.embedding_bag(idx, w, offs, mode="sum"),
        "embedding_bag mean": lambda: F.embedding_bag(idx, w, offs, mode="mean"),
        "embedding_bag max": lambda: F.embedding_bag(idx, w, offs, mode="max"),
        "embedding_bag sum per_sample_weights": lambda: F.embedding_bag(idx, w, offs, mode="sum",
                                                                       per_sample_weights=psw),
        "embedding_bag mean fwd+bwd (20k x 64 table)": bwd("mean"),
        "embedding_bag max fwd+bwd (20k x 64 table)": bwd("max"),
    }


if __name__ == "__main__":
    main(cases)
