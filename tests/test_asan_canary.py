"""Proves the sanitizer leg (make test-asan-ci) really runs under ASan: the ASan
build carries _C._asan_canary, a deliberate heap overflow, and calling it must
kill the process with ASan's report. A normal build must not carry it."""
import os
import subprocess
import sys

import cthtorch

UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def test_canary_only_in_asan_build():
    assert hasattr(cthtorch._C, "_asan_canary") == UNDER_ASAN


def test_canary_dies_with_asan_report():
    code = "import cthtorch; cthtorch._C._asan_canary(); print('survived')"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("UBSAN_OPTIONS", None)     # UBSan reports the bad store too; with halt_on_error it would stop first
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if UNDER_ASAN:
        assert p.returncode != 0 and "survived" not in p.stdout
        assert "AddressSanitizer: heap-buffer-overflow" in p.stderr, p.stderr[-2000:]
    else:
        assert p.returncode == 1 and "AttributeError" in p.stderr and "_asan_canary" in p.stderr
