"""The ops torch computes with fused multiply-adds (add/sub with alpha, lerp,
addcmul) give the same bits under the ASan build's flags (-O1, baseline
x86-64: no FMA instructions) as under the normal build's (-O3 -march=native).
They once relied on gcc contracting a * b + c, which it does only when the
target has FMA, so the ASan build rounded twice and the bit-exact tests
(fused vs op-by-op Adam, uniform_) failed there alone."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <stdio.h>
#include "TH/THScalarOps.h"
static unsigned long long st = 88172645463325252ULL;
static double rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (double)(st >> 11) / 9007199254740992.0 * 4 - 2; }
#define RUN(T) { typedef T compute_t; unsigned long long h = 1469598103934665603ULL;                        \
  for (int i = 0; i < 200000; i++) {                                                                   \
    compute_t a = (compute_t)rnd(), b = (compute_t)rnd(), c = (compute_t)(rnd() / 2), v = (compute_t)rnd(); \
    compute_t r[4] = { TH_OP_LERP(a, b, c), TH_OP_ADDCMUL(a, b, c, v), TH_FMA(v, b, a), TH_FMA(-v, b, a) }; \
    unsigned char *p = (unsigned char *)r;                                                             \
    for (size_t k = 0; k < sizeof r; k++) h = (h ^ p[k]) * 1099511628211ULL;                           \
  }                                                                                                    \
  printf("%016llx\n", h); }
int main(void) { RUN(float) RUN(double) return 0; }
"""

FLAGS = {"asan build": ["-O1"], "normal build": ["-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math"]}


def test_fused_ops_round_the_same_under_both_builds_flags(tmp_path):
    cc = os.environ.get("CC", "gcc")
    if not shutil.which(cc):
        pytest.skip("no C compiler")
    src = tmp_path / "rounding.c"
    src.write_text(PROGRAM)
    out = {}
    for name, flags in FLAGS.items():
        exe = tmp_path / name.replace(" ", "_")
        subprocess.check_call([cc, "-std=gnu11", "-fwrapv"] + flags + ["-I" + os.path.join(ROOT, "src"), str(src),
                               "-o", str(exe), "-lm"])
        out[name] = subprocess.check_output([str(exe)], text=True)
    assert out["asan build"] == out["normal build"]
