"""`import cthtorch` beside `import numpy` and `import torch`: each imported
in a fresh interpreter, min of several runs (ms), interleaved so a busy
machine slows all three alike. Also lists the optional packages that
importing cthtorch pulled in (there should be none: numpy, PIL, tqdm,
matplotlib, tensorboard, cffi, onnx... load on first use).
Issue 21's bound: at most 150 ms for cthtorch.
Bytecode caching is on for the runs whatever PYTHONDONTWRITEBYTECODE says (a
first, untimed import writes the .pyc files, as a user's first import does):
without it every run compiles cthtorch's sources and times the compiler.
Run: python bench/bench_import.py [runs]"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONAL = ("numpy", "PIL", "tqdm", "matplotlib", "tensorboard", "cffi", "onnx", "onnxruntime", "scipy",
            "sklearn", "yaml", "google.protobuf", "torch")
PROBE = ("import sys, time, json\nt = time.perf_counter()\nimport %s\nt = time.perf_counter() - t\n"
         "print(json.dumps([t, [m for m in %r if m in sys.modules]]))")


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def once(module):
    # a plain interpreter, as a user starts one
    out = subprocess.run([sys.executable, "-c", PROBE % (module, OPTIONAL)], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=ENV).stdout
    return json.loads(out)


def main(runs=7):
    mods = ["numpy", "torch", "cthtorch"]
    best = {m: float("inf") for m in mods}
    pulled = {}
    for m in mods:
        once(m)          # writes the bytecode caches
    for _ in range(runs):
        for m in mods:
            t, loaded = once(m)
            best[m] = min(best[m], t)
            pulled[m] = [x for x in loaded if x != m]
    for m in mods:
        print("import %-9s %7.1f ms   (also loaded: %s)" % (m, 1e3 * best[m], ", ".join(pulled[m]) or "-"))
    print("cthtorch / numpy: %.2fx   cthtorch / torch: %.2fx   bound 150 ms: %s"
          % (best["cthtorch"] / best["numpy"], best["cthtorch"] / best["torch"],
             "within" if best["cthtorch"] <= 0.150 else "OVER"))
    return best


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
