"""torch.jit: traced (+ frozen / optimized) models beside cthtorch eager,
torch eager and torch.jit / torch.compile, in one process (median ms).
Run: PYTHONPATH=. python bench/bench_jit.py [--no-compile]

Rows:
  mlp   batch-1 inference of a 3-layer MLP, 64 wide: jit = traced + frozen
  chain x*sigmoid(x) + tanh(x)*0.5 - relu(x-1)*2 on 1M floats: jit = traced +
        optimize_for_inference (fused where the fuser runs); torch column:
        torch.compile (skipped with --no-compile)
  sum   (x*sigmoid(x)).sum() on 1M floats: the chain and its trailing
        reduction in one kernel; jit = traced + optimize_for_inference,
        torch column: torch.compile (skipped with --no-compile)
  lstm  a scripted 50-step LSTM cell loop (batch 8, hidden 64), no grad: after
        its profiled runs the loop body is 2 mm + 1 fused kernel (gate math
        and chunk in one prim::TensorExprGroup); torch column: torch.jit.script
The "ct jit py" column is the same jit row run by the Python executor
(CTHTORCH_JIT_C_INTERPRETER=0 while it is built and warmed); C/py is the C
interpreter's time over it.
The other JIT branches add their rows in their own functions below."""
import os
import sys
import warnings

import torch

import cthtorch
from bench_scatter import median_time

warnings.simplefilter("ignore")


def mlp(L):
    nn = L.nn
    L.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).eval()


def chain(x, L):
    return x * L.sigmoid(x) + L.tanh(x) * 0.5 - L.relu(x - 1) * 2


def mlp_row():
    xc, xt = cthtorch.rand(1, 64), torch.rand(1, 64)
    mc, mt = mlp(cthtorch), mlp(torch)
    with cthtorch.no_grad():
        jc = cthtorch.jit.freeze(cthtorch.jit.trace(mc, xc))
    with torch.no_grad():
        jt = torch.jit.freeze(torch.jit.trace(mt, xt))

    def run(f, x, lib):
        def go():
            with lib.no_grad():
                f(x)
        return go
    return ("mlp 3x64 batch 1 (trace+freeze)", run(mc, xc, cthtorch), run(jc, xc, cthtorch), run(mt, xt, torch),
            run(jt, xt, torch), "torch.jit")


def chain_row(compile_torch=True):
    xc, xt = cthtorch.rand(1 << 20), torch.rand(1 << 20)
    jc = cthtorch.jit.optimize_for_inference(cthtorch.jit.trace(_ChainModule(cthtorch), xc))
    jt = torch.compile(lambda x: chain(x, torch)) if compile_torch else None
    return ("x*sigmoid(x)+tanh(x)*.5-relu(x-1)*2 1M", lambda: chain(xc, cthtorch), lambda: jc(xc),
            lambda: chain(xt, torch), (lambda: jt(xt)) if jt else None, "torch.compile")


def swish_sum(x, L):
    return (x * L.sigmoid(x)).sum()


class _SwishSumModule(cthtorch.nn.Module):
    def forward(self, x):
        return swish_sum(x, cthtorch)


def reduction_row(compile_torch=True):
    xc, xt = cthtorch.rand(1 << 20), torch.rand(1 << 20)
    jc = cthtorch.jit.optimize_for_inference(cthtorch.jit.trace(_SwishSumModule(), xc))
    jt = torch.compile(lambda x: swish_sum(x, torch)) if compile_torch else None
    return ("(x*sigmoid(x)).sum() 1M", lambda: swish_sum(xc, cthtorch), lambda: jc(xc),
            lambda: swish_sum(xt, torch), (lambda: jt(xt)) if jt else None, "torch.compile")


class _ChainModule(cthtorch.nn.Module):
    def __init__(self, L):
        super().__init__()
        self.L = L

    def forward(self, x):
        return chain(x, self.L)


# ---------------------------------------------------------------- jitscript's rows: torch.jit.script

def lstm_loop(x, h, c, w_ih, w_hh, b):
    # type: (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    for t in range(x.size(0)):
        gates = torch.mm(x[t], w_ih.t()) + torch.mm(h, w_hh.t()) + b
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def lstm_script_row(steps=50, batch=8, hidden=64):
    """A scripted 50-step LSTM cell loop (batch 8, hidden 64), forward;
    lstm_loop is compiled for each library with `torch` bound to it."""
    import types
    import numpy as np
    rs = np.random.RandomState(0)
    arrs = [rs.randn(steps, batch, hidden), rs.randn(batch, hidden), rs.randn(batch, hidden),
            rs.randn(4 * hidden, hidden) * 0.1, rs.randn(4 * hidden, hidden) * 0.1, rs.randn(4 * hidden) * 0.1]
    fns = []
    for lib in (cthtorch, torch):
        args = [lib.from_numpy(a.astype(np.float32)) for a in arrs]
        eager = types.FunctionType(lstm_loop.__code__, dict(lstm_loop.__globals__, torch=lib), "lstm_loop")
        scripted = lib.jit.script(types.FunctionType(lstm_loop.__code__, dict(lstm_loop.__globals__, torch=lib),
                                                     "lstm_loop"))

        def run(f, args=args, lib=lib):
            def go():
                with lib.no_grad():
                    f(*args)
            return go
        fns += [run(eager), run(scripted)]
    return ("LSTM cell loop %d steps b%d h%d (script)" % (steps, batch, hidden), fns[0], fns[1], fns[2], fns[3],
            "torch.jit.script")


def python_executor_time(make_go):
    """Median time of a jit row built and warmed (past its profiled runs) with
    the C interpreter off: the Python executor's time, for the C/py column."""
    old = os.environ.get("CTHTORCH_JIT_C_INTERPRETER")
    os.environ["CTHTORCH_JIT_C_INTERPRETER"] = "0"
    try:
        go = make_go()
        for _ in range(4):
            go()
    finally:
        if old is None:
            del os.environ["CTHTORCH_JIT_C_INTERPRETER"]
        else:
            os.environ["CTHTORCH_JIT_C_INTERPRETER"] = old
    return median_time(go)


def main():
    compile_torch = "--no-compile" not in sys.argv
    rows = [mlp_row(), chain_row(compile_torch), reduction_row(compile_torch), lstm_script_row()]
    # the same jit rows run by the Python executor (rebuilt with the C interpreter off)
    py_times = {0: python_executor_time(lambda: mlp_row()[2]), 3: python_executor_time(lambda: lstm_script_row()[2])}
    print("%-40s %10s %10s %10s %10s %10s %9s %9s %9s" % (
        "case (threads=%d)" % cthtorch.get_num_threads(), "ct eager", "ct jit", "ct jit py", "torch", "torch jit",
        "jit/eager", "jit/tjit", "C/py"))
    for k, (name, ce, cj, te, tj, tj_name) in enumerate(rows):
        a, b, c = median_time(ce), median_time(cj), median_time(te)
        d = median_time(tj) if tj else float("nan")
        p = py_times.get(k, float("nan"))
        print("%-40s %8.4fms %8.4fms %8.4fms %8.4fms %8.4fms %8.2fx %8.2fx %8.2fx   (torch jit: %s)"
              % (name, a, b, p, c, d, b / a, b / d, b / p, tj_name))


if __name__ == "__main__":
    main()
