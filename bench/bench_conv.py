"""Depthwise conv2d (groups == channels) on MobileNet / EfficientNet / ConvNeXt layer shapes,
float32, forward and forward + backward (input and weight grads): cthtorch and torch timed side
by side in one process (min of repeats, ms).
Run: PYTHONPATH=. python bench/bench_conv.py [threads]"""
import numpy as np

from bench_scatter import main   # the side-by-side timing loop (bench/ is on sys.path when run as a script)

# (channels, height/width, kernel, stride)
LAYERS = [(96, 56, 3, 1), (96, 112, 3, 2), (144, 28, 5, 2), (240, 28, 5, 1), (672, 14, 5, 1), (192, 56, 7, 1)]


def cases(L):
    rs = np.random.RandomState(0)
    F = L.nn.functional
    out = {}
    for c, hw, k, s in LAYERS:
        x = L.from_numpy(rs.randn(1, c, hw, hw).astype(np.float32))
        w = L.from_numpy(rs.randn(c, 1, k, k).astype(np.float32))
        xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
        name = "dw%dx%d s%d %dx%dx%d" % (k, k, s, c, hw, hw)
        out[name + " fwd"] = (lambda x, w, k, s, c: lambda: F.conv2d(x, w, stride=s, padding=k // 2, groups=c))(x, w, k, s, c)
        out[name + " fwd+bwd"] = (lambda x, w, k, s, c: lambda: F.conv2d(x, w, stride=s, padding=k // 2,
                                                                        groups=c).sum().backward())(xg, wg, k, s, c)
    return out


if __name__ == "__main__":
    main(cases)
