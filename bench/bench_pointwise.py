"""The pointwise C ops of binary.yaml / unary.yaml and the windows of
factory.yaml: cthtorch and torch timed side by side in one process (min of
repeats, ms) on 1M elements.
Run: PYTHONPATH=. python bench/bench_pointwise.py [threads]"""
import numpy as np

import bench_scatter   # the side-by-side timing loop (bench/ is on the path when run as a script)

N = 1 << 20


def cases(L):
    rs = np.random.RandomState(0)
    x = L.from_numpy((rs.randn(N) * 4).astype(np.float32))
    y = L.from_numpy((rs.randn(N) * 4).astype(np.float32))
    xd = x.double()
    xh = x.half()
    a = L.from_numpy(rs.randint(-1000, 1000, size=N))
    b = L.from_numpy(rs.randint(-1000, 1000, size=N))
    e = L.from_numpy(rs.randint(-10, 10, size=N).astype(np.int32))
    return {
        "gcd int64": lambda: L.gcd(a, b),
        "lcm int64": lambda: L.lcm(a, b),
        "heaviside float32": lambda: L.heaviside(x, y),
        "nextafter float32": lambda: L.nextafter(x, y),
        "nextafter float16": lambda: L.nextafter(xh, y.half()),
        "ldexp float32, int32": lambda: L.ldexp(x, e),
        "logaddexp float32": lambda: L.logaddexp(x, y),
        "logaddexp float64": lambda: L.logaddexp(xd, y.double()),
        "logaddexp2 float32": lambda: L.logaddexp2(x, y),
        "sinc float32": lambda: L.sinc(x),
        "i0 float32": lambda: L.i0(x),
        "i0 float64": lambda: L.i0(xd),
        "special.i1 float32": lambda: L.special.i1(x),
        "special.i1 float64": lambda: L.special.i1(xd),
        "special.i1e float32": lambda: L.special.i1e(x),
        "special.i1e float64": lambda: L.special.i1e(xd),
        "special.i0e float32": lambda: L.special.i0e(x),
        "special.i0e float64": lambda: L.special.i0e(xd),
        "frexp float32": lambda: L.frexp(x),
        "hann_window(1M)": lambda: L.hann_window(N),
        "kaiser_window(1M)": lambda: L.kaiser_window(N),
    }


if __name__ == "__main__":
    bench_scatter.main(cases)
