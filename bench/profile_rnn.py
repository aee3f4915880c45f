"""Where an LSTM training step spends its time, cthtorch beside torch, in
process CPU time (robust to other processes on a loaded machine when run
with one thread): the step's GEMM shapes alone, the layer forward with and
without autograd, forward+backward, and cthtorch's per-call breakdown of the
forward (cProfile on CPU time). torch's CPU LSTM runs oneDNN's fused RNN
layer (aten::mkldnn_rnn_layer and its backward), not per-step aten ops.
Run: PYTHONPATH=. OMP_NUM_THREADS=1 python bench/profile_rnn.py [threads]"""
import cProfile
import pstats
import sys
import time

import numpy as np
import torch

import cthtorch
from cthtorch._C import _internal

SEQ, BATCH, INP, HID, LAYERS = 35, 32, 128, 256, 2


def cpu_ms(f, n):
    f()
    runs = []
    for _ in range(3):
        s = time.process_time()
        for _ in range(n):
            f()
        runs.append((time.process_time() - s) / n * 1e3)
    return sorted(runs)[1]


def gemms():
    rs = np.random.RandomState(0)
    # (M, K, N, B transposed, A transposed); the backward's all-steps products (the last three: A is the
    # gates' gradient G, transposed for the weight gradients, or K = 4H) run OpenBLAS in cthtorch
    shapes = {"step addmm h@W_hh^T (32x256x1024)": (BATCH, HID, 4 * HID, True, False),
              "step dh = dg@W_hh (32x1024x256)": (BATCH, 4 * HID, HID, False, False),
              "input projection (1120x256x1024)": (SEQ * BATCH, HID, 4 * HID, True, False),
              "dx = G W_ih (1120x1024x256)": (SEQ * BATCH, 4 * HID, HID, False, False),
              "dW_ih = G^T X, layer 1 (1024x1120x128)": (4 * HID, SEQ * BATCH, INP, False, True),
              "dW_hh = G^T H (1024x1088x256)": (4 * HID, (SEQ - 1) * BATCH, HID, False, True)}
    for name, (m, k, n, transposed, ta) in shapes.items():
        r = []
        for L in (cthtorch, torch):
            a = L.from_numpy(rs.randn(k, m).astype(np.float32)).t() if ta else L.from_numpy(rs.randn(m, k).astype(np.float32))
            w = L.from_numpy(rs.randn(n, k).astype(np.float32) if transposed else rs.randn(k, n).astype(np.float32))
            b = w.t() if transposed else w
            bias = L.zeros(m, n)
            r.append(cpu_ms(lambda: L.addmm(bias, a, b), 50 if m == BATCH else 5))
            if L is cthtorch and m == BATCH:   # the layer's path: the weight packed once (THGemmPacked.c)
                wp = _internal._gemm_pack(b)
                packed = cpu_ms(lambda: _internal._gemm_packed(a, wp, n, bias), 50)
        print("%-38s %8.3f %8.3f %7.2fx" % (name, r[0], r[1], r[0] / r[1]))
        if m == BATCH:
            print("%-38s %8.3f %8.3f %7.2fx" % ("  same, weight packed once", packed, r[1], packed / r[1]))


def lstm_rows():
    rs = np.random.RandomState(0)
    res = {}
    for L in (cthtorch, torch):
        torch.manual_seed(0)
        m = L.nn.LSTM(INP, HID, num_layers=LAYERS)
        x = L.from_numpy(rs.randn(SEQ, BATCH, INP).astype(np.float32))

        def fwd_nograd():
            with L.no_grad():
                m(x)

        def fwd_bwd():
            out, _ = m(x)
            out.pow(2).mean().backward()
        res[L] = (cpu_ms(fwd_nograd, 3), cpu_ms(lambda: m(x), 3), cpu_ms(fwd_bwd, 3))
    for k, name in enumerate(("LSTM forward, no grad", "LSTM forward", "LSTM forward+backward")):
        a, b = res[cthtorch][k], res[torch][k]
        print("%-38s %8.1f %8.1f %7.2fx" % (name, a, b, a / b))
    return m


def breakdown():
    m = cthtorch.nn.LSTM(INP, HID, num_layers=LAYERS)
    x = cthtorch.randn(SEQ, BATCH, INP)
    pr = cProfile.Profile(time.process_time)
    with cthtorch.no_grad():
        m(x)
        pr.enable()
        for _ in range(5):
            m(x)
        pr.disable()
    print("\ncthtorch forward, no grad, 5 calls (CPU time):")
    pstats.Stats(pr).sort_stats("tottime").print_stats(6)


if __name__ == "__main__":
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    cthtorch.set_num_threads(threads)
    torch.set_num_threads(threads)
    print("%-38s %8s %8s %8s  (ms CPU, threads=%d)" % ("", "cthtorch", "torch", "ratio", threads))
    gemms()
    lstm_rows()
    breakdown()
