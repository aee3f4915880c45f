# cthtorch: the common moves. `make test` and `make run` set up a fresh
# machine by themselves (system packages, a venv, the build).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-installed

.PHONY: all develop debug asan test test-asan test-asan-ci test-cuda fuzz run bench clean deps sysdeps

all: develop

sysdeps:
	@command -v gcc >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null || \
	  (apt-get update && apt-get install -y gcc python3-venv python3-dev)

# --no-compile: pip byte-compiles every file it installs (scipy, onnxruntime,
# matplotlib...), minutes of CPU on a 2-core machine; Python compiles what a
# program imports when it first imports it
$(STAMP): requirements.txt
	$(MAKE) sysdeps
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q --no-compile -r requirements.txt
	touch $(STAMP)

deps: $(STAMP)

develop: deps
	$(PY) setup.py -q develop

debug: deps
	CTHTORCH_DEBUG=1 $(PY) setup.py -q develop

# AddressSanitizer + UBSan build, in its own copy of the tree (build/asan) so it
# never replaces the develop build: the sources are copied over (tar keeps their
# times, so the copy rebuilds only what changed) and built in place there.
# python itself is not instrumented, so libasan is LD_PRELOADed to run it;
# libstdc++ too: without it ASan's __cxa_throw interceptor has no real function
# to call and the first C++ exception (torch, the test oracle, raising) aborts.
# allocator_may_return_null: a too-big request is a MemoryError, as without ASan.
# UBSan halts on its first report, so undefined behaviour fails a test instead of
# scrolling past in captured stderr.
ASAN_TREE := build/asan
ASAN_RUN = cd $(ASAN_TREE) && LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(abspath $(PY))
asan: deps
	mkdir -p $(ASAN_TREE)/cthtorch
	cd $(ASAN_TREE) && rm -rf src tests tools setup.py && find cthtorch -mindepth 1 -maxdepth 1 ! -name lib ! -name "_C*.so" -exec rm -rf {} +
	tar -c --exclude=./build --exclude=./.venv --exclude=./.git --exclude=./data --exclude='*.so' \
	  --exclude=./cthtorch/lib --exclude=./cthtorch/include --exclude=__pycache__ . | tar -x -C $(ASAN_TREE)
	cd $(ASAN_TREE) && CTHTORCH_ASAN=1 $(abspath $(PY)) setup.py -q build_ext

# the GPU box's check: builds with libTHC, runs tests/test_cuda*.py and
# bench/bench_cuda.py, one log (tools/gpu_check.sh says what it expects)
test-cuda:
	tools/gpu_check.sh

# the whole suite under ASan+UBSan
test-asan: asan
	$(ASAN_RUN) -m pytest -x -q -p no:cacheprovider tests

# CI's sanitizer leg: the tests that drive kernels with hostile shapes and
# indices, the fuzz smoke, the canary that proves ASan is live, and the newest
# C kernels' families (upsample, 3-d pooling, sparse, embedding_bag, sort, the JIT's C
# interpreter, the packed GEMM, float16 loops, complex and FFT, DLPack capsules from hostile producers)
ASAN_CI_TESTS := tests/test_asan_canary.py tests/fuzz tests/test_nn_kernels.py tests/test_indexing.py \
	tests/test_conv.py tests/test_serialization.py tests/test_fuzz_regressions.py \
	tests/test_upsample.py tests/test_pool.py tests/test_sparse_grad.py tests/test_embedding_bag.py tests/test_sort.py \
	tests/test_jit_c_interpreter.py tests/test_gemm_packed.py tests/test_half_loops.py tests/test_complex.py tests/test_fft.py \
	tests/test_dlpack.py
test-asan-ci: asan
	$(ASAN_RUN) tools/run_tests.py -j $(TEST_JOBS) -q $(ASAN_CI_TESTS)

# a long fuzz (tools/fuzz.py): 30,000 calls, FUZZ_SEED picks them; prints reproducers
FUZZ_CALLS ?= 30000
fuzz: develop
	$(PY) tools/fuzz.py --calls $(FUZZ_CALLS)

# the suite, then its sanitizer leg. The suite is mostly one Python thread,
# so TEST_JOBS pytest processes share its files (tools/run_tests.py), one per
# core. The sanitizer build compiles meanwhile, niced, in the cores' idle
# moments (its log is shown only if it fails; test-asan-ci then finds it up
# to date)
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: develop
	@mkdir -p build; (nice -n 15 $(MAKE) -s asan > build/asan-build.log 2>&1; echo $$? > build/asan-build.rc) & \
	$(PY) tools/run_tests.py -j $(TEST_JOBS) -q tests; rc=$$?; wait; \
	if [ "$$(cat build/asan-build.rc)" != 0 ]; then cat build/asan-build.log; exit 1; fi; exit $$rc
	$(MAKE) test-asan-ci

# the shared MNIST files when this checkout sits beside them, else ./data
# (and with no MNIST there, the job says so and uses scikit-learn's digits)
MNIST ?= $(firstword $(wildcard ../shared/data/mnist) ./data)

run: develop
	$(PY) examples/mnist.py --data $(MNIST)

# peer_bench beside torch and numpy, then each op family's cases beside torch
# (bench/bench_<family>.py: the ops moved into C by issue 15, the engine)
bench: develop
	$(PY) bench/compare.py
	$(PY) bench/bench_data.py
	for f in bench/bench_*.py; do case $$f in bench/bench_data.py) ;; *) echo "== $$f"; PYTHONPATH=. $(PY) $$f || exit 1;; esac; done

clean:
	rm -rf build cthtorch/lib cthtorch/include cthtorch/_C*.so cthtorch/_C.pyi *.egg-info
