"""Elementwise ops on the GPU (src/THC/THCLoop*.cu) against cthtorch's CPU
kernels: every op marked `cuda: true` in the unary/binary/pointwise/
activation/copy/view yaml, over several dtypes, a broadcast, a non-contiguous
and a 0-d host-scalar case. Integer and bool results must match exactly,
floating ones closely (the GPU uses CUDA's libm). Skipped without a GPU."""
import math

import numpy as np
import pytest

import cthtorch as torch
import cthtorch.nn as nn
import cthtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
ALL = FLOATS + INTS + [torch.bool]
TOL = {torch.float32: 2e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def rand(shape, dtype, lo=-3.0, hi=3.0, seed=0):
    g = np.random.default_rng(seed + len(shape) * 7)
    if dtype == torch.bool:
        return torch.from_numpy(np.asarray(g.random(shape) < 0.5))
    if dtype.is_floating_point:
        return torch.from_numpy(np.asarray(g.uniform(lo, hi, shape))).to(dtype)
    if dtype == torch.uint8:
        lo = max(lo, 0)
    v = g.integers(int(math.floor(lo)), int(math.ceil(hi)) + 1, shape)
    return torch.from_numpy(np.asarray(v)).to(dtype)


def same(cuda_result, cpu_result, tol_scale=1.0):
    assert cuda_result.is_cuda
    got = cuda_result.cpu()
    assert got.dtype == cpu_result.dtype and tuple(got.shape) == tuple(cpu_result.shape)
    if not cpu_result.dtype.is_floating_point:
        np.testing.assert_array_equal(got.numpy(), cpu_result.numpy())
        return
    tol = TOL[cpu_result.dtype] * tol_scale
    np.testing.assert_allclose(got.double().numpy(), cpu_result.double().numpy(), rtol=tol, atol=tol, equal_nan=True)


def layouts(shape, dtype, lo, hi):
    """(name, cpu tensor): contiguous, non-contiguous (a transposed view)"""
    x = rand(shape, dtype, lo, hi)
    yield "contiguous", x
    yield "transposed", rand(shape[::-1], dtype, lo, hi, seed=1).t()


# ---- unary: name -> (function, input range, dtypes, tolerance scale) ----
U = lambda f, lo=-3.0, hi=3.0, dts=FLOATS, tol=1.0: (f, lo, hi, dts, tol)
UNARY = {
    "exp": U(torch.exp), "exp2": U(torch.exp2), "expm1": U(torch.expm1),
    "log": U(torch.log, 0.1, 5), "log2": U(torch.log2, 0.1, 5), "log10": U(torch.log10, 0.1, 5),
    "log1p": U(torch.log1p, -0.9, 5), "sin": U(torch.sin), "cos": U(torch.cos), "tan": U(torch.tan, -1.2, 1.2),
    "asin": U(torch.asin, -0.99, 0.99), "acos": U(torch.acos, -0.99, 0.99), "atan": U(torch.atan),
    "sinh": U(torch.sinh), "cosh": U(torch.cosh), "tanh": U(torch.tanh), "asinh": U(torch.asinh),
    "acosh": U(torch.acosh, 1.01, 5), "atanh": U(torch.atanh, -0.99, 0.99), "sqrt": U(torch.sqrt, 0, 5),
    "rsqrt": U(torch.rsqrt, 0.1, 5), "sigmoid": U(torch.sigmoid), "erf": U(torch.erf), "erfc": U(torch.erfc),
    "erfinv": U(torch.erfinv, -0.99, 0.99, tol=5), "lgamma": U(torch.lgamma, 0.1, 6, tol=5),
    "digamma": U(torch.digamma, 0.1, 6, tol=5), "reciprocal": U(torch.reciprocal, 0.5, 3),
    "ceil": U(torch.ceil, dts=FLOATS + INTS), "floor": U(torch.floor, dts=FLOATS + INTS),
    "round": U(torch.round, dts=FLOATS + INTS), "trunc": U(torch.trunc, dts=FLOATS + INTS), "frac": U(torch.frac),
    "neg": U(torch.neg, dts=FLOATS + INTS[:-1]), "abs": U(torch.abs, dts=FLOATS + INTS),
    "sign": U(torch.sign, dts=ALL), "relu": U(torch.relu, dts=FLOATS + INTS),
    "isnan": U(torch.isnan, dts=ALL), "isinf": U(torch.isinf, dts=ALL), "isfinite": U(torch.isfinite, dts=ALL),
    "signbit": U(torch.signbit, dts=FLOATS + INTS), "logical_not": U(torch.logical_not, dts=ALL),
    "bitwise_not": U(torch.bitwise_not, dts=INTS + [torch.bool]), "square": U(torch.square, dts=ALL),
    "nan_to_num": U(torch.nan_to_num), "logit": U(lambda x: torch.logit(x, 1e-3), 0.01, 0.99, tol=5),
    "round_decimals": U(lambda x: torch.round(x, decimals=2), dts=[torch.float32, torch.float64]),
    "sinc": U(torch.sinc, tol=5), "i0": U(torch.i0, tol=5), "i1": U(torch.special.i1, tol=5),
    "i1e": U(torch.special.i1e, tol=5), "i0e": U(torch.special.i0e, tol=5), "clamp": U(lambda x: torch.clamp(x, -1, 2), dts=FLOATS + INTS),
    "clamp_min": U(lambda x: torch.clamp_min(x, 0.5)), "int_to_float": U(torch.exp, dts=[torch.int32, torch.bool]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    f, lo, hi, dts, tol = UNARY[name]
    for dt in dts:
        for layout, x in layouts((6, 5), dt, lo, hi):
            same(f(x.cuda()), f(x), tol)


def test_unary_special_values():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e30, -1e-30])
    for f in (torch.isnan, torch.isinf, torch.isfinite, torch.signbit, torch.sign, torch.relu, torch.nan_to_num,
              torch.abs, torch.exp, torch.tanh, torch.sigmoid, torch.floor, torch.round):
        same(f(x.cuda()), f(x))


# ---- binary: name -> (function, range of a, range of b, dtypes, tolerance scale) ----
B = lambda f, alo=-5.0, ahi=5.0, blo=-5.0, bhi=5.0, dts=FLOATS, tol=1.0: (f, alo, ahi, blo, bhi, dts, tol)
NONZERO_INTS = [torch.int64, torch.int32, torch.int8]
BINARY = {
    "add": B(torch.add, dts=ALL), "add_alpha": B(lambda a, b: torch.add(a, b, alpha=2), dts=FLOATS + INTS),
    "sub": B(torch.sub, dts=FLOATS + INTS), "mul": B(torch.mul, dts=ALL), "div": B(torch.div, blo=0.5, bhi=4),
    "div_trunc": B(lambda a, b: torch.div(a, b, rounding_mode="trunc"), blo=1, bhi=4, dts=FLOATS + NONZERO_INTS),
    "div_floor": B(lambda a, b: torch.div(a, b, rounding_mode="floor"), blo=1, bhi=4, dts=FLOATS + NONZERO_INTS),
    "floor_divide": B(torch.floor_divide, blo=-4, bhi=-1, dts=FLOATS + NONZERO_INTS),
    "remainder": B(torch.remainder, blo=1, bhi=4, dts=FLOATS + NONZERO_INTS),
    "fmod": B(torch.fmod, blo=-4, bhi=-1, dts=FLOATS + NONZERO_INTS),
    "pow": B(torch.pow, 0.5, 3, -2, 2, tol=5), "pow_int": B(torch.pow, -3, 3, 0, 4, dts=INTS),
    "atan2": B(torch.atan2), "hypot": B(torch.hypot, dts=FLOATS[:3]), "copysign": B(torch.copysign),
    "maximum": B(torch.maximum, dts=ALL), "minimum": B(torch.minimum, dts=ALL),
    "fmax": B(torch.fmax, dts=FLOATS + INTS), "fmin": B(torch.fmin, dts=FLOATS + INTS),
    "bitwise_and": B(torch.bitwise_and, dts=INTS + [torch.bool]), "bitwise_or": B(torch.bitwise_or, dts=INTS + [torch.bool]),
    "bitwise_xor": B(torch.bitwise_xor, dts=INTS + [torch.bool]),
    "lshift": B(torch.bitwise_left_shift, 0, 20, 0, 9, dts=INTS), "rshift": B(torch.bitwise_right_shift, -50, 50, 0, 9, dts=INTS),
    "eq": B(torch.eq, dts=ALL), "ne": B(torch.ne, dts=ALL), "lt": B(torch.lt, dts=ALL), "le": B(torch.le, dts=ALL),
    "gt": B(torch.gt, dts=ALL), "ge": B(torch.ge, dts=ALL), "logical_and": B(torch.logical_and, dts=ALL),
    "logical_or": B(torch.logical_or, dts=ALL), "logical_xor": B(torch.logical_xor, dts=ALL),
    "gcd": B(torch.gcd, -30, 30, -30, 30, dts=INTS), "lcm": B(torch.lcm, -30, 30, -30, 30, dts=INTS),
    "heaviside": B(torch.heaviside, dts=FLOATS + INTS), "nextafter": B(torch.nextafter),
    "ldexp": B(torch.ldexp, -3, 3, -20, 20, dts=[torch.float32, torch.float64]),
    "logaddexp": B(torch.logaddexp), "logaddexp2": B(torch.logaddexp2), "xlogy": B(torch.xlogy, blo=0.1, bhi=5),
    "isclose": B(lambda a, b: torch.isclose(a, b, rtol=0.5, atol=0.5), dts=ALL),
    "where": B(lambda a, b: torch.where(a > b, a, b), dts=ALL),
    "clamp_tensor": B(lambda a, b: torch.clamp(a, min=b), dts=FLOATS + INTS),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    f, alo, ahi, blo, bhi, dts, tol = BINARY[name]
    for dt in dts:
        for layout, a in layouts((6, 5), dt, alo, ahi):
            b = rand((6, 5), dt, blo, bhi, seed=3)
            same(f(a.cuda(), b.cuda()), f(a, b), tol)
        # broadcast: (4, 1, 5) with (3, 1)
        a, b = rand((4, 1, 5), dt, alo, ahi), rand((3, 1), dt, blo, bhi, seed=5)
        same(f(a.cuda(), b.cuda()), f(a, b), tol)
        # a 0-d CPU tensor joins a GPU op by value
        b0 = rand((), dt, blo, bhi, seed=9)
        same(f(a.cuda(), b0), f(a, b0), tol)


def test_python_scalars_and_promotion():
    x = rand((7, 3), torch.float32)
    xi = rand((7, 3), torch.int32)
    for f in (lambda t: t + 2, lambda t: t * 1.5, lambda t: 2 - t, lambda t: t / 3, lambda t: t ** 2,
              lambda t: t ** 0.5 if t.dtype.is_floating_point else t ** 3, lambda t: t > 1, lambda t: t == 0):
        same(f(x.cuda()), f(x))
        same(f(xi.cuda()), f(xi))
    same(x.cuda() + xi.cuda(), x + xi)
    same(xi.cuda() + x[0, 0].clone(), xi + x[0, 0].clone())


def test_ternary_and_inplace():
    a, b, c = rand((5, 4), torch.float32), rand((5, 4), torch.float32, seed=2), rand((4,), torch.float32, 0.5, 2, seed=3)
    same(torch.lerp(a.cuda(), b.cuda(), c.cuda()), torch.lerp(a, b, c))
    same(torch.addcmul(a.cuda(), b.cuda(), c.cuda(), value=0.5), torch.addcmul(a, b, c, value=0.5))
    same(torch.addcdiv(a.cuda(), b.cuda(), c.cuda(), value=2), torch.addcdiv(a, b, c, value=2))
    g = a.cuda()
    g.add_(b.cuda()).mul_(2).clamp_(-1, 1)
    same(g, (a + b).mul(2).clamp(-1, 1))
    big = rand((3, 70000), torch.float32).t()       # non-contiguous, N-d index math
    same(torch.exp(big.cuda()), torch.exp(big))


@pytest.mark.parametrize("dt", ALL)
def test_contiguous_vector_path(dt):
    """1-d contiguous loops move 16-byte packs (THCLoop.cuh): odd lengths leave
    a tail, x[1:] is unaligned (the per-element path), a 1-element GPU tensor
    broadcasts with stride 0, and mixed widths (a bool result of a compare, a
    conversion) pack fewer bytes for the narrow operand."""
    for n in (1_000_003, 64, 17, 3):
        a, b = rand((n + 1,), dt, 0, 50), rand((n + 1,), dt, 1, 50, seed=4)
        ag, bg = a.cuda(), b.cuda()
        same(ag + bg, a + b)
        same(ag[1:] + bg[1:], a[1:] + b[1:])           # both unaligned the same way
        same(ag[1:] * bg[:-1], a[1:] * b[:-1])         # one aligned, one not
        same(torch.maximum(ag, bg[:1]), torch.maximum(a, b[:1]))   # stride-0 operand
        same(ag > bg, a > b)
        same(torch.where(ag > bg, ag, bg), torch.where(a > b, a, b))
        same(ag.to(torch.float64), a.to(torch.float64))
        same(ag[1:].to(torch.float16), a[1:].to(torch.float16))
        out = torch.empty(n + 1, dtype=dt).cuda()
        same(out.fill_(3), torch.full((n + 1,), 3, dtype=dt))
        same(out[1:].copy_(bg[1:]), b[1:])
        if dt.is_floating_point:
            same(torch.exp(ag[:n] * 0.01), torch.exp(a[:n] * 0.01))
            same(ag.add(bg, alpha=2), a.add(b, alpha=2))


# ---- copies, fills, conversions, views ----
def test_copy_convert_fill():
    for src_dt in ALL:   # 0..100: a negative float into uint8 is undefined in C
        x = rand((4, 6), src_dt, 0, 100)
        xc = x.cuda()
        for dst_dt in ALL:
            same(xc.to(dst_dt), x.to(dst_dt))
        same(xc.t().clone(), x.t().clone())
        same(xc.t().contiguous(), x.t().contiguous())
        y = torch.zeros(6, 4, dtype=src_dt).cuda()
        y.copy_(xc.t())
        same(y, x.t().contiguous())
        same(y.zero_(), torch.zeros(6, 4, dtype=src_dt))
        same(y.fill_(1), torch.ones(6, 4, dtype=src_dt))
        same(y.fill_(torch.tensor(0)), torch.zeros(6, 4, dtype=src_dt))
    # a row broadcast into a strided slice, float into int
    z = torch.zeros(5, 8, dtype=torch.int32).cuda()
    z[:, ::2].copy_(torch.arange(4.0).cuda())
    zc = torch.zeros(5, 8, dtype=torch.int32)
    zc[:, ::2].copy_(torch.arange(4.0))
    same(z, zc)


def test_views_and_roll():
    x = rand((2, 3, 4), torch.float32)
    xc = x.cuda()
    for f in (lambda t: t.view(6, 4), lambda t: t.reshape(4, 6), lambda t: t.permute(2, 0, 1).reshape(-1),
              lambda t: t.transpose(0, 2), lambda t: t.unsqueeze(1).expand(2, 5, 3, 4), lambda t: t.flatten(1),
              lambda t: t.narrow(2, 1, 2), lambda t: t.select(1, 2), lambda t: t[:, 1:, ::2], lambda t: t.squeeze(),
              lambda t: t.movedim(0, 2), lambda t: t.diagonal(0, 1, 2), lambda t: t.unfold(2, 2, 1),
              lambda t: torch.roll(t, 1, 2), lambda t: torch.roll(t, (1, -1), (0, 1)), lambda t: torch.roll(t, 5)):
        same(f(xc) + 0, f(x) + 0)


def test_integer_division_by_zero_does_not_fault():
    # as PyTorch on CUDA: no error, a defined value (THCLoop.cu: quotient -1, remainder a)
    a = torch.tensor([7, -7, 0], dtype=torch.int32).cuda()
    z = torch.zeros(3, dtype=torch.int32).cuda()
    assert torch.div(a, z, rounding_mode="trunc").cpu().tolist() == [-1, -1, -1]
    assert torch.remainder(a, z).cpu().tolist() == [7, -7, 0]


# ---- activations, forward and backward ----
ACTS = {
    "relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "elu": F.elu, "selu": F.selu, "celu": lambda x: F.celu(x, 0.7),
    "softplus": lambda x: F.softplus(x, beta=2, threshold=5), "hardtanh": F.hardtanh, "relu6": F.relu6,
    "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "mish": F.mish, "logsigmoid": F.logsigmoid,
    "threshold": lambda x: F.threshold(x, 0.1, -2.0), "sigmoid": torch.sigmoid, "tanh": torch.tanh,
}


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_forward_backward(name):
    f = ACTS[name]
    for dt in (torch.float32, torch.float64):
        x = rand((5, 7), dt)
        g = rand((5, 7), dt, seed=4)
        xc = x.clone().requires_grad_(True)
        xg = x.cuda().requires_grad_(True)
        yc, yg = f(xc), f(xg)
        same(yg.detach(), yc.detach())
        yc.backward(g)
        yg.backward(g.cuda())
        same(xg.grad, xc.grad)
    for dt in (torch.float16, torch.bfloat16):
        x = rand((5, 7), dt)
        same(f(x.cuda()), f(x), 2.0)


def test_modules_train_step_elementwise():
    # the activations as nn modules, in-place variants, and grads through views
    for m in (nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.GELU(), nn.SiLU(), nn.LeakyReLU(0.1), nn.ELU(), nn.Softplus(),
              nn.Hardtanh(), nn.ReLU(inplace=True)):
        x = rand((4, 6), torch.float32)
        xc = x.clone().requires_grad_(True)
        xg = x.cuda().requires_grad_(True)
        yc = m(xc * 1.0)[:, 1:4] * 2
        yg = m(xg * 1.0)[:, 1:4] * 2
        same(yg.detach(), yc.detach())
        g = rand((4, 3), torch.float32, seed=8)
        yc.backward(g)
        yg.backward(g.cuda())
        same(xg.grad, xc.grad)
