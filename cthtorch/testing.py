"""torch.testing: assert_close with PyTorch's default tolerances, make_tensor."""
import cthtorch

_TOL = {cthtorch.float16: (1e-3, 1e-5), cthtorch.bfloat16: (1.6e-2, 1e-5), cthtorch.float32: (1.3e-6, 1e-5),
        cthtorch.float64: (1e-7, 1e-7)}


def _as_tensor(x):
    return x if isinstance(x, cthtorch.Tensor) else cthtorch.as_tensor(x)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no %s."
                         % ("rtol" if rtol is None else "atol"))
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError("The length of the sequences mismatch: %d != %d" % (len(actual), len(expected)))
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError("The keys of the mappings do not match")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype,
                         msg=msg)
        return
    a, e = _as_tensor(actual), _as_tensor(expected)
    if tuple(a.shape) != tuple(e.shape):
        raise AssertionError(msg or "The values for attribute 'shape' do not match: %s != %s." % (a.shape, e.shape))
    if check_dtype and a.dtype != e.dtype:
        raise AssertionError(msg or "The values for attribute 'dtype' do not match: %s != %s." % (a.dtype, e.dtype))
    if rtol is None:
        rtol, atol = _TOL.get(a.dtype, (0.0, 0.0))
    ad, ed = a.detach().double() if a.is_floating_point() else a.detach(), e.detach().to(a.dtype).double() \
        if a.is_floating_point() else e.detach().to(a.dtype)
    ok = cthtorch.isclose(ad, ed, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not bool(ok.all()):
        bad = int((~ok).sum())
        diff = (ad.double() - ed.double()).abs()
        raise AssertionError(msg or "Tensor-likes are not close!\n\nMismatched elements: %d / %d (%.1f%%)\n"
                             "Greatest absolute difference: %s\n" % (bad, ok.numel(), 100.0 * bad / max(ok.numel(), 1),
                                                                      float(diff.max())))


assert_allclose = assert_close


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if dtype == cthtorch.bool:
        t = cthtorch.randint(0, 2, shape).bool()
    elif dtype.is_floating_point:
        lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
        t = (cthtorch.rand(shape, dtype=cthtorch.float64) * (hi - lo) + lo).to(dtype)
    else:
        lo, hi = (-9 if low is None else int(low)), (10 if high is None else int(high))
        if dtype == cthtorch.uint8:
            lo = max(lo, 0)
        t = cthtorch.randint(lo, hi, shape, dtype=dtype)
    if exclude_zero:
        t = cthtorch.where(t == 0, cthtorch.ones_like(t), t)
    if noncontiguous and t.numel() > 1:
        t = cthtorch.repeat_interleave(t.flatten(), 2)[::2].reshape(t.shape)
    if requires_grad:
        t.requires_grad_(True)
    return t
