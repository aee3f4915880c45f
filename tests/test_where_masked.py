"""where / masked_fill / x[mask] = scalar against torch: every dtype width the
bitwise select in where_loop handles (1, 2, 4, 8 bytes), broadcast scalars
and masks, strided inputs (the generic loop), 0-d tensors, and the overflow
error of an out-of-range fill value."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _vals(dt, shape, rs):
    a = rs.randn(*shape) * 5
    if dt == "bool":
        return a > 0
    return a


def _pair(dt, a):
    c = ct.tensor(a).to(getattr(ct, dt))
    t = torch.tensor(a).to(getattr(torch, dt))
    return c, t


def _same(c, t):
    assert str(c.dtype) == str(t.dtype) and tuple(c.shape) == tuple(t.shape)
    np.testing.assert_array_equal(c.float().numpy() if c.dtype == ct.bfloat16 else c.numpy(),
                                  t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())


@pytest.mark.parametrize("dt", DTYPES)
def test_where_every_width(dt):
    rs = np.random.RandomState(0)
    m = rs.rand(37, 29) > 0.5
    a, b = _vals(dt, (37, 29), rs), _vals(dt, (37, 29), rs)
    (ca, ta), (cb, tb) = _pair(dt, a), _pair(dt, b)
    cm, tm = ct.tensor(m), torch.tensor(m)
    _same(ct.where(cm, ca, cb), torch.where(tm, ta, tb))
    _same(ct.where(cm, ca[:1], cb), torch.where(tm, ta[:1], tb))        # broadcast rows
    _same(ct.where(cm, ca.t().contiguous().t(), cb), torch.where(tm, ta.t().contiguous().t(), tb))  # strided
    _same(ct.where(cm[:, ::2], ca[:, ::2], cb[:, ::2]), torch.where(tm[:, ::2], ta[:, ::2], tb[:, ::2]))
    fill = True if dt == "bool" else 3
    _same(ca.masked_fill(cm, fill), ta.masked_fill(tm, fill))
    _same(ca.masked_fill(cm[:, :1], fill), ta.masked_fill(tm[:, :1], fill))   # broadcast mask


@pytest.mark.parametrize("dt", ["uint8", "int32", "float32", "float64"])
def test_setitem_bool_mask_scalar(dt):
    rs = np.random.RandomState(1)
    a = rs.randn(50, 31) * 5
    c, t = _pair(dt, a)
    c[c > 1] = 0
    t[t > 1] = 0
    _same(c, t)
    c[c < 0] = ct.tensor(2.7)
    t[t < 0] = torch.tensor(2.7)
    _same(c, t)
    for v0 in (1.5, -1.5):   # 0-d tensor, 0-d mask
        c0, t0 = ct.tensor(v0), torch.tensor(v0)
        c0[c0 > 0] = 0
        t0[t0 > 0] = 0
        assert c0.item() == t0.item()


def test_masked_fill_overflow_and_grad():
    oracle.raises_like(lambda: ct.zeros(3, dtype=ct.uint8).masked_fill_(ct.ones(3, dtype=ct.bool), 300),
                       lambda: torch.zeros(3, dtype=torch.uint8).masked_fill_(torch.ones(3, dtype=torch.bool), 300))
    w = np.random.RandomState(2).randn(6)
    cw, tw = ct.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    (cw.masked_fill(cw > 0, 0.0) * 3).sum().backward()
    (tw.masked_fill(tw > 0, 0.0) * 3).sum().backward()
    np.testing.assert_array_equal(cw.grad.numpy(), tw.grad.numpy())


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                                   "float64", "complex64"])
def test_non_bool_mask_errors_name_the_dtype_as_torch(dtype):
    """masked_fill prints the mask's C++ type (float, long int, c10::Half), masked_scatter its ScalarType (Float)"""
    for f in (lambda L, m: L.zeros(3).masked_fill(m, 0), lambda L, m: L.zeros(3).masked_fill_(m, 1.0),
              lambda L, m: L.zeros(3).masked_scatter(m, L.zeros(3))):
        msgs = []
        for L in (ct, torch):
            with pytest.raises(RuntimeError) as e:
                f(L, L.ones(3, dtype=getattr(L, dtype)))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_tensor_where_method_binds_self_as_the_values_not_the_condition():
    """x.where(cond, y) is torch.where(cond, x, y): the schema lists condition first, but the method binds self
    (it raised "where expected condition to be a boolean tensor" with a float x); numbers and tensors as y,
    keywords, gradients through x, and the signature errors"""
    outs = []
    for L in (ct, torch):
        x = L.arange(6.).view(2, 3).requires_grad_()
        a = x.where(x > 2, 0.0)
        b = x.where(condition=x < 4, other=L.tensor(-1.))
        (a * 2 + b).sum().backward()
        try:
            x.where(x > 2, L.ones(3, 2))
        except RuntimeError as e:
            err = str(e)
        outs.append((a.tolist(), b.tolist(), str(a.dtype), x.grad.tolist(), err))
    assert outs[0] == outs[1]
def test_tensor_where_binds_self_as_the_input():
    """x.where(condition, y) is torch.where(condition, x, y): the method's self is the schema's second
    parameter (it was bound as the condition), by position and by keyword, with the gradient to x"""
    rs = np.random.RandomState(3)
    a, b, m = rs.randn(4, 5), rs.randn(4, 5), rs.rand(4, 5) > 0.5
    for lib, out in ((ct, []), (torch, [])):
        x = lib.tensor(a, requires_grad=True)
        y, cond = lib.tensor(b), lib.tensor(m)
        r = x.where(cond, y) * 2 + x.where(cond, 1.5) + x.where(condition=cond, other=y)
        r.sum().backward()
        out += [r.detach().numpy(), x.grad.numpy()]
        if lib is ct:
            ours = out
        else:
            theirs = out
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


def test_uint8_condition_warns_once_at_the_callers_line():
    """torch.where with a uint8 condition selects as with bool and warns torch's deprecation once per
    process (TORCH_WARN_ONCE), naming the program's line, not cthtorch's composite"""
    import os
    import subprocess
    import sys
    code = ("import warnings, {lib} as torch\n"
            "warnings.simplefilter('always')\n"
            "m = torch.tensor([1, 0, 1], dtype=torch.uint8)\n"
            "x = torch.tensor([1., 2., 3.])\n"
            "print(torch.where(m, x, 0.).tolist(), x.where(m, -x).tolist())\n"
            "print(torch.where(m, x, 5.).tolist())\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    res = []
    for lib in ("cthtorch", "torch"):
        r = subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True, env=env,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        # torch appends the C++ source location of its warning; cthtorch has none to name
        res.append((r.stdout, r.stderr.split(" (Triggered internally")[0].strip()))
    assert res[0] == res[1]
    assert res[0][1].startswith("<string>:5: UserWarning: where received a uint8 condition tensor.")
