"""torch.distributed.autograd and DistributedOptimizer over RPC: a 3-rank job
(tests/programs/dist_autograd_checks.py) compares distributed gradients with
one process (a model split across workers, nested calls, three hops,
remote/to_here, RemoteModule, a parameter server shared by 2 trainers, the optimizer);
pytorch/examples' parameter server (reduced copy) trains under the launcher;
the errors before init_rpc are torch's."""
import os
import subprocess
import sys

import cthtorch.distributed.autograd as dist_autograd
import oracle
from test_ddp import ROOT

CHECKS = ["context ids", "model split across 2 workers", "nested rpc back to the caller", "three hops",
          "remote and to_here", "accumulation", "distributed optimizer", "RemoteModule", "errors", "all done"]


def test_dist_autograd_three_ranks():
    cmd = [sys.executable, "-m", "cthtorch.distributed.run", "--standalone", "--nproc_per_node=3",
           os.path.join(ROOT, "tests", "programs", "dist_autograd_checks.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    # substrings, not lines: the launcher interleaves the ranks' output, so two ranks' lines may meet
    for name in CHECKS:
        assert "ok " + name in r.stdout, (name, r.stdout[-3000:])
    for rank in (1, 2):
        assert "ok parameter server with 2 trainers: rank %d" % rank in r.stdout, r.stdout[-3000:]


def test_pytorch_examples_rpc_parameter_server():
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "cthtorch.distributed.run", "--standalone", "--nproc_per_node=2",
           os.path.join(ROOT, "tests", "programs", "rpc_parameter_server.py"), "--world_size=2", "--batches=2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    assert "Rank 1 training batch 0 loss" in r.stdout and "Training complete!" in r.stdout, r.stdout
    assert "Accuracy " in r.stdout and "RPC shutdown on parameter server." in r.stdout, r.stdout


def test_dist_autograd_before_init_matches_torch():
    torch = oracle.require_torch()
    tda = torch.distributed.autograd
    oracle.raises_like(lambda: dist_autograd._current_context(), lambda: tda._current_context())
    oracle.raises_like(lambda: dist_autograd._retrieve_context(5), lambda: tda._retrieve_context(5))
    oracle.raises_like(lambda: dist_autograd.get_gradients(5), lambda: tda.get_gradients(5))
    oracle.raises_like(lambda: dist_autograd.context().__enter__(), lambda: tda.context().__enter__())


def test_pytorch_examples_ddp_rpc_group_over_part_of_the_job():
    """ddp_rpc: a 4-process spawn job, init_process_group(world_size=2) on the 2 trainers, RPC on all 4."""
    import socket
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(str(s.getsockname()[1]))
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, os.path.join(ROOT, "tests", "programs", "ddp_rpc.py")] + ports
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    for rank in (0, 1):
        for what in ("2-rank group in a 4-process job", "gradients equal one process", "replicas equal after training"):
            assert "ok %s: trainer %d" % (what, rank) in r.stdout, (what, rank, r.stdout[-3000:])
    assert r.stdout.count("Training done for epoch 1") == 2 and "completed successfully" in r.stdout, r.stdout
