"""cat / stack / flip / roll / repeat_interleave / F.unfold / F.fold:
cthtorch and torch timed side by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_shape.py [threads]"""
import sys

import numpy as np
import torch

import cthtorch
from bench_scatter import main   # the side-by-side timing loop (bench/ is on sys.path when run as a script)


def cases(L):
    rs = np.random.RandomState(0)
    F = L.nn.functional
    xs = [L.from_numpy(rs.rand(256, 1024).astype(np.float32)) for _ in range(8)]
    x = xs[0]
    img = L.from_numpy(rs.rand(16, 64, 32, 32).astype(np.float32))
    cols = F.unfold(img, 3)
    rep = L.from_numpy(rs.randint(0, 4, size=256))
    long1 = L.from_numpy(rs.rand(4000000).astype(np.float32))
    cube = L.from_numpy(rs.rand(64, 64, 64))
    return {
        "cat 8x(256,1024) dim 0": lambda: L.cat(xs, 0),
        "cat 8x(256,1024) dim 1": lambda: L.cat(xs, 1),
        "stack 8x(256,1024) dim 0": lambda: L.stack(xs, 0),
        "stack 8x(256,1024) dim 2": lambda: L.stack(xs, 2),
        "flip (256,1024) dim 0": lambda: x.flip(0),
        "flip (256,1024) dim 1": lambda: x.flip(1),
        "flip (4M,) dim 0": lambda: long1.flip(0),
        "flip (64,64,64) float64 dim 2": lambda: cube.flip(2),
        "clone (64,64,64) float64 (flip's floor)": lambda: cube.clone(),
        "roll (256,1024) (3, 5) dims (0, 1)": lambda: x.roll((3, 5), (0, 1)),
        "roll (256,1024) 7 flat": lambda: x.roll(7),
        "repeat_interleave (256,1024) 3 dim 0": lambda: x.repeat_interleave(3, 0),
        "repeat_interleave (256,1024) 3 dim 1": lambda: x.repeat_interleave(3, 1),
        "repeat_interleave (256,1024) tensor dim 0": lambda: x.repeat_interleave(rep, 0),
        "F.unfold (16,64,32,32) k=3": lambda: F.unfold(img, 3),
        "F.fold -> (16,64,32,32) k=3": lambda: F.fold(cols, (32, 32), 3),
    }


if __name__ == "__main__":
    main(cases)
