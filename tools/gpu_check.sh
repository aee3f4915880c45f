#!/usr/bin/env bash
# The prepared GPU check (issue 19): build cthtorch with libTHC, run the CUDA
# tests and the CUDA benchmark, and write ONE log that says what passed and
# the timings. Finishes in under 5 minutes (each step has its own timeout).
#
# What it expects (the GPU box): python3 (3.12) with torch (CUDA build), numpy
# and pytest; nvcc (PATH or /usr/local/cuda/bin); no network. The checkout
# arrives with the scipy-openblas32 wheel in .whl/ (put there by the
# integrator; .whl/ is git-excluded), installed here into /tmp/site.
#
# Usage: tools/gpu_check.sh        (or: make test-cuda)
#        GPU_CHECK_STEPS="tests profile" tools/gpu_check.sh   (a subset of: tests bench models profile mnist)
# Log:   $OUT/gpu_check.log when OUT is set, else build/gpu_check.log.
# Exit:  0 when the build and the tests passed (benchmark failures are logged only).
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ -n "${OUT:-}" ]; then LOG=$OUT/gpu_check.log; else LOG=build/gpu_check.log; fi
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
T0=$(date +%s)
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo $(( $(date +%s) - T0 ))s; }
# step NAME TIMEOUT CMD...: runs CMD with its output in the log, says PASS/FAIL
step() {
  local name=$1 limit=$2; shift 2
  say "==== $name (limit ${limit}s, at $(elapsed))"
  local s=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >> "$LOG" 2>&1
  local rc=$?
  local verdict=PASS; [ $rc -ne 0 ] && verdict="FAIL (rc=$rc$([ $rc -eq 124 ] && echo ', timed out'))"
  say "==== $name: $verdict in $(( $(date +%s) - s ))s"
  return $rc
}

[ -d /usr/local/cuda/bin ] && export PATH=$PATH:/usr/local/cuda/bin
say "gpu_check $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: none";
  nvcc --version 2>&1 | tail -1; $PY --version 2>&1;
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), "cudnn", torch.backends.cudnn.version())' 2>&1
  # where cuDNN lives there (libTHC opens it at run time, as cuBLAS)
  $PY -c 'import nvidia, os; [print(os.path.join(r, f)) for p in nvidia.__path__ for r, _, fs in os.walk(p) for f in fs if "cudnn" in f and (f.endswith(".h") or ".so" in f)]' 2>&1 | head -30
} | sed 's/^/  /' | tee -a "$LOG"

# OpenBLAS for the CPU kernels (setup.py imports scipy_openblas32)
if ! $PY -c 'import scipy_openblas32' 2>/dev/null; then
  if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >> "$LOG" 2>&1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  else
    say "no scipy_openblas32 and no .whl/*.whl: the build will fail"
  fi
fi

STEPS=${GPU_CHECK_STEPS:-tests bench models mnist}
want() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
FAILED=""
step build 300 $PY setup.py -q build_ext || FAILED="$FAILED build"
if [ -f cthtorch/lib/libTHC.so ]; then say "  libTHC.so built"; else say "  libTHC.so MISSING"; FAILED="$FAILED libTHC"; fi
$PY -c 'import cthtorch as t; print("  cthtorch.cuda.is_available():", t.cuda.is_available(), t.cuda.device_count(), "device(s)")' 2>&1 | tee -a "$LOG"
# a GPU that cthtorch does not see would make every CUDA test skip: that is a failure here
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
   ! $PY -c 'import cthtorch as t, sys; sys.exit(not t.cuda.is_available())' >> "$LOG" 2>&1; then
  say "  nvidia-smi lists a GPU but cthtorch.cuda.is_available() is False"; FAILED="$FAILED cuda-unavailable"
fi

if [ -z "$FAILED" ]; then
  if ! want tests; then :
  elif $PY -m pytest --version >/dev/null 2>&1; then
    # -rfEs: the summary names every failure, error and skip (with its reason)
    # a hung test (a kernel that never returns) costs 60 s, not the whole step, where pytest-timeout exists
    TO=""; $PY -c 'import pytest_timeout' 2>/dev/null && TO="--timeout=60"
    # one pytest per file: a crash in one file does not hide the others' results
    for f in tests/test_cuda*.py; do
      step "tests $(basename $f)" 90 $PY -m pytest -q -rfEs --tb=short -p no:cacheprovider $TO "$f" || FAILED="$FAILED $(basename $f)"
    done
  else
    say "pytest is not installed: tests not run"; FAILED="$FAILED tests(no pytest)"
  fi
  want bench && { step bench 90 $PY bench/bench_cuda.py || say "  (benchmark failure does not fail the check)"; }
  want bench && { step bench-sort-scan 60 $PY bench/bench_cuda_sort_scan.py || say "  (benchmark failure does not fail the check)"; }
  want models && { step models 150 $PY bench/bench_cuda_models.py || say "  (a model benchmark failure does not fail the check)"; }
  want mnist && { step mnist 200 $PY bench/bench_cuda_mnist.py || say "  (an MNIST epoch failure does not fail the check)"; }
  want profile && { step profile 150 $PY bench/profile_cuda_resnet.py || say "  (a profile failure does not fail the check)"; }
fi

say "==== summary ($(elapsed) total): ${FAILED:+FAILED:$FAILED}${FAILED:-ALL PASSED}"
say "log: $LOG"
[ -z "$FAILED" ]
