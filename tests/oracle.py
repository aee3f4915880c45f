"""The reference implementation for differential tests.

PyTorch is the semantic oracle. Tests that need it call require_torch(): it
skips when torch is absent, except when CTHTORCH_REQUIRE_TORCH=1 (CI), where a
missing oracle is a failure, not a skip.
"""
import os

import pytest


def require_torch():
    try:
        import torch
    except ImportError:
        if os.environ.get("CTHTORCH_REQUIRE_TORCH") == "1":
            raise
        pytest.skip("torch (the reference) is not installed", allow_module_level=True)
    return torch


def raises_like(fn_ct, fn_t, first_line=False):
    """fn_ct raises what fn_t (torch) raises: the same type and message
    (only the first line of it with first_line=True)."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ec:
        fn_ct()
    assert type(ec.value).__name__ == type(et.value).__name__
    msg = (lambda e: str(e).split("\n")[0]) if first_line else str
    assert msg(ec.value) == msg(et.value)


def same(a, b, tol=1e-6):
    """a (cthtorch) equals b (torch): dtype, shape and values within tol
    (NaN equal to NaN); tuples element by element, named tuples by name."""
    import numpy as np
    if isinstance(b, tuple):
        assert type(a).__name__ == type(b).__name__, (type(a), type(b))
        for x, y in zip(a, b):
            same(x, y, tol)
        return
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float), np.asarray(b.tolist(), dtype=float), rtol=tol,
                               atol=tol, equal_nan=True)


def runs_match(ours, ref, rtol=1e-5, atol=1e-6):
    """Two lists a test run built once per library: numpy arrays close, everything else equal."""
    import numpy as np
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        if isinstance(r, np.ndarray):
            np.testing.assert_allclose(o, r, rtol=rtol, atol=atol)
        else:
            assert o == r


def fresh_process_outputs(code):
    """stdout of code run in a new interpreter with sys.argv[1] = 'cthtorch', then 'torch': for what happens
    once per process (TORCH_WARN_ONCE warnings), which an earlier test in this process may have used up."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # this checkout's cthtorch
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return [subprocess.run([sys.executable, "-c", code, lib], capture_output=True, text=True, check=True,
                           env=env).stdout for lib in ("cthtorch", "torch")]
