"""channels_last through the ops of a CNN, against torch: conv2d, batch_norm, pooling, interpolate and cat keep a
channels-last input's layout (programs check y.is_contiguous(memory_format=...) and strides), their values and
gradients stay torch's, and Module.to(memory_format=...) lays out the 4-d parameters."""
import numpy as np
import pytest

import cthtorch
import oracle

torch = oracle.require_torch()


def _x(lib, shape=(2, 3, 8, 8), fmt="channels_last", grad=False):
    a = np.random.RandomState(0).randn(*shape).astype("float32")
    x = lib.tensor(a).to(memory_format=getattr(lib, fmt))
    return x.requires_grad_() if grad else x


def _w(lib, shape=(4, 3, 3, 3)):
    return lib.tensor(np.random.RandomState(1).randn(*shape).astype("float32"))


F = lambda lib: lib.nn.functional   # noqa: E731
OPS = {
    "conv2d": lambda l, x: F(l).conv2d(x, _w(l), _w(l, (4,))),
    "conv2d_stride": lambda l, x: F(l).conv2d(x, _w(l), None, 2, 1),
    "conv_transpose2d": lambda l, x: F(l).conv_transpose2d(x, _w(l, (3, 4, 3, 3))),
    "batch_norm_train": lambda l, x: F(l).batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda l, x: F(l).batch_norm(x, l.zeros(3), l.ones(3), _w(l, (3,)), _w(l, (3,))),
    "relu": lambda l, x: l.relu(x),
    "add": lambda l, x: x + x * 2,
    "max_pool2d": lambda l, x: F(l).max_pool2d(x, 2),
    "max_pool2d_pad": lambda l, x: F(l).max_pool2d(x, 3, 2, 1),
    "avg_pool2d": lambda l, x: F(l).avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda l, x: F(l).adaptive_avg_pool2d(x, (3, 3)),
    "adaptive_avg_pool2d_1": lambda l, x: F(l).adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda l, x: F(l).adaptive_max_pool2d(x, 3),
    "nearest": lambda l, x: F(l).interpolate(x, scale_factor=2),
    "bilinear": lambda l, x: F(l).interpolate(x, size=(5, 11), mode="bilinear"),
    "bicubic": lambda l, x: F(l).interpolate(x, scale_factor=2, mode="bicubic", align_corners=True),
    "cat_dim1": lambda l, x: l.cat([x, x * 2], 1),
    "cat_dim0": lambda l, x: l.cat([x, x], 0),
    "cat_mixed": lambda l, x: l.cat([x, x.contiguous()], 1),   # one contiguous input: contiguous
    "cat_legacy_empty": lambda l, x: l.cat([x, l.empty(0)], 1),   # so does a legacy empty (0,) one
    "cat_legacy_empty_first": lambda l, x: l.cat([l.empty(0), x * 2], 1),
    "pad_constant": lambda l, x: F(l).pad(x, (1, 2)),
    "pad_constant_2d": lambda l, x: F(l).pad(x, (1, 1, 0, 2), value=0.5),
    "pad_negative": lambda l, x: F(l).pad(x, (-1, 1, 1, -2)),
    "group_norm": lambda l, x: F(l).group_norm(x, 3),
    "group_norm_affine": lambda l, x: F(l).group_norm(x, 1, _w(l, (3,)), _w(l, (3,))),
    "contiguous": lambda l, x: x.contiguous(),
    "contiguous_cl": lambda l, x: x.contiguous(memory_format=l.channels_last),
}


def _layout(y, lib):
    return tuple(y.shape), tuple(y.stride()), y.is_contiguous(memory_format=lib.channels_last)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_layout_values_and_grad_match_torch(name, fmt):
    res = {}
    for lib in (torch, cthtorch):
        x = _x(lib, fmt=fmt, grad=True)
        y = OPS[name](lib, x)
        g = lib.tensor(np.random.RandomState(2).randn(*y.shape).astype("float32"))
        y.backward(g)
        res[lib] = (_layout(y, lib), y.detach().numpy(), _layout(x.grad, lib), x.grad.numpy())
    t, c = res[torch], res[cthtorch]
    assert c[0] == t[0]
    np.testing.assert_allclose(c[1], t[1], rtol=1e-4, atol=1e-5)
    assert c[2] == t[2]
    np.testing.assert_allclose(c[3], t[3], rtol=1e-4, atol=1e-4)


def test_channels_last_kinds_of_strides_match_torch():
    """a slice of a channels-last tensor, one channel, 1x1 spatial sizes, a channels-last weight only"""
    def run(lib):
        x = _x(lib)
        one = _x(lib, (2, 1, 8, 8))
        out = [F(lib).max_pool2d(x[:, :, 1:], 2), F(lib).max_pool2d(one, 2), F(lib).avg_pool2d(one.contiguous(), 2),
               F(lib).conv2d(x.contiguous(), _w(lib).to(memory_format=lib.channels_last)),
               F(lib).adaptive_avg_pool2d(_x(lib, (2, 3, 1, 1)), 1)]
        o, i = F(lib).max_pool2d(x, 2, return_indices=True)
        out += [o, i]
        return [(tuple(y.stride()), y.detach().numpy()) for y in out]
    for (st, vt), (sc, vc) in zip(run(torch), run(cthtorch)):
        assert sc == st
        np.testing.assert_allclose(vc, vt, rtol=1e-5, atol=1e-6)


def test_module_to_memory_format_matches_torch():
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                                lib.nn.Flatten(), lib.nn.Linear(36, 2))
        with lib.no_grad():
            for p, v in zip(net.parameters(), range(100)):
                p.copy_(lib.tensor(np.random.RandomState(v).randn(*p.shape).astype("float32")))
        assert net.to(memory_format=lib.channels_last) is net
        x = _x(lib, fmt="contiguous_format")
        y = net(x)
        y.sum().backward()
        return ([tuple(p.stride()) for p in net.parameters()], [tuple(p.grad.stride()) for p in net.parameters()],
                y.detach().numpy(), net[0].weight.grad.numpy())
    t, c = run(torch), run(cthtorch)
    assert c[0] == t[0] and c[1] == t[1]
    np.testing.assert_allclose(c[2], t[2], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c[3], t[3], rtol=1e-4, atol=1e-4)


def test_to_memory_format_of_one_channel_matches_torch():
    """(N, 1, H, W) is contiguous in both layouts: to(memory_format=) still gives the asked-for strides"""
    for fmt in ("channels_last", "contiguous_format"):
        for start in ("channels_last", "contiguous_format"):
            got = [tuple(_x(l, (2, 1, 8, 8), start).to(memory_format=getattr(l, fmt)).stride()) for l in (torch, cthtorch)]
            assert got[1] == got[0]
