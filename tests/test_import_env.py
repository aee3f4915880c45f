"""`import cthtorch` sets OPENBLAS_NUM_THREADS only while its C libraries load
(OpenBLAS reads it once), then puts the environment back as the user had it.
Checked in a fresh interpreter."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = ["OPENBLAS_NUM_THREADS"]


def _env_after_import(**user):
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(user)
    prog = "import os, json, cthtorch\nprint(json.dumps({k: os.environ.get(k) for k in %r}))" % (KEYS,)
    r = subprocess.run([sys.executable, "-c", prog], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_environment_unchanged_when_unset():
    assert _env_after_import() == {k: None for k in KEYS}


def test_user_values_kept():
    assert _env_after_import(OPENBLAS_NUM_THREADS="3") == {"OPENBLAS_NUM_THREADS": "3"}
