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
