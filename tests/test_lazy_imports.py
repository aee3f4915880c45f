"""`import cthtorch` loads none of the optional packages (issue 21): numpy,
Pillow, tqdm, matplotlib, tensorboard, cffi, onnx... load when a feature
that needs them is first used. Checked in a fresh interpreter."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONAL = ["numpy", "PIL", "tqdm", "matplotlib", "tensorboard", "cffi", "onnx", "onnxruntime", "scipy",
            "sklearn", "yaml", "google.protobuf", "torch"]
# slow standard modules the bare import does without (nn, optim... may use them)
SLOW_STDLIB = ["inspect", "dataclasses", "json", "ctypes", "glob"]


def _loaded_after(code, watch=OPTIONAL):
    prog = "import sys\n%s\nprint(repr([m for m in %r if m in sys.modules]))" % (code, watch)
    r = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_import_cthtorch_loads_no_optional_package():
    assert _loaded_after("import cthtorch", OPTIONAL + SLOW_STDLIB) == []


def test_features_load_what_they_need():
    # numpy arrives with the first numpy conversion, not before
    assert "numpy" in _loaded_after("import cthtorch\ncthtorch.ones(2).numpy()")
    # training a layer needs none of them
    assert _loaded_after("import cthtorch\nm = cthtorch.nn.Linear(3, 2)\nm(cthtorch.ones(4, 3)).sum().backward()\n"
                         "cthtorch.optim.SGD(m.parameters(), lr=0.1).step()") == []
