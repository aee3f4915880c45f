import os
import sys

# Cache bytecode, here and in the subprocesses tests start (programs, ranks, workers): these machines set
# PYTHONDONTWRITEBYTECODE and the venv's packages are installed --no-compile, so every process that
# imported torch compiled its ~1,800 modules again (10-20 s a process under the suite's load).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Tests import the in-place build of this checkout, whatever the cwd.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The `import torch` alias (cthtorch/_torch_alias) must never be on in the test
# process: `import torch` is the oracle here, and with the alias it would be
# cthtorch itself, so every comparison would pass vacuously. Tests that need
# the alias give it to their subprocesses only (tests/test_torch_alias.py).
_ALIAS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cthtorch", "_torch_alias")
if any(os.path.realpath(p or ".") == os.path.realpath(_ALIAS_DIR) for p in sys.path) \
        or getattr(sys.modules.get("torch"), "__name__", "torch") == "cthtorch":
    raise RuntimeError("the `import torch` alias (%s) is on in the test process (PYTHONPATH?): torch, the tests' "
                       "oracle, would be cthtorch itself; run the tests without it" % _ALIAS_DIR)

# several pytest processes sharing one run, file by file (tools/run_tests.py)
from suite_workers import pytest_runtest_protocol, pytest_terminal_summary  # noqa: E402,F401


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _distribution_validation_restored():
    """torch.compile turns distributions' argument validation off process-wide (torch's dynamo patch, which
    cthtorch.compile mirrors); a test that compiles must not change what later tests in its process see"""
    mods = [sys.modules.get(m + ".distributions.distribution") for m in ("torch", "cthtorch")]
    saved = [m.Distribution._validate_args if m else None for m in mods]
    yield
    for m, v in zip(mods, saved):
        if m is not None:
            m.Distribution._validate_args = v
