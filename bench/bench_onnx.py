"""torch.onnx.export: cthtorch's exporter beside torch's TorchScript exporter
(dynamo=False) on the same architectures, in one process (median ms), and
onnxruntime running each exported file (the same runtime, so a ratio away
from 1 means a graph with more or slower nodes).
Run: PYTHONPATH=. python bench/bench_onnx.py

Rows: a 3-layer MLP, the MNIST CNN (examples/mnist.py's Net), ResNet-18 at
1x3x64x64, a TransformerEncoderLayer (d=64, 4 heads, sequence 32)."""
import io
import os
import sys
import warnings

import numpy as np
import onnxruntime as ort
import torch

import cthtorch
import bench_fx
from bench_scatter import median_time

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def mlp(L):
    nn = L.nn
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)), (8, 64)


def mnist(L):
    nn, F = L.nn, L.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
            self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            return F.log_softmax(self.fc2(F.relu(self.fc1(L.flatten(x, 1)))), dim=1)
    return Net(), (16, 1, 28, 28)


def resnet18(L):
    return bench_fx.resnet18(L), (1, 3, 64, 64)   # torchvision's structure, built with L's nn


def encoder(L):
    return L.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), (4, 32, 64)


def export_fn(L, m, x):
    def go():
        buf = io.BytesIO()
        if L is torch:
            torch.onnx.export(m, (x,), buf, dynamo=False)
        else:
            cthtorch.onnx.export(m, (x,), buf)
        return buf.getvalue()
    return go


def main():
    print("%-28s %12s %12s %7s   %12s %12s %7s" % ("model", "export ct", "export torch", "ratio", "ort ct",
                                                   "ort torch", "ratio"))
    for build in (mlp, mnist, resnet18, encoder):
        cthtorch.manual_seed(0)
        torch.manual_seed(0)
        mc, shape = build(cthtorch)
        mt, _ = build(torch)
        mc.eval()
        mt.eval()
        xc, xt = cthtorch.randn(*shape), torch.randn(*shape)
        ec, et = export_fn(cthtorch, mc, xc), export_fn(torch, mt, xt)
        feed = np.random.randn(*shape).astype(np.float32)
        tc, rc = median_time(ec, rounds=3), _ort_time(ec(), feed)
        try:
            tt, rt = median_time(et, rounds=3), _ort_time(et(), feed)
        except TypeError as e:   # torch 2.13's TorchScript exporter fails on TransformerEncoderLayer
            print("%-28s %10.2fms %12s %7s   %10.3fms %12s %7s   (torch: %s)" % (
                build.__name__ + str(shape), tc, "fails", "-", rc, "-", "-", str(e)[:60]))
            continue
        print("%-28s %10.2fms %10.2fms %7.2f   %10.3fms %10.3fms %7.2f" % (build.__name__ + str(shape), tc, tt,
                                                                         tc / tt, rc, rt, rc / rt))


def _ort_time(data, feed):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return median_time(lambda: sess.run(None, {name: feed}))


if __name__ == "__main__":
    main()
