# cthtorch: the common moves. `make test` and `make run` set up a fresh
# machine by themselves (system packages, a venv, the build).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-installed

.PHONY: all develop debug asan test test-asan run bench clean deps sysdeps

all: develop

sysdeps:
	@command -v gcc >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null || \
	  (apt-get update && apt-get install -y gcc python3-venv python3-dev)

$(STAMP): requirements.txt
	$(MAKE) sysdeps
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements.txt
	touch $(STAMP)

deps: $(STAMP)

develop: deps
	$(PY) setup.py -q develop

debug: deps
	CTHTORCH_DEBUG=1 $(PY) setup.py -q develop

# AddressSanitizer + UBSan build. Run the tests under it with `make test-asan`
# (LD_PRELOAD of libasan is needed because python itself is not instrumented).
asan: deps
	CTHTORCH_ASAN=1 $(PY) setup.py -q develop

# libstdc++ is preloaded too: without it ASan's __cxa_throw interceptor has no
# real function to call and the first C++ exception (torch, the test oracle,
# raising an error) aborts the process.
test-asan: asan
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" ASAN_OPTIONS=detect_leaks=0 \
	  $(PY) -m pytest -x -q tests

test: develop
	$(PY) -m pytest -q tests

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
