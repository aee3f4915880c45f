"""torch.testing: assert_close with PyTorch's default tolerances, make_tensor."""
import cthtorch

_TOL = {cthtorch.float16: (1e-3, 1e-5), cthtorch.bfloat16: (1.6e-2, 1e-5), cthtorch.float32: (1.3e-6, 1e-5),
        cthtorch.float64: (1e-7, 1e-7), cthtorch.complex32: (1e-3, 1e-5), cthtorch.complex64: (1.3e-6, 1e-5),
        cthtorch.complex128: (1e-7, 1e-7)}


# Python numbers compare as torch makes them: bools, int64, float64 and complex128 (bool before int: a subclass)
_NUMBER_DTYPES = ((bool, cthtorch.bool), (int, cthtorch.int64), (float, cthtorch.float64),
                  (complex, cthtorch.complex128))


def _number_dtype(x):
    for kind, dtype in _NUMBER_DTYPES:
        if isinstance(x, kind):
            return dtype
    return None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no %s."
                         % ("rtol" if rtol is None else "atol"))
    try:
        _compare(actual, expected, rtol, atol, equal_nan, check_dtype, "")
    except AssertionError as err:
        if msg is None:
            raise
        raise AssertionError(msg(str(err)) if callable(msg) else msg) from None


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, path):
    """one pair of inputs: sequences and mappings item by item (a failure names the item's path, as torch's
    report does), anything else as tensors"""
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(_at("The length of the sequences mismatch: %d != %d" % (len(actual), len(expected)),
                                     path))
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, "%s[%d]" % (path, i))
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError(_at("The keys of the mappings do not match", path))
        for k in actual:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, "%s[%r]" % (path, k))
        return
    try:
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype)
    except AssertionError as err:
        raise AssertionError(_at(str(err), path)) from None


def _at(message, path):
    return message + ("\n\nThe failure occurred for item %s" % path if path else "")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype):
    na, ne = _number_dtype(actual), _number_dtype(expected)
    if (na is None) != (ne is None) and isinstance(actual if na is None else expected, cthtorch.Tensor):
        raise TypeError("No comparison pair was able to handle inputs of type %s and %s."
                        % tuple("<class 'torch.Tensor'>" if isinstance(x, cthtorch.Tensor) else type(x)
                                for x in (actual, expected)))
    if na is not None and ne is not None:
        if check_dtype and type(actual) is not type(expected):
            raise AssertionError("The (d)types do not match: %s != %s." % (type(actual), type(expected)))
        if na == cthtorch.bool and ne == cthtorch.bool:
            if actual is not expected:
                raise AssertionError("Booleans mismatch: %s is not %s" % (actual, expected))
            return
    a = cthtorch.tensor(actual, dtype=na) if na is not None else actual
    e = cthtorch.tensor(expected, dtype=ne) if ne is not None else expected
    a, e = a if isinstance(a, cthtorch.Tensor) else cthtorch.as_tensor(a), \
        e if isinstance(e, cthtorch.Tensor) else cthtorch.as_tensor(e)
    if tuple(a.shape) != tuple(e.shape):
        raise AssertionError("The values for attribute 'shape' do not match: %s != %s." % (a.shape, e.shape))
    if check_dtype and a.dtype != e.dtype:
        raise AssertionError("The values for attribute 'dtype' do not match: %s != %s." % (a.dtype, e.dtype))
    if rtol is None:   # the looser of the two dtypes' tolerances, compared in their common dtype
        tols = [_TOL.get(a.dtype, (0.0, 0.0)), _TOL.get(e.dtype, (0.0, 0.0))]
        rtol, atol = max(t[0] for t in tols), max(t[1] for t in tols)
    if a.dtype != e.dtype:
        common = cthtorch.promote_types(a.dtype, e.dtype)
        a, e = a.to(common), e.to(common)
    a, e = a.detach(), e.detach()
    ad, ed = (a.double(), e.double()) if a.is_floating_point() else (a, e)
    ok = cthtorch.isclose(ad, ed, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not bool(ok.all()):
        raise AssertionError(_mismatch_message(a, e, ok, rtol, atol))


def _mismatch_message(a, e, ok, rtol, atol):
    """torch's report: how many elements differ, and the greatest absolute and relative differences among
    them with their index (and the tolerances, unless the comparison was for equality)"""
    exact = rtol == 0 and atol == 0
    allowed = (lambda tol: "") if exact else (lambda tol: " (up to %s allowed)" % tol)
    if a.dim() == 0:   # one number: torch reports both values, its differences in Python floats
        got, want = a.item(), e.item()
        diff = abs(got - want)
        rel = diff / abs(want) if want else float("inf") if diff else float("nan")
        return "Scalars are not %s!\n\nExpected %s but got %s.\nAbsolute difference: %s%s\nRelative difference: " \
               "%s%s" % ("equal" if exact else "close", want, got, diff, allowed(atol), rel, allowed(rtol))
    bad = int((~ok).sum())
    if a.is_floating_point() or a.is_complex():   # a complex difference is measured by its modulus
        diff = (a - e).abs()
        rel = diff / e.abs()
    else:   # integers and bools: exact differences (bool has no abs of its own)
        diff = (a.long() - e.long()).abs()
        rel = diff.to(cthtorch.get_default_dtype()) / e.long().abs().to(cthtorch.get_default_dtype())
    lines = ["Tensor-likes are not %s!" % ("equal" if exact else "close"), "",
             "Mismatched elements: %d / %d (%.1f%%)" % (bad, ok.numel(), 100.0 * bad / max(ok.numel(), 1))]
    for name, d, tol in (("absolute", diff, atol), ("relative", rel, rtol)):
        flat, mask = d.reshape(-1), (~ok).reshape(-1)
        nan = flat.isnan() & mask if d.is_floating_point() else mask & False
        pos = int(nan.nonzero()[0, 0]) if bool(nan.any()) else \
            int(cthtorch.where(mask, flat, cthtorch.zeros_like(flat)).argmax())
        index, rest = [], pos
        for size in reversed(tuple(a.shape)):
            index.append(rest % size)
            rest //= size
        value = flat[pos].item()
        lines.append("Greatest %s difference: %s at index %s%s" % (name, value, tuple(reversed(index)), allowed(tol)))
    return "\n".join(lines)


# assert_allclose's own defaults (before assert_close existed): (rtol, atol) by dtype, the larger of the two inputs'
_ALLCLOSE_TOLERANCES = {"torch.float16": (1e-3, 1e-3), "torch.float32": (1e-4, 1e-5), "torch.float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated form of assert_close: dtypes need not match (expected is made in actual's dtype when it is not
    a tensor), NaNs compare equal by default, and the tolerances are the older per-dtype ones."""
    import warnings
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, cthtorch.Tensor):
        actual = cthtorch.tensor(actual)
    if not isinstance(expected, cthtorch.Tensor):
        expected = cthtorch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        tols = [_ALLCLOSE_TOLERANCES.get(str(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(t[0] for t in tols), max(t[1] for t in tols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


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
