"""torch.fft and complex elementwise math: cthtorch, torch and numpy side by side in one process
(median of 5 rounds, ms; ratio = cthtorch / torch).
Run: PYTHONPATH=. python bench/bench_fft.py"""
import sys

import numpy as np
import torch

import cthtorch
from bench_scatter import median_time  # noqa: E402 (bench/ is on the path when run as a script)


def cases():
    rs = np.random.RandomState(0)
    out = []
    for shape, label in (((64, 1024), "fft 64x1024 c64"), ((64, 1000), "fft 64x1000 c64 (2^3 5^3)"),
                         ((64, 1009), "fft 64x1009 c64 (prime: Bluestein)"), ((16, 65536), "fft 16x65536 c64")):
        x = (rs.randn(*shape) + 1j * rs.randn(*shape)).astype(np.complex64)
        out.append((label, x, lambda L, a: L.fft.fft(a), np.fft.fft))
    r = rs.randn(8, 3, 128, 128).astype(np.float32)
    out.append(("rfft2 8x3x128x128 f32", r, lambda L, a: L.fft.rfft2(a), np.fft.rfft2))
    spec = np.fft.rfft2(r).astype(np.complex64)
    out.append(("irfft2 8x3x128x65 c64", spec, lambda L, a: L.fft.irfft2(a, s=(128, 128)),
                lambda a: np.fft.irfft2(a, s=(128, 128))))
    z = (rs.randn(1 << 20) + 1j * rs.randn(1 << 20)).astype(np.complex64)
    out.append(("mul 1M c64", z, lambda L, a: a * a, lambda a: a * a))
    out.append(("abs 1M c64", z, lambda L, a: a.abs(), np.abs))
    return out


def main():
    print("%-36s %10s %10s %10s %8s" % ("case", "cthtorch", "torch", "numpy", "ratio"))
    for label, arr, f, fnp in cases():
        c, t = cthtorch.from_numpy(arr), torch.from_numpy(arr)
        tc = median_time(lambda: f(cthtorch, c))
        tt = median_time(lambda: f(torch, t))
        tn = median_time(lambda: fnp(arr))
        print("%-36s %10.3f %10.3f %10.3f %8.2f" % (label, tc, tt, tn, tc / tt))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
