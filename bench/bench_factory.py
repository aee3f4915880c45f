"""Window functions of factory.yaml (periodic and symmetric, float32 and
float64, 1k to 1M points): cthtorch and torch timed side by side in one
process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_factory.py [threads]"""
import bench_scatter   # the side-by-side timing loop (bench/ is on the path when run as a script)

WINDOWS = ("hann", "hamming", "blackman", "bartlett", "kaiser")


def cases(L):
    out = {}
    for n in (1000, 1 << 20):
        for dt in ("float32", "float64"):
            for w in WINDOWS:
                for periodic in (True, False):
                    f = getattr(L, w + "_window")
                    out["%s_window(%d, %s) %s" % (w, n, periodic, dt)] = (
                        lambda f=f, n=n, p=periodic, d=getattr(L, dt): f(n, p, dtype=d))
    return out


if __name__ == "__main__":
    bench_scatter.main(cases)
