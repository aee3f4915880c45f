"""Builds src/swish.c the PyTorch 0.x way: cthtorch.utils.ffi.create_extension
writes the package _ext/swish/ next to this file (cached: an unchanged
extension is not compiled again).

    python examples/extension/build.py
    python -c "from _ext import swish"     # from examples/extension/
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from cthtorch.utils.ffi import create_extension  # noqa: E402

ffi = create_extension("_ext.swish", headers=["src/swish.h"], sources=["src/swish.c"],
                       extra_compile_args=["-O2"], relative_to=__file__)

if __name__ == "__main__":
    print("built", ffi.build())
