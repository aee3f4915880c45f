"""lu_unpack (a C op: P, L and U in one pass over the packed factors) of a
batch of LU factors, kron (a broadcast product over rows as short as B's last dim) and einsum's
outer products (one broadcast mul), cthtorch and torch side by side in one process (min of
repeats, ms).
Run: PYTHONPATH=. python bench/bench_linalg.py [threads]"""
import numpy as np

import bench_scatter   # the side-by-side timing loop (bench/ is on the path when run as a script)


def cases(L):
    rs = np.random.RandomState(0)
    out = {}
    for b, n in ((1, 512), (64, 32), (1024, 8)):
        A = L.from_numpy(rs.randn(b, n, n))
        LU, piv = L.linalg.lu_factor(A)
        out["lu_unpack (%d,%d,%d) float64" % (b, n, n)] = lambda LU=LU, piv=piv: L.lu_unpack(LU, piv)
        out["lu_unpack (%d,%d,%d) data only" % (b, n, n)] = (
            lambda LU=LU, piv=piv: L.lu_unpack(LU, piv, unpack_pivots=False))
    for sa, sb in (((64, 64), (32, 32)), ((8, 16, 16), (4, 8, 8)), ((100, 100), (2, 2))):
        a, b = L.from_numpy(rs.randn(*sa).astype(np.float32)), L.from_numpy(rs.randn(*sb).astype(np.float32))
        out["kron %s x %s float32" % ("x".join(map(str, sa)), "x".join(map(str, sb)))] = lambda a=a, b=b: L.kron(a, b)
    for eq, sa, sb in (("i,j->ij", (1000,), (1000,)), ("i,j->ij", (64,), (64,)), ("bi,bj->bij", (32, 100), (32, 100)),
                       ("ij,ik->ijk", (64, 32), (64, 32))):
        a, b = L.from_numpy(rs.randn(*sa).astype(np.float32)), L.from_numpy(rs.randn(*sb).astype(np.float32))
        out["einsum %s %s" % (eq, "x".join(map(str, sa)))] = lambda eq=eq, a=a, b=b: L.einsum(eq, a, b)
    return out


if __name__ == "__main__":
    bench_scatter.main(cases)
