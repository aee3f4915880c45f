"""Sparse COO gradient kernels, cthtorch beside torch in one process: the
pieces an nn.Embedding(sparse=True) step runs (coalesce, sparse + sparse
accumulation, dense += sparse in the optimizer, to_dense) on an embedding
gradient of 4096 rows of 128 from a 50000-row table, then one SparseAdam step.
Process CPU time, median of 3 rounds, so other processes on a loaded machine
count less. Run: PYTHONPATH=. python bench/bench_sparse.py [threads]"""
import sys
import time
import warnings

import numpy as np
import torch

import cthtorch

ROWS, DIM, NNZ = 50000, 128, 4096


def cpu_ms(f, n):
    f()
    runs = []
    for _ in range(3):
        s = time.process_time()
        for _ in range(n):
            f()
        runs.append((time.process_time() - s) / n * 1e3)
    return sorted(runs)[1]


def cases(L):
    rs = np.random.RandomState(0)
    a = L.sparse_coo_tensor(L.tensor(rs.randint(0, ROWS, (1, NNZ))), L.tensor(rs.randn(NNZ, DIM).astype(np.float32)),
                            (ROWS, DIM))
    b = L.sparse_coo_tensor(L.tensor(rs.randint(0, ROWS, (1, NNZ))), L.tensor(rs.randn(NNZ, DIM).astype(np.float32)),
                            (ROWS, DIM))
    d = L.zeros(ROWS, DIM)
    L.manual_seed(0)
    emb = L.nn.Embedding(ROWS, DIM, sparse=True)
    idx = L.tensor(rs.randint(0, ROWS, NNZ))
    opt = L.optim.SparseAdam(emb.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        emb(idx).sum().backward()
        opt.step()
    return {"coalesce": (lambda: a.coalesce(), 20), "sparse + sparse": (lambda: a + b, 20),
            "dense.add_(sparse)": (lambda: d.add_(a), 20), "to_dense": (lambda: a.to_dense(), 5),
            "Embedding(sparse) + SparseAdam step": (step, 5)}


def main():
    warnings.simplefilter("ignore")
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else cthtorch.get_num_threads()
    cthtorch.set_num_threads(threads)
    torch.set_num_threads(threads)
    print("%-36s %10s %10s %9s" % ("ms CPU (threads=%d)" % threads, "cthtorch", "torch", "ct/torch"))
    ours, theirs = cases(cthtorch), cases(torch)
    for name, (f, n) in ours.items():
        a, b = cpu_ms(f, n), cpu_ms(theirs[name][0], n)
        print("%-36s %10.3f %10.3f %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
