"""cthtorch CUDA against torch CUDA, in one process, on the same card.

Cases: 64M-element float32 add and sum (GB/s of memory traffic), sgemm and
hgemm 4096^3 (TFLOP/s), one MLP training step (batch 256, 784-512-10, SGD;
ms per step). Timing: a warm-up call, then enough iterations for ~0.3 s,
bracketed by device synchronisation (torch.cuda.synchronize for both).
A case cthtorch cannot run (NotImplementedError: no CUDA kernel yet) is
skipped and named. Ratio: cthtorch speed / torch speed (1.00 = parity).
torch's fp32 matmul runs without TF32 (its default), as cthtorch's does.

Usage: python3 bench/bench_cuda.py    (tools/gpu_check.sh runs it)"""
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cthtorch as ct  # noqa: E402

try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

N_ELEM = 64 << 20
GEMM_N = 4096


def timed(fn, sync, budget=0.3, max_iters=50):
    """Seconds per call of fn: one warm-up, then iterations filling ~budget seconds."""
    fn()
    sync()
    t = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t, 1e-6)
    iters = max(1, min(max_iters, int(budget / one)))
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t) / iters


def case_add(lib):
    a = lib.ones(N_ELEM, device="cuda")
    b = lib.ones(N_ELEM, device="cuda")
    return (lambda: a + b), 3 * 4 * N_ELEM / 1e9, "GB/s"


def case_sum(lib):
    a = lib.ones(N_ELEM, device="cuda")
    return (lambda: a.sum()), 4 * N_ELEM / 1e9, "GB/s"


def case_gemm(dtype_name):
    def make(lib):
        dt = getattr(lib, dtype_name)
        a = lib.ones(GEMM_N, GEMM_N, device="cuda").to(dt)
        b = lib.ones(GEMM_N, GEMM_N, device="cuda").to(dt)
        return (lambda: a @ b), 2 * GEMM_N ** 3 / 1e12, "TFLOP/s"
    return make


def case_mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).to("cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(256, 784).to("cuda")
    y = lib.randint(0, 10, (256,)).to("cuda")

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step, None, "ms/step"


CASES = [("add f32 64M", case_add), ("sum f32 64M", case_sum), ("sgemm 4096", case_gemm("float32")),
         ("hgemm 4096", case_gemm("float16")), ("MLP step 256x784-512-10", case_mlp)]


def measure(lib, make, sync):
    fn, work, unit = make(lib)
    sec = timed(fn, sync)
    return (sec * 1e3 if work is None else work / sec), unit


def main(cases=CASES):
    if not ct.cuda.is_available():
        print("cthtorch sees no CUDA device: nothing to benchmark")
        return 1
    print("device:", ct.cuda.get_device_name(), "| torch:", torch.__version__ if torch else "absent (no ratios)")
    sync_ct = ct.cuda.synchronize
    sync_t = torch.cuda.synchronize if torch else None
    print("%-26s %14s %14s %8s" % ("case", "cthtorch", "torch", "ratio"))
    status = 0
    for name, make in cases:
        try:
            mine, unit = measure(ct, make, sync_ct)
        except NotImplementedError as e:
            print("%-26s SKIPPED: cthtorch has no CUDA kernel (%s)" % (name, str(e).splitlines()[0][:100]))
            continue
        except Exception as e:   # a failing case is reported, the others still run
            print("%-26s ERROR in cthtorch: %s: %s" % (name, type(e).__name__, str(e).splitlines()[0][:150]))
            traceback.print_exc(limit=3)
            status = 1
            continue
        ref = None
        if torch is not None:
            try:
                ref, _ = measure(torch, make, sync_t)
            except Exception as e:
                print("  (torch failed: %s)" % e)
        ratio = "" if ref is None else "%.2f" % ((ref / mine) if unit == "ms/step" else (mine / ref))
        print("%-26s %9.2f %-4s %9s %-4s %8s" % (name, mine, unit if unit != "ms/step" else "ms",
                                                 "-" if ref is None else "%.2f" % ref,
                                                 "" if ref is None else (unit if unit != "ms/step" else "ms"), ratio))
        sys.stdout.flush()
        ct.cuda.empty_cache()
    print("peak cthtorch CUDA memory: %.1f MiB" % (ct.cuda.max_memory_allocated() / 2 ** 20))
    return status


if __name__ == "__main__":
    sys.exit(main())
