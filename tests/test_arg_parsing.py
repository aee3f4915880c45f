"""Argument parsing against PyTorch: ints, int lists, dims, Scalars, devices
and numpy values that do not fit raise PyTorch's exception (issue 16, root
causes 1 and 3: these used to crash the process or be silently dropped)."""
import warnings

import numpy as np
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def first_line(e):
    return str(e).split("\n")[0]


def check(expr):
    """expr, evaluated with `torch` bound to each library, raises the same
    exception type with the same first line of message, or returns a tensor
    of the same shape and dtype. PyTorch's "failed to unpack" errors carry a
    C++ backtrace after the first line; only their first line is compared
    (as a prefix of ours, which closes the quote)."""
    def run(lib):
        try:
            return eval(expr, {"torch": lib, "np": np, "F": lib.nn.functional}), None
        except Exception as e:   # noqa: BLE001 - the exception is what is compared
            return None, e
    rt, et = run(torch)
    rc, ec = run(cthtorch)
    if et is not None:
        assert ec is not None, "%s: torch raised %r, cthtorch returned %r" % (expr, et, rc)
        assert type(ec).__name__ == type(et).__name__, (expr, ec, et)
        assert first_line(ec).startswith(first_line(et)), (expr, str(ec), str(et))
    else:
        assert ec is None, "%s: cthtorch raised %r" % (expr, ec)
        if isinstance(rt, tuple) and rt and isinstance(rt[0], torch.Tensor):   # split, chunk
            assert len(rc) == len(rt), expr
            for a, b in zip(rc, rt):
                assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype), expr
        elif isinstance(rt, torch.Tensor):
            assert tuple(rc.shape) == tuple(rt.shape) and str(rc.dtype) == str(rt.dtype), expr
        else:
            assert rc == rt, expr


# int lists (sizes, shapes, dims) beyond int64: a TypeError naming the argument and position
INTLIST_OVERFLOW = [
    "torch.randn(3).view(2**63)",
    "torch.randn(3).view(-2**63-1)",
    "torch.randn(3).view(2**64)",
    "torch.randn(3).view(-1, 2**63)",
    "torch.randn(3).view([2**63])",
    "torch.randn(3).reshape(2**63)",
    "torch.randn(2**63)",
    "torch.randn(10**30)",
    "torch.full((2**63,), 1.)",
    "torch.randn(3).expand(2**63)",
    "torch.randn(3, 4).permute(0, 2**63)",
    "torch.randn(3, 4).sum(dim=(2**63,))",
    "torch.zeros(2, 2).sum(dim=[0, 2**63])",
    "torch.randn(3, 4).flip(2**63)",
    "torch.Tensor(2**63)",
    "torch.randn(3).resize_(2**63)",
    "torch.randn(3).as_strided((2**63,), (1,))",
    "torch.randn(3).as_strided((2,), (2**63,))",
    "torch.randint(3, (2**63,))",
]

# a lone int beyond int64: ValueError
INT_OVERFLOW = [
    "torch.randn(3, 4).sum(dim=2**63)",
    "torch.randn(3, 4).sum(2**63)",
    "torch.randn(3, 4).movedim(0, 2**63)",
    "torch.randn(3, 4).narrow(0, 2**63, 1)",
    "torch.randn(3, 4).select(0, 2**63)",
    "torch.randn(3).as_strided((2,), (1,), 2**63)",
    "torch.randn(3).unsqueeze(2**63)",
    "torch.randn(3).flatten(0, 2**63)",
    "torch.randn(3).squeeze(2**63)",
    "torch.randn(3).cumsum(2**63)",
    "torch.randn(3).softmax(2**63)",
    "torch.randn(3).topk(2**63)",
    "torch.randn(3, 4).std(dim=2**63)",
    "torch.tril(torch.randn(3, 3), 2**63)",
    "torch.diag(torch.randn(3), 2**63)",
    "torch.randn(3).__getitem__(2**63)",
    "F.max_pool2d(torch.randn(1, 1, 4, 4), 2**63)",
    "F.avg_pool2d(torch.randn(1, 1, 4, 4), 2**63)",
    "F.conv2d(torch.randn(1, 1, 4, 4), torch.randn(1, 1, 2, 2), stride=2**63)",
    "torch.randn(3).to(device=2**63)",
]

# numpy values, tensors, bools and floats as ints: what torch takes, and what it refuses
NUMPY_AND_KINDS = [
    "torch.randn(3).view(np.int64(3))",
    "torch.randn(3).view(np.uint64(3))",
    "torch.randn(3).view(np.array(3))",
    "torch.randn(3).view(torch.tensor(3))",
    "torch.randn(3).view([np.int64(3)])",
    "torch.randn(3).view((np.uint64(3),))",
    "torch.randn(6).view(torch.Size([3, 2]))",
    "torch.randn(np.uint64(3))",
    "torch.randn(np.int32(3))",
    "torch.randn(np.array(3))",
    "torch.randn(np.array([3]))",
    "torch.randn(torch.tensor(3))",
    "torch.randn((torch.tensor(3),))",
    "torch.randn(2, True)",
    "torch.randn(3).resize_(np.zeros(3))",
    "torch.randn(3).view(3, 1.0)",
    "torch.randn(3).view(-2)",
    "torch.randn(3).view(1, -2, 3)",
    "torch.zeros(2, 2).sum(dim=[0, 1.5])",
    "torch.randn(3, 4).sum(dim=np.int64(1))",
    "torch.randn(3, 4).sum(dim=torch.tensor(1))",
    "torch.randn(3, 4).select(0, np.uint64(1))",
    "torch.randn(3, 4).transpose(0, True)",
    "torch.randn(3, 4).transpose(0, np.int64(1))",
    "torch.randn(3).__getitem__(np.uint64(1))",
    "torch.randn(3).__getitem__(slice(0, 2**63))",
    "torch.randn(3).__getitem__(slice(0, 2**64))",
    "torch.randn(3).__getitem__(slice(-2**64, 2))",
    "torch.Tensor(np.zeros((2, 3)))",
    "torch.Tensor(np.zeros((2, 3), dtype=np.int64))",
    "torch.Tensor(2.5)",
    "torch.Tensor(-1)",
    "torch.Tensor(2, -1)",
    "torch.randn(-1)",
    "torch.randn(-1, 2)",
    "torch.randn(3, device=-1)",
    "torch.empty(3, memory_format=3)",
    "torch.empty(3, layout=3)",
]

# Scalars: beyond 64 bits an OverflowError; in [2**63, 2**64) where torch refuses too
SCALARS = [
    "torch.full((2,), 2**63)",
    "torch.full((2,), 2**64)",
    "torch.tensor([4]).fill_(2**63)",
    "torch.add(torch.tensor([4]), 2**64)",
    "torch.add(torch.tensor([4.]), 2**64)",
    "torch.tensor([4.]) + 2**64",
    "torch.tensor([4]) + (-2**63 - 1)",
    "torch.zeros(3).mul(2**64)",
    "torch.randn(3).clamp(min=2**64)",
    "torch.randn(3).clamp(min=2**1030)",
]

# ints in [2**63, 2**64) (uint64 Scalars in torch): exact beside floating
# point, torch's RuntimeError where they meet an integer tensor or dtype
UINT64_BESIDE_FLOATS = [
    "torch.zeros(2).fill_(2**63)",
    "torch.zeros(2, dtype=torch.float64).fill_(2**64 - 1)",
    "torch.zeros(2, dtype=torch.bfloat16).fill_(2**63)",
    "torch.full((2,), 2**63, dtype=torch.float32)",
    "torch.full((2,), 2**63 + 4096, dtype=torch.float64)",
    "torch.tensor([1., 2.]) + 2**63",
    "torch.tensor([1., 2.], dtype=torch.float64) * (2**64 - 1)",
    "torch.tensor([1., 2.]).sub(2**63)",
    "torch.tensor([1., 2.], dtype=torch.float64).add(1, alpha=2**63)",
    "torch.tensor([1., 2.]) < 2**63",
    "torch.tensor([1., 2.]).eq(2**63)",
    "torch.tensor([1., 2.]).clamp(min=2**63 + 2**40)",
    "torch.tensor([1., 2.]).clamp(max=2**63)",
    "torch.tensor([1., 2.]).masked_fill(torch.tensor([True, False]), 2**63)",
    "torch.where(torch.tensor([True, False]), torch.tensor([1., 2.]), 2**63)",
    "torch.tensor([1., 2.]).index_fill(0, torch.tensor([0]), 2**63)",
    "torch.tensor([1., 2.]).new_full((2,), 2**63)",
    "torch.full_like(torch.tensor([1., 2.]), 2**63)",
    "torch.tensor([1., 2.]).lerp(torch.tensor([3., 4.]), 2**63)",
    "torch.tensor([1., 2.]).addcmul(torch.tensor([3., 4.]), torch.tensor([3., 4.]), value=2**63)",
    "torch.tensor([1., 2.]).pow(2**63)",
    "torch.tensor([1., 2.]) // 2**63",
    "torch.tensor([1., 2.]).fmod(2**63)",
    "torch.tensor([1., 2.]).xlogy(2**63)",
    "F.threshold(torch.tensor([1., 2.]), 2**63, 2**63 + 2**40)",
]
UINT64_REFUSED = [
    "torch.full((2,), 2**63)",
    "torch.full((2,), 2**63, dtype=torch.int32)",
    "torch.zeros(2, dtype=torch.int64).fill_(2**63)",
    "torch.full_like(torch.tensor([1, 2]), 2**63)",
    "torch.tensor([1, 2]).clamp(max=2**63)",
    "torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), 2**63)",
    "torch.tensor([1, 2]).pow(2**63)",
    "torch.zeros(2).fill_(2**64)",
    "torch.tensor([1., 2.]) + 2**64",
]

# sizes whose element count or storage does not fit int64 (root cause 3)
SIZE_ARITHMETIC = [
    "torch.randn(2**40, 2**40)",
    "torch.randn(2**62, 4)",
    "torch.Tensor([1, 2]).new_empty((2**62, 4))",
    "torch.randn(3).expand(2**62, 2**62, 3)",
    "torch.randn(3).as_strided((2**62, 4), (0, 0))",
    "torch.randn(3).as_strided((2**62,), (1,))",
    "torch.randn(3).as_strided((2,), (2**62,))",
    "torch.randn(3).resize_(2**62, 4)",
    "torch.diag(torch.randn(3), 2**63 - 1)",
    "torch.diag(torch.randn(3, 3), 2**63 - 1)",
    "torch.diag(torch.randn(3, 3), -2**63)",
    "torch.diagonal(torch.randn(3, 3), -2**63)",
    "torch.randn(3).as_strided((3, 2**62), (2**62, 1))",
    "F.max_pool2d(torch.randn(1, 1, 4, 4), 2**62)",
    "F.conv2d(torch.randn(1, 1, 4, 4), torch.randn(1, 1, 2, 2), padding=2**62)",
    "F.conv2d(torch.randn(1, 1, 4, 4), torch.randn(1, 1, 2, 2), stride=2**62)",
    "torch.randn(3, 4).view(3, 2**62)",
    "torch.randn(3, 4).view(2**62, 2**62)",
]


# Python composites check their own int arguments as torch's parser does: the
# message names them and their argument, not an op they call inside
COMPOSITE_INTS = [
    "torch.randn(3).repeat(2**63)",
    "torch.Tensor([1, 2]).new_ones(2, 2**63)",
    "torch.arange(4.).split(2**63)",
    "torch.arange(4.).split(2**64)",
    "torch.arange(4.).split([2**63, 1])",
    "torch.arange(4.).chunk(2**63)",
    "torch.arange(4.).chunk(np.uint64(2**63))",
    "torch.arange(4.).chunk(2.5)",
    "torch.arange(4.).chunk(True)",
    "torch.arange(4.).chunk(np.int64(2))",
    "torch.arange(4.).chunk(torch.tensor(2))",
    "F.one_hot(torch.tensor([1, 2]), 2**63)",
    "F.one_hot(torch.tensor([1, 2]), -2)",
    "F.one_hot(torch.tensor([1, 5]), 3)",
    "F.one_hot(torch.tensor([-1, 2]), 3)",
    "F.one_hot(torch.tensor([1, 2]), 2.0)",
    "F.one_hot(torch.tensor([], dtype=torch.long), -2)",
    "F.one_hot(torch.tensor([], dtype=torch.long))",
    "F.one_hot(torch.tensor([1]), 0)",
    "F.one_hot(torch.tensor([[1, 2]]), 4)",
    "torch.arange(4.).repeat(-1)",
    "torch.empty(0).repeat(-1)",
    "torch.arange(4.).repeat(2, 'a')",
    "torch.arange(4.).repeat()",
    "torch.arange(4.).repeat([2, 'a'])",
    "torch.arange(4.).repeat(['a'])",
    "torch.arange(4.).repeat('a', 2)",
    "torch.arange(4.).repeat(2.5)",
    "torch.arange(4.).repeat(np.int64(2))",
    "torch.arange(4.).repeat(torch.tensor(2))",
    "torch.arange(4.).repeat((2, 2))",
    "torch.arange(4.).repeat(torch.Size([2, 1]))",
    "torch.arange(4.).repeat(2, True)",
    "torch.arange(4.).new_zeros(-1)",
    "torch.arange(4.).new_zeros(2**63)",
    "torch.arange(4.).new_zeros(-1, 2**63)",
    "torch.arange(4.).new_zeros()",
    "torch.arange(4.).new_zeros(size=(2,))",
    "torch.arange(4.).new_zeros(2, 3, size=(2,))",
    "torch.arange(4.).new_zeros((2, 3), dtype=torch.int32)",
    "torch.arange(4.).new_zeros(2, 'a')",
    "torch.arange(4.).new_zeros('a')",
    "torch.arange(4.).new_empty((2,), (3,))",
    "torch.arange(4.).new_empty(-1)",
    "torch.arange(4.).new_full(2, 1)",
    "torch.arange(4.).new_full((2**63,), 1)",
    "torch.arange(4.).new_full((-1,), 1)",
    "torch.arange(4.).new_full(size=(2,), fill_value=1)",
    "torch.arange(4.).new_ones((2, -1))",
    "F.pad(torch.arange(4.), (2**63, 0))",
    "F.pad(torch.arange(4.), (1, 2**64))",
    "F.pad(torch.arange(4.), (1,))",
    "F.pad(torch.arange(4.), (-5, 0))",
    "F.pad(torch.arange(4.), (1, 2, 3, 4))",
    "F.pad(torch.arange(4.), 3)",
    "F.pad(torch.arange(4.), [1, 'a'])",
    "F.pad(torch.arange(4.).view(1, 1, 4), (1, 1), mode='xyz')",
]

# Python numbers for Tensor parameters: torch takes them where it has a Scalar
# overload (or lists the op as taking numbers) and refuses them elsewhere
NUMBERS_FOR_TENSORS = [
    "torch.gcd(torch.tensor([4, 6]), 2)",
    "torch.tensor([4, 6]).gcd(2)",
    "torch.atan2(torch.randn(2), 3)",
    "torch.randn(2).atan2_(3)",
    "torch.maximum(torch.randn(2), 0)",
    "torch.fmin(torch.randn(2), 0.5)",
    "torch.hypot(torch.randn(2), 2)",
    "torch.logical_and(torch.tensor([True]), True)",
    "torch.isclose(torch.randn(2), 1.)",
    "torch.index_select(torch.randn(3), 0, 1)",
    "torch.randn(2, 2).mm(2)",
    "torch.randn(2).lerp(torch.randn(2), 0.5)",
    "torch.randn(2).lerp(torch.randn(2), torch.randn(2))",
    "torch.randn(3).clamp(torch.zeros(3), 2)",
    "torch.randn(3).clamp(0, 2)",
    "torch.randn(3).clamp(min=torch.zeros(3))",
    "torch.randn(3).clamp(torch.tensor(0.), 2)",
    "torch.tensor([4, 6]) == 2",
    "torch.tensor([4, 6]).eq(2)",
    "torch.tensor([4, 6]).ne(2.5)",
    "torch.randn(2).add(2)",
    "torch.randn(2).mul(2.5)",
    "torch.randn(2).pow(2)",
    "torch.randn(2).remainder(2)",
    "torch.randn(2).fmod(2)",
    "torch.randn(2).copysign(-1)",
    "torch.randn(2).xlogy(2)",
    "torch.randn(2).floor_divide(2)",
    "torch.tensor([3, 4]).bitwise_and(1)",
    "torch.where(torch.tensor([True, False]), torch.randn(2), 2.)",
    "torch.randn(2).masked_fill(torch.tensor([True, False]), 2)",
]

# texts and types of edge cases that once differed
EDGE_TEXTS = [
    "torch.arange(4.).resize_(-1)",
    "torch.arange(4.).resize_(2, -1)",
    "torch.randperm(-1)",
    "torch.arange(10.)[2::2**62]",
    "torch.arange(4.)[::-2**64]",
    "torch.arange(4.)[::-1]",
    "torch.arange(4.)[::0]",
    "torch.arange(4.)[::torch.tensor(0)]",
    "torch.arange(4.).narrow(0, 5, -1)",
    "torch.arange(4.).narrow(0, 1, -1)",
    "torch.arange(4.).narrow(0, 3, 2)",
    # a list whose first item is not an int names that item's type (kuangliu's ShuffleNetG2 passes a float size)
    "torch.empty((2.0, 3))",
    "torch.ones([2.5])",
    "torch.zeros(3).reshape((3.0,))",
    "torch.zeros(3).permute((0.0,))",
    "torch.nn.functional.avg_pool2d(torch.zeros(1, 1, 4, 4), (2.0, 2))",
    "torch.empty((2, 3.0))",
    "torch.empty(size=(2.0, 3))",
]


CASES = (INTLIST_OVERFLOW + INT_OVERFLOW + NUMPY_AND_KINDS + SCALARS + UINT64_BESIDE_FLOATS + UINT64_REFUSED +
         SIZE_ARITHMETIC + COMPOSITE_INTS + NUMBERS_FOR_TENSORS + EDGE_TEXTS)


@pytest.mark.parametrize("expr", CASES)
def test_matches_torch(expr):
    check(expr)


@pytest.mark.parametrize("expr", UINT64_BESIDE_FLOATS)
def test_uint64_scalars_keep_their_value_beside_floats(expr):
    # check() compares dtypes and shapes; these must also agree in value
    env = {"np": np}
    got = eval(expr, dict(env, torch=cthtorch, F=cthtorch.nn.functional))
    want = eval(expr, dict(env, torch=torch, F=torch.nn.functional))
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("expr", [
    "torch.tensor([1, 2]) + 2**63", "torch.tensor([1, 2]) < 2**63", "torch.tensor([1, 2], dtype=torch.int32) + 2**63",
    "torch.tensor([1, 2]).add(np.uint64(2**63))", "torch.tensor([1, 2]).div(2**63)"])
def test_uint64_scalars_never_wrap_into_integer_tensors(expr):
    # torch wraps these silently (2**63 becomes -2**63: `x < 2**63` is all False)
    # or computes them; cthtorch refuses an int that no integer dtype here holds
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        eval(expr, {"torch": cthtorch, "np": np})


def test_overflowing_dims_are_not_dropped():
    # the same reduction, with the dim given as an overflowing int: it used to reduce everything
    x = cthtorch.randn(3, 4)
    for bad in (lambda: x.sum(dim=(2**63,)), lambda: x.sum(dim=2**63), lambda: x.movedim(0, 2**63)):
        with pytest.raises((TypeError, ValueError)):
            bad()


def test_legacy_constructor_copies_arrays_as_float32():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = cthtorch.Tensor(a)
    assert t.dtype == cthtorch.float32 and t.tolist() == torch.Tensor(a).tolist()
    a[0, 0] = 100
    assert t[0, 0].item() == 0   # a copy


def test_invalid_combination_message():
    # every overload is listed as PyTorch lists it: types and names, no raw format directives
    for lib in (torch, cthtorch):
        with pytest.raises(TypeError) as e:
            lib.randn(3, 4).sum(dim=1.0)
        msg = str(e.value)
        assert msg.startswith("sum() received an invalid combination of arguments - got (")
        assert "%" not in msg
        assert "\n * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)" in msg
        assert "\n * (*, torch.dtype dtype = None)" in msg


# calls whose overloads cthtorch declares in torch's order, so the whole text is torch's
FULL_TEXT_CALLS = ["x.sum('a')", "x.sum(dim='a')", "x.mean(1.5)", "torch.sum(x, 'a')", "x.squeeze('a')",
                   "x.squeeze(True)", "x.squeeze(x)", "x.squeeze(1.5)", "x.squeeze(dim='a')", "x.squeeze(dm=1)"]


@pytest.mark.parametrize("call", FULL_TEXT_CALLS)
def test_invalid_combination_says_why_each_overload_failed(call):
    """where the call has as many arguments as an overload's signature has items (the "*" counted),
    torch adds a line under it: the keywords it lacks, or the arguments with the wrong ones between
    "!" (by its strict reading: a number is no Tensor, a bool no int); a call of keywords only is
    written "(name=type, )" """
    def run(lib):
        with pytest.raises(TypeError) as e:
            eval(call, {"torch": lib, "x": lib.ones(2, 3)})
        return str(e.value)
    ours, theirs = run(cthtorch), run(torch)
    assert ours == theirs
    # no overload has as many items as these calls have arguments: no line under any
    assert ("didn't match" in ours) == (call not in ("x.mean(1.5)", "torch.sum(x, 'a')", "x.sum('a')", "x.sum(dim='a')"))


def test_anomaly_flag_refuses_a_tensor():
    # torch.set_anomaly_enabled takes bools only
    with pytest.raises(TypeError, match="must be bool, not Tensor"):
        cthtorch._C._set_anomaly_enabled(cthtorch.tensor([1, 2]))
    assert not cthtorch.is_anomaly_enabled()


# ---- from_numpy (item 7 of issue 16) ----

def test_from_numpy_memmap(tmp_path):
    path = str(tmp_path / "tokens.bin")
    m = np.memmap(path, dtype=np.uint16, mode="w+", shape=(16,))
    m[:] = np.arange(16)
    m.flush()
    data = np.memmap(path, dtype=np.uint16, mode="r")
    x = cthtorch.from_numpy(data[2:6].astype(np.int64))   # the GPT training script's line
    assert x.tolist() == [2, 3, 4, 5] and x.dtype == cthtorch.int64
    m64 = np.memmap(str(tmp_path / "f.bin"), dtype=np.float32, mode="w+", shape=(4,))
    t = cthtorch.from_numpy(m64)
    t[1] = 7.0
    assert m64[1] == 7.0   # shares memory, as torch does
    del t, m64, m, data


def test_from_numpy_subclass():
    class Sub(np.ndarray):
        pass
    a = np.zeros(3).view(Sub)
    assert str(cthtorch.from_numpy(a).dtype) == str(torch.from_numpy(a).dtype) == "torch.float64"


_READONLY_WARNINGS = """
import sys, warnings, importlib
import numpy as np
torch = importlib.import_module(sys.argv[1])
a = np.arange(3.0)
a.flags.writeable = False
b = bytes(8)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    t = torch.from_numpy(a)
    torch.as_tensor(a)
    torch.from_numpy(a[1:])
    torch.frombuffer(b, dtype=torch.uint8)
    torch.frombuffer(b, dtype=torch.int16)
print(t.data_ptr() == a.ctypes.data, [str(x.message).split(" (Triggered")[0] for x in w])
"""


def test_from_numpy_readonly_warns_once_per_process_and_shares():
    """a read-only array's (and a read-only buffer's) warning says it is suppressed for the rest of the
    program, and is: torch's TORCH_WARN_ONCE, each checked in a fresh process"""
    import os
    import subprocess
    import sys
    require_torch()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # this checkout's cthtorch
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outs = [subprocess.run([sys.executable, "-c", _READONLY_WARNINGS, lib], capture_output=True, text=True,
                           timeout=120, env=env).stdout for lib in ("cthtorch", "torch")]
    assert outs[0] == outs[1] and outs[0].startswith("True [") and outs[0].count("not writable") == 2


def test_from_numpy_unaligned_copies():
    buf = np.zeros(17, dtype=np.uint8)
    a = np.frombuffer(buf.data, dtype=np.float32, count=4, offset=1)
    assert not a.flags.aligned
    t = cthtorch.from_numpy(a)   # torch shares it; cthtorch copies (its kernels load aligned)
    assert t.tolist() == torch.from_numpy(a).tolist() and t.dtype == cthtorch.float32


def test_from_numpy_refusals():
    with pytest.raises(TypeError) as e:
        cthtorch.from_numpy(np.zeros(2, dtype=np.uint16))
    assert "uint16" in str(e.value) and "complex64, complex128" in str(e.value) and "uint16, uint8" not in str(e.value)
    assert cthtorch.from_numpy(np.zeros(2, dtype=np.complex128)).dtype == cthtorch.complex128
    check("torch.from_numpy(np.zeros(2, dtype='>f4'))")


# ---- tensor() from lists holding numpy arrays and scalars (graykode/nlp-tutorial's TextCNN, TextRNN, ...) ----

@pytest.mark.parametrize("expr", [
    "torch.tensor([np.eye(3)[0], np.eye(3)[2]])",                                 # float64 rows stay float64
    "torch.LongTensor([np.asarray([1, 2]), np.asarray([3, 4])])",
    "torch.FloatTensor([np.eye(4)[[0, 1]], np.eye(4)[[2, 3]]])",
    "torch.tensor([np.array([1, 2], dtype=np.int32), [3, 4]])",                    # int32 and Python ints: int64
    "torch.tensor([np.array([1, 2], dtype=np.int32), np.array([1., 2], dtype=np.float32)])",
    "torch.tensor([np.array([[True]]), np.array([[False]])])",
    "torch.tensor([np.arange(6.)[::2], np.arange(3.)])",                           # strided rows
    "torch.tensor([np.zeros((2, 0))])",
    "torch.tensor([np.array([1, 2]), np.array([1, 2, 3])])",                       # ragged: ValueError
    "torch.tensor([[1, 2], np.array([[1, 2]])])",
    "torch.tensor([np.float64(1.5), 2.0])",                                        # numpy scalars keep their dtype
    "torch.tensor([np.float16(1), np.int64(2)])",
    "torch.tensor([np.int32(3), 4])",
    "torch.tensor([np.complex64(1), 2.0])",
    "torch.tensor([torch.tensor(1, dtype=torch.int32)])",                           # a 0-d tensor's dtype too
    "torch.tensor([torch.tensor(1.5, dtype=torch.float16), 2.5])",
    "torch.tensor([1, [2]])",                                                      # a list where a scalar was: TypeError
])
def test_tensor_from_lists_of_numpy_values(expr):
    """same values and dtype as torch, or the same exception type (the messages of torch's
    refusals name its internal conversions, so only the ragged case's text is compared)"""
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # torch's "list of numpy.ndarrays is extremely slow"
            try:
                return eval(expr, {"torch": lib, "np": np}), None
            except Exception as e:   # noqa: BLE001 - the exception is what is compared
                return None, e
    (rt, et), (rc, ec) = run(torch), run(cthtorch)
    assert type(ec) is type(et), (ec, et)
    if et is None:
        assert rc.tolist() == rt.tolist() and str(rc.dtype) == str(rt.dtype) and rc.shape == rt.shape
    elif isinstance(et, ValueError):
        assert str(ec) == str(et)


def test_tensor_from_list_of_arrays_warns_once_like_torch():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import warnings, numpy as np; warnings.simplefilter('always'); import {0} as t\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); t.tensor([np.ones(2)]); t.tensor([np.ones(2)])\n"
            "print(len(w), 'extremely slow' in str(w[0].message))")
    outs = [subprocess.run([sys.executable, "-c", code.format(m)], capture_output=True, text=True,
                           cwd=root).stdout for m in ("cthtorch", "torch")]
    assert outs[0] == outs[1] == "1 True\n"


def test_lerp_end_takes_tensors_only():
    # torch lists two overloads here (its "invalid combination" text); cthtorch declares one
    for lib in (cthtorch, torch):
        with pytest.raises(TypeError):
            lib.randn(2).lerp(3, 0.5)


def test_resize_refuses_negative_sizes_with_torchs_text():
    # torch's numel check reads sizes as unsigned: its overflow text for any negative
    # size, except that (0, -1) slips through to a tensor with a negative dim there.
    # cthtorch refuses that one too, with the same text.
    for sizes in ((-1,), (2, -1), (0, -1)):
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            cthtorch.arange(4.).resize_(*sizes)


def test_huge_slice_steps_take_what_python_lists_take():
    # steps clamp to 2**63 - 1 as Python's do, and the length is computed without
    # overflow. torch's length overflows for steps near 2**63: it answers an empty
    # tensor or "Storage size calculation overflowed" depending on the length.
    for n in range(6):
        x, items = cthtorch.arange(float(n)), [float(i) for i in range(n)]
        for step in (2**62, 2**63 - 2, 2**63 - 1, 2**63, 2**64, 10**30):
            for start in (0, 1, 2):
                assert x[start::step].tolist() == items[start::step], (n, start, step)


def test_deprecated_positional_signatures():
    """Old programs' x.add_(alpha, other), addcmul_(value, t1, t2), addcdiv_(value, t1, t2), sub(alpha, other),
    addmm(beta, self[, alpha], mat1, mat2) and baddbmm alike compute what torch's deprecated overloads compute,
    gradients included; a call fitting no signature still raises TypeError"""
    def run(lib):
        x, a, b = lib.ones(2, 2), lib.full((2, 2), 2.), lib.tensor([[3., 1.], [0.5, 2.]])
        p = lib.ones(2, 2, requires_grad=True)
        q = lib.full((2, 2), 0.25, requires_grad=True)
        o = lib.empty(2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = [x.clone().add_(-0.5, a), x.add(2, a), lib.add(x, 3, a), lib.add(x, 3, a, out=o), x.clone().sub_(0.5, a),
                 lib.sub(x, 0.5, a), x.sub(2, b), x.clone().addcmul_(0.5, a, b), lib.addcmul(x, 0.5, a, b),
                 x.clone().addcdiv_(-0.1, a, b), x.addcdiv(2, a, b), lib.addmm(0.5, x, 2, a, b), lib.addmm(0.5, x, a, b),
                 x.addmm(0.5, 2, a, b), x.addmm(0.5, a, b), x.clone().addmm_(3, 2, a, b),
                 lib.baddbmm(0.5, x[None], 2, a[None], b[None]), x[None].baddbmm(2, a[None], b[None])]
            loss = (p.add(-0.5, q * q).addcmul(2, p, q) + lib.addmm(0.5, p, 3, q, p)).sum()
        loss.backward()
        return [t.tolist() for t in r] + [p.grad.tolist(), q.grad.tolist()]

    assert run(cthtorch) == run(torch)
    with pytest.raises(TypeError):
        cthtorch.ones(2).add_(1, 2, 3)


def test_deprecated_signature_warns_once_per_process():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import warnings, {0} as t\nwarnings.simplefilter('always')\nx = t.ones(2)\n"
            "with warnings.catch_warnings(record=True) as w:\n    x.add_(2, x); x.addcmul_(1, x, x); t.add(x, 1, x)\n"
            "print(len(w), repr(str(w[0].message).split(' (Triggered')[0]))")
    outs = [subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True, text=True).stdout
            for lib in ("cthtorch", "torch")]
    assert outs[0] == outs[1] and outs[0].startswith("1 ")


@pytest.mark.parametrize("expr", [
    "torch.add(torch.ones(2), 'a')",
    "torch.ones(2).sub('a')",
    "torch.add(torch.ones(2), torch.ones(2), 2)",
    "torch.ones(2).addcmul(torch.ones(2), 'a', torch.ones(2))",
    "torch.addcdiv(torch.ones(2), torch.ones(2), torch.ones(2), 'a')",
    "torch.ones(2, 2).addmm_(torch.ones(2, 2), 'a')",
])
def test_deprecated_signatures_stay_out_of_error_messages(expr):
    """torch parses its deprecated orders but hides them when a call fits nothing: with one usual
    signature left, the message is that signature's own (argument 'other' must be Tensor)"""
    def run(lib):
        with pytest.raises(TypeError) as e:
            eval(expr, {"torch": lib})
        return str(e.value)
    assert run(cthtorch) == run(torch)


@pytest.mark.parametrize("expr", ["x.sum(1, keepdims=True)", "torch.sum(x, axis=1, keepdims=True)",
                                  "x.max(axis=1, keepdims=True)[0]", "torch.cat([x, x], axis=1)",
                                  "x.mean(axis=0, keepdims=True)", "torch.add(x=x, other=x)", "torch.add(x, x2=x)",
                                  "x.std(axis=1, keepdims=True)", "torch.abs(a=x)", "x.logsumexp(axis=1, keepdims=True)"])
def test_numpy_keyword_names(expr):
    """torch's parser takes NumPy's names for dim, keepdim, input and other (makemore's
    counts.sum(1, keepdims=True))"""
    vals = np.arange(6.0).reshape(2, 3)
    ours = eval(expr, {"torch": cthtorch, "x": cthtorch.tensor(vals)})
    theirs = eval(expr, {"torch": torch, "x": torch.tensor(vals)})
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    assert list(ours.shape) == list(theirs.shape)


@pytest.mark.parametrize("expr", ["torch.argmax(x, dim=0, axis=0)", "torch.argmax(x, axis=0, dim=0)",
                                  "torch.argmax(x, 0, axis=0)", "torch.argmax(x=x, input=x)",
                                  "torch.argmax(x, keepdims=True, keepdim=False)"])
def test_numpy_alias_of_a_given_parameter_is_unexpected(expr):
    """an alias is read only for a parameter not given by its own name or position: torch names the alias
    unexpected, whichever comes first"""
    def run(lib):
        with pytest.raises(TypeError) as e:
            eval(expr, {"torch": lib, "x": lib.ones(2, 2)})
        return str(e.value)
    assert run(cthtorch) == run(torch)


# None where a Tensor goes: torch names the argument when exactly one overload
# could take that many arguments, and lists the overloads when several could
NONE_FOR_TENSOR = [
    "torch.add(None, torch.ones(2))", "torch.mul(None, torch.ones(2))", "torch.div(None, torch.ones(2))",
    "torch.sum(None)", "torch.mean(None)", "torch.max(None)", "torch.min(None)", "torch.exp(None)",
    "torch.squeeze(None)", "torch.sort(None)", "torch.topk(None, 1)", "torch.mm(None, torch.ones(2, 2))",
    "torch.matmul(None, torch.ones(2))", "torch.cat(None)", "torch.stack(None)", "torch.transpose(None, 0, 1)",
    "torch.clamp(None, 0.0)", "torch.abs(None)", "torch.argmax(None)", "torch.softmax(None, 0)",
    "torch.reshape(None, (1,))", "torch.flatten(None)", "torch.unsqueeze(None, 0)", "torch.zeros_like(None)",
    "F.linear(None, torch.ones(2, 2))", "F.relu(None)",
    "torch.ones(2).add(None)", "torch.ones(2).sum(None, None)",
]


@pytest.mark.parametrize("expr", NONE_FOR_TENSOR)
def test_none_for_a_tensor_names_the_argument_like_torch(expr):
    check(expr)
