"""cthtorch CUDA against torch CUDA for the sort, scan, flip, scatter_reduce,
embedding_bag and adaptive max pooling kernels (src/THC/THCSort.cu,
THCScan.cu, THCIndex.cu, THCEmbedding.cu, THCPool.cu), in one process on the
same card, with bench_cuda.py's timing. Times are ms per call; ratio is
torch's time / cthtorch's (1.00 = parity, below 1 = slower than torch).

Usage: python3 bench/bench_cuda_sort_scan.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import main  # noqa: E402


def _randn(lib, *shape):
    lib.manual_seed(0)
    return lib.randn(*shape).to("cuda")


def case_sort(rows, n):
    def make(lib):
        x = _randn(lib, rows, n)
        return (lambda: lib.sort(x, 1)), None, "ms/step"
    return make


def case_topk(lib):
    x = _randn(lib, 256, 32768)
    return (lambda: lib.topk(x, 10, 1)), None, "ms/step"


def case_cumsum(shape, dim):
    def make(lib):
        x = _randn(lib, *shape)
        return (lambda: lib.cumsum(x, dim)), None, "ms/step"
    return make


def case_flip(lib):
    x = _randn(lib, 64, 3, 224, 224)
    return (lambda: lib.flip(x, (3,))), None, "ms/step"


def case_scatter_amax(lib):
    x = _randn(lib, 1 << 20)
    lib.manual_seed(1)
    i = lib.randint(0, 4096, (1 << 20,)).to("cuda")
    z = lib.zeros(4096, device="cuda")
    return (lambda: z.scatter_reduce(0, i, x, "amax")), None, "ms/step"


def case_embedding_bag(lib):
    w = _randn(lib, 100000, 64)
    lib.manual_seed(2)
    idx = lib.randint(0, 100000, (8192 * 20,)).to("cuda")
    off = (lib.arange(8192) * 20).to("cuda")
    return (lambda: lib.nn.functional.embedding_bag(idx, w, off, mode="mean")), None, "ms/step"


def case_adaptive_max(lib):
    x = _randn(lib, 64, 512, 14, 14)
    return (lambda: lib.nn.functional.adaptive_max_pool2d(x, (7, 7))), None, "ms/step"


CASES = [("sort 1x4M f32", case_sort(1, 1 << 22)), ("sort 4096x1024 f32", case_sort(4096, 1024)),
         ("sort 65536x32 f32", case_sort(65536, 32)), ("topk 256x32768 k=10", case_topk),
         ("cumsum 16M f32", case_cumsum((1 << 24,), 0)), ("cumsum 4096x4096 dim1", case_cumsum((4096, 4096), 1)),
         ("cumsum 4096x4096 dim0", case_cumsum((4096, 4096), 0)), ("flip 64x3x224x224 W", case_flip),
         ("scatter_reduce amax 1M", case_scatter_amax), ("embedding_bag 8192x20 mean", case_embedding_bag),
         ("adaptive_max_pool2d 7x7", case_adaptive_max)]

if __name__ == "__main__":
    sys.exit(main(CASES))
