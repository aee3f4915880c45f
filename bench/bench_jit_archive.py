"""TorchScript archives (issue 17, jit.save/load): loading PyTorch's archives and running them,
cthtorch and torch side by side in one process.

Rows: torch.jit.load of one archive (cthtorch's loader vs torch's), and inference through the
loaded module (both run the graphs compiled from the archive's code/ on their interpreter) next to each
library's eager module with the same weights. Median of 5 rounds after a warm-up (ms).
Run: PYTHONPATH=. python bench/bench_jit_archive.py [threads, default 1]"""
import io
import os
import sys
import warnings

import numpy as np
import torch

import cthtorch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scatter import median_time  # noqa: E402

warnings.simplefilter("ignore")


def _mlp(L):
    return L.nn.Sequential(L.nn.Linear(64, 64), L.nn.ReLU(), L.nn.Linear(64, 64), L.nn.ReLU(), L.nn.Linear(64, 10))


def _cnn(L):
    return L.nn.Sequential(L.nn.Conv2d(3, 16, 3, padding=1), L.nn.BatchNorm2d(16), L.nn.ReLU(), L.nn.MaxPool2d(2),
                           L.nn.Conv2d(16, 32, 3, padding=1), L.nn.BatchNorm2d(32), L.nn.ReLU(),
                           L.nn.AdaptiveAvgPool2d((1, 1)), L.nn.Flatten(), L.nn.Linear(32, 10))


def rows():
    out = []
    for name, make, shape in [("mlp3x64 b1", _mlp, (1, 64)), ("cnn b8 32x32", _cnn, (8, 3, 32, 32))]:
        torch.manual_seed(0)
        ref = make(torch).eval()
        ours = make(cthtorch).eval()
        ours.load_state_dict({k: cthtorch.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()})
        x = np.random.RandomState(0).randn(*shape).astype(np.float32)
        tx, cx = torch.from_numpy(x), cthtorch.from_numpy(x)
        for kind in ("trace", "script"):
            j = torch.jit.trace(ref, tx) if kind == "trace" else torch.jit.script(ref)
            buf = io.BytesIO()
            torch.jit.save(j, buf)
            data = buf.getvalue()
            t_load = median_time(lambda: torch.jit.load(io.BytesIO(data)), rounds=3)
            c_load = median_time(lambda: cthtorch.jit.load(io.BytesIO(data)), rounds=3)
            tj = torch.jit.load(io.BytesIO(data))
            cj = cthtorch.jit.load(io.BytesIO(data))
            with torch.no_grad(), cthtorch.no_grad():
                t_run = median_time(lambda: tj(tx))
                c_run = median_time(lambda: cj(cx))
                t_eager = median_time(lambda: ref(tx))
                c_eager = median_time(lambda: ours(cx))
            out.append(("%s %s: load" % (name, kind), c_load, t_load, None, None))
            out.append(("%s %s: run" % (name, kind), c_run, t_run, c_eager, t_eager))
    return out


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1   # one thread each: the machine is shared
    torch.set_num_threads(threads)
    cthtorch.set_num_threads(threads)
    print("%-28s %10s %10s %9s %12s %12s %14s" % ("ms", "cthtorch", "torch", "ct/torch", "ct eager", "torch eager",
                                                  "ct run/eager"))
    for name, c, t, ce, te in rows():
        extra = ("%12.3f %12.3f %13.2fx" % (ce, te, c / ce)) if ce is not None else ""
        print("%-28s %10.3f %10.3f %8.2fx %s" % (name, c, t, c / t, extra))


if __name__ == "__main__":
    main()
