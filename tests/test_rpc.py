"""torch.distributed.rpc on 2 ranks: one MPI job (tests/programs/rpc_checks.py)
runs calls, remote errors, nested calls, RRefs and a parameter-server
training loop; the errors before init_rpc are torch's."""
import os
import time

import cthtorch.distributed.rpc as rpc
import oracle
from test_ddp import launch

CHECKS = ["rpc_sync and rpc_async", "remote exception", "nested rpc", "remote and RRef", "parameter server",
          "timeouts", "default timeout from the backend options", "all done"]


def test_rpc_two_ranks():
    r = launch(os.path.join("tests", "programs", "rpc_checks.py"), timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    lines = r.stdout.splitlines()
    for name in CHECKS:
        assert "ok " + name in lines, (name, r.stdout[-3000:])


def test_rpc_before_init_matches_torch():
    trpc = oracle.require_torch().distributed.rpc
    oracle.raises_like(lambda: rpc.rpc_sync("x", abs, args=(1,)), lambda: trpc.rpc_sync("x", abs, args=(1,)))
    oracle.raises_like(lambda: rpc.get_worker_info(), lambda: trpc.get_worker_info())
    oracle.raises_like(lambda: rpc.shutdown(), lambda: trpc.shutdown())


def test_a_worker_raising_ends_the_rpc_job_at_once():
    start = time.monotonic()
    r = launch(os.path.join("tests", "programs", "rpc_faults.py"), timeout=120)
    took = time.monotonic() - start
    assert r.returncode != 0, r.stdout[-3000:]
    out = r.stdout + r.stderr
    assert "ValueError: trainer broke" in out, out[-3000:]
    assert "RPC worker trainer (rank 1) failed: ValueError: trainer broke" in out, out[-3000:]
    assert took < 60, took   # not the launcher's timeout


def test_shutdown_timeout_raises_torchs_error_and_the_job_still_ends_cleanly():
    r = launch(os.path.join("tests", "programs", "rpc_shutdown_timeout.py"), timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    lines = r.stdout.splitlines()
    assert any(line.startswith("ok shutdown timed out after") for line in lines), r.stdout
    assert "ok rpc is down" in lines and "ok trainer shut down" in lines, r.stdout
