"""F.grid_sample (ATSampling.c) forward and backward with few channels, where the per-point
coordinate tables, not the channel loops, take the time: cthtorch and torch timed side by side in
one process (min of repeats, ms). Run: PYTHONPATH=. python bench/bench_sampling.py [threads]"""
import numpy as np

from bench_scatter import main


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy(rs.randn(8, 2, 64, 64).astype(np.float32))
    g = L.from_numpy(rs.rand(8, 64, 64, 2).astype(np.float32) * 2 - 1)
    v = L.from_numpy(rs.randn(2, 1, 16, 32, 32).astype(np.float32))
    g3 = L.from_numpy(rs.rand(2, 16, 32, 32, 3).astype(np.float32) * 2 - 1)
    xg, gg = x.clone().requires_grad_(), g.clone().requires_grad_()
    vg, g3g = v.clone().requires_grad_(), g3.clone().requires_grad_()
    F = L.nn.functional

    def bwd(a, b, **kw):
        def run():
            F.grid_sample(a, b, align_corners=False, **kw).sum().backward()
        return run
    return {
        "bilinear 2-d 8x2x64x64": lambda: F.grid_sample(x, g, align_corners=False),
        "nearest 2-d 8x2x64x64": lambda: F.grid_sample(x, g, mode="nearest", align_corners=False),
        "bilinear border 2-d 8x2x64x64": lambda: F.grid_sample(x, g, padding_mode="border", align_corners=True),
        "bilinear fwd+bwd 2-d 8x2x64x64": bwd(xg, gg),
        "trilinear 3-d 2x1x16x32x32": lambda: F.grid_sample(v, g3, align_corners=False),
        "nearest 3-d 2x1x16x32x32": lambda: F.grid_sample(v, g3, mode="nearest", align_corners=False),
        "trilinear fwd+bwd 3-d 2x1x16x32x32": bwd(vg, g3g),
    }


if __name__ == "__main__":
    main(cases)
