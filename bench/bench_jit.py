"""torch.jit beside eager, cthtorch and torch in one process (issue 17's
rows). Each row is the median of 5 rounds after a warm-up.
Run: PYTHONPATH=. python bench/bench_jit.py [threads]"""
import os
import sys
import types

# OpenBLAS's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE caps are lifted for both
# libraries the same way bench_rnn.py does (they are read when OpenBLAS loads)
_CAPS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(k in os.environ for k in _CAPS):
    env = {k: v for k, v in os.environ.items() if k not in _CAPS}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import cthtorch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scatter import median_time  # noqa: E402


# ---------------------------------------------------------------- jitscript's rows: torch.jit.script

def lstm_loop(x, h, c, w_ih, w_hh, b):
    # type: (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    for t in range(x.size(0)):
        gates = torch.mm(x[t], w_ih.t()) + torch.mm(h, w_hh.t()) + b
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def _for_library(fn, lib):
    """fn with `torch` in its globals bound to lib."""
    return types.FunctionType(fn.__code__, dict(fn.__globals__, torch=lib), fn.__name__)


def script_rows(steps=50, batch=8, hidden=64):
    """A scripted 50-step LSTM cell loop (batch 8, hidden 64), forward: eager
    and scripted, cthtorch and torch."""
    rs = np.random.RandomState(0)
    arrs = [rs.randn(steps, batch, hidden), rs.randn(batch, hidden), rs.randn(batch, hidden),
            rs.randn(4 * hidden, hidden) * 0.1, rs.randn(4 * hidden, hidden) * 0.1, rs.randn(4 * hidden) * 0.1]
    rows = []
    for lib in (cthtorch, torch):
        args = [lib.from_numpy(a.astype(np.float32)) for a in arrs]
        eager = _for_library(lstm_loop, lib)
        scripted = lib.jit.script(_for_library(lstm_loop, lib))
        with lib.no_grad():
            rows.append((lib.__name__, median_time(lambda: eager(*args)), median_time(lambda: scripted(*args))))
    print("%-44s %10s %10s %9s" % ("LSTM cell loop, %d steps, batch %d, hidden %d" % (steps, batch, hidden),
                                   "eager", "script", "script/eager"))
    for name, e, s in rows:
        print("%-44s %8.3fms %8.3fms %8.2fx" % (name, e, s, s / e))
    print("%-44s %8.2fx" % ("cthtorch script / torch.jit script", rows[0][2] / rows[1][2]))


if __name__ == "__main__":
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1     # small ops: one thread each, as a fair default
    torch.set_num_threads(threads)
    cthtorch.set_num_threads(threads)
    script_rows()
