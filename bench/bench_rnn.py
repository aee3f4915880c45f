"""Recurrent and embedding training steps and the engine's per-node cost,
cthtorch and torch side by side in one process (issue 22's rows).

Each row is one SGD step (zero_grad, forward, loss, backward, step), the
median of 9 rounds after a warm-up, the two libraries' rounds alternating. OpenBLAS's OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE caps are lifted for both libraries the same way
../shared/bench/peer_bench.py does: this script re-executes itself without
them (they are read when OpenBLAS loads, so they must be unset at exec).
Run: PYTHONPATH=. python bench/bench_rnn.py [threads]"""
import os
import sys

_CAPS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(k in os.environ for k in _CAPS):
    env = {k: v for k, v in os.environ.items() if k not in _CAPS}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import cthtorch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_engine  # noqa: E402
from bench_scatter import median_times_interleaved  # noqa: E402


def _copy_params(src, dst):
    """dst (cthtorch module) starts from src's (torch module) weights"""
    with cthtorch.no_grad():
        for (n, p), (m, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(cthtorch.from_numpy(p.detach().numpy().copy()))


def recurrent(L, kind, inp, hid, layers, batch, seq):
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(inp, hid, num_layers=layers)
    m = ref if L is torch else getattr(L.nn, kind)(inp, hid, num_layers=layers)
    if L is not torch:
        _copy_params(ref, m)
    x = L.from_numpy(np.random.RandomState(0).randn(seq, batch, inp).astype(np.float32))
    opt = L.optim.SGD(m.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        out, _ = m(x)
        out.pow(2).mean().backward()
        opt.step()
    return step


def embedding(L, num, dim, n, sparse=False):
    L.manual_seed(0)
    m = L.nn.Embedding(num, dim, sparse=sparse)
    idx = L.from_numpy(np.random.RandomState(0).randint(0, num, n).astype(np.int64))
    opt = (L.optim.SparseAdam if sparse else L.optim.SGD)(m.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        m(idx).sum().backward()
        opt.step()
    return step


def chain(L, n):
    """bench_engine's chain (n adds of a 4-vector), built and run backward"""
    build = bench_engine.chain(L, n)
    return lambda: build().backward()


def cases(L):
    return {
        "LSTM(128,256,layers=2) b32 s35": recurrent(L, "LSTM", 128, 256, 2, 32, 35),
        "GRU(64,128) b64 s50": recurrent(L, "GRU", 64, 128, 1, 64, 50),
        "Embedding(50000,128) 4096 idx": embedding(L, 50000, 128, 4096),
        "Embedding sparse + SparseAdam": embedding(L, 50000, 128, 4096, sparse=True),
        "100-op chain fwd+backward": chain(L, 100),
    }


def main():
    if len(sys.argv) > 1:
        cthtorch.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(cthtorch.get_num_threads())
    print("%-34s %10s %10s %9s" % ("SGD step (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch",
                                   "ct/torch"))
    only = os.environ.get("BENCH_ONLY", "")
    for name in cases(torch):
        if only and only not in name:
            continue
        try:
            a, b = median_times_interleaved(cases(cthtorch)[name], cases(torch)[name])
        except Exception as e:  # a row that cthtorch cannot run yet says why
            print("%-34s %s: %s" % (name, type(e).__name__, str(e)[:60]))
            continue
        print("%-34s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b))


if __name__ == "__main__":
    main()
