"""torch.distributed.rpc on 2 ranks: one MPI job (tests/programs/rpc_checks.py)
runs calls, remote errors, nested calls, RRefs and a parameter-server
training loop; the errors before init_rpc are torch's."""
import os
import subprocess
import sys

import cthtorch.distributed.rpc as rpc
import oracle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = ["rpc_sync and rpc_async", "remote exception", "nested rpc", "remote and RRef", "parameter server",
          "all done"]


def test_rpc_two_ranks():
    cmd = [sys.executable, "-m", "cthtorch.distributed.run", "--standalone", "--nproc_per_node=2",
           os.path.join(ROOT, "tests", "programs", "rpc_checks.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    lines = r.stdout.splitlines()
    for name in CHECKS:
        assert "ok " + name in lines, (name, r.stdout[-3000:])


def test_rpc_before_init_matches_torch():
    trpc = oracle.require_torch().distributed.rpc
    oracle.raises_like(lambda: rpc.rpc_sync("x", abs, args=(1,)), lambda: trpc.rpc_sync("x", abs, args=(1,)))
    oracle.raises_like(lambda: rpc.get_worker_info(), lambda: trpc.get_worker_info())
    oracle.raises_like(lambda: rpc.shutdown(), lambda: trpc.shutdown())
