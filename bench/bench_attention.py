"""Transformer workloads: cthtorch and torch side by side in one process (median of 9 alternating rounds, ms); the
sgemm rates beside torch and numpy are bench/bench_gemm.py's.
Run: PYTHONPATH=. python bench/bench_attention.py [threads]

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (set on these machines, they hold OpenBLAS to older kernels) are dropped
for this process alone, for every library alike, as bench/compare.py does."""
import os
import sys

if any(k in os.environ for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import cthtorch  # noqa: E402
from bench_scatter import median_times_interleaved  # noqa: E402 (bench/ is on the path when run as a script)


def cases(L):
    rs = np.random.RandomState(0)
    t = lambda *s, g=False: L.tensor(rs.randn(*s).astype(np.float32), requires_grad=g)  # noqa: E731
    F = L.nn.functional
    L.manual_seed(0)
    enc = L.nn.TransformerEncoderLayer(256, 8, 1024)
    opt = L.optim.SGD(enc.parameters(), lr=0.01)
    x = t(64, 16, 256)

    def enc_step():
        opt.zero_grad()
        enc(x).square().mean().backward()
        opt.step()
    q, k, v = t(16, 8, 64, 32, g=True), t(16, 8, 64, 32, g=True), t(16, 8, 64, 32, g=True)
    fm = t(64, 64)

    def sdpa(**kw):
        def f():
            F.scaled_dot_product_attention(q, k, v, **kw).sum().backward()
        return f
    mha = L.nn.MultiheadAttention(256, 8)
    xm = t(64, 16, 256, g=True)
    ln = L.nn.LayerNorm(256)
    xl = t(16 * 64, 256, g=True)
    ln2 = L.nn.LayerNorm(1024)
    xl2 = t(8192, 1024, g=True)
    xg = t(16 * 64, 1024, g=True)
    return {
        "TransformerEncoderLayer(256,8,1024) step": enc_step,
        "sdpa fwd+bwd (16,8,64,32)": sdpa(),
        "sdpa fwd+bwd causal": sdpa(is_causal=True),
        "sdpa fwd+bwd float mask": sdpa(attn_mask=fm),
        "MultiheadAttention(256,8) fwd+bwd": lambda: mha(xm, xm, xm, need_weights=False)[0].sum().backward(),
        "LayerNorm(256) fwd+bwd (1024 rows)": lambda: ln(xl).sum().backward(),
        "LayerNorm(1024) fwd+bwd (8192 rows)": lambda: ln2(xl2).sum().backward(),
        "GELU fwd+bwd (1024x1024)": lambda: F.gelu(xg).sum().backward(),
    }


def main():
    if len(sys.argv) > 1:
        cthtorch.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(cthtorch.get_num_threads())
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    ct, tt = cases(cthtorch), cases(torch)
    print("%-42s %10s %10s %9s" % ("case (threads=%d)" % torch.get_num_threads(), "cthtorch", "torch", "ct/torch"))
    for name in ct:
        if only and only not in name:
            continue
        a, b = median_times_interleaved(ct[name], tt[name])
        print("%-42s %8.3fms %8.3fms %8.2fx" % (name, a, b, a / b), flush=True)


if __name__ == "__main__":
    main()
