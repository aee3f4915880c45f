"""gdb walks from a Python line down to the TH kernel, and the pretty-printer
shows the tensor there. Skips only where gdb is missing."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
def test_backtrace_runs_from_binding_through_aten_into_th(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport cthtorch\n"
        "x = cthtorch.zeros(2, 3)\ny = cthtorch.ones(3, 2).t()\nx.copy_(y)\n" % ROOT)
    cmds = tmp_path / "cmds.gdb"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # under `make test-asan` libasan is preloaded: the python gdb starts needs it, gdb
    # itself must not run under it (it stalls there), so gdb hands it to the inferior only
    preload = env.pop("LD_PRELOAD", "")
    cmds.write_text(
        "set pagination off\nset breakpoint pending on\n" +
        ("set environment LD_PRELOAD %s\n" % preload if preload else "") +
        "source %s\n"
        "break THFloatTensor_copy_loop\nrun\nbt\n"
        "frame function at_copy_\nprint *dst\nkill\nquit\n" % os.path.join(ROOT, "tools", "gdb", "cthtorch_gdb.py"))
    out = subprocess.run(["gdb", "-batch", "-x", str(cmds), "--args", sys.executable, str(script)],
                         capture_output=True, text=True, timeout=240, env=env).stdout
    bt = [line for line in out.splitlines() if line.startswith("#")]
    assert bt, out[-3000:]
    names = " ".join(bt)
    # kernel (TH) <- loop driver + entry point (ATen) <- generated binding (_C)
    assert "THFloatTensor_copy_loop" in bt[0]
    assert names.index("THFloatTensor_copy_loop") < names.index("at_iter_run") < names.index("at_copy_")
    assert names.index("at_copy_") < names.index("VT_copy_")
    assert "THPVariable_m_copy_" in names
    assert "THTensor(float32, sizes=[2, 3], strides=[3, 1], offset=0" in out
