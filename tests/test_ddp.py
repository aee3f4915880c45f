"""DistributedDataParallel on 2 ranks: one MPI job (tests/programs/
ddp_checks.py, started by the torchrun-style launcher) runs every check and
prints "ok <check>" from rank 0 (a failure on either rank fails the job)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = ["construction errors", "buckets", "no_sync", "find_unused_parameters", "gradient_as_bucket_view",
          "static_graph", "comm hooks", "join", "node buckets", "broadcast_buffers", "sampler", "unused parameter error"]


def launch(script, *args, timeout=240):
    """Runs script on 2 local ranks (loopback, a free port); returns the job."""
    cmd = [sys.executable, "-m", "cthtorch.distributed.run", "--standalone", "--nproc_per_node=2",
           os.path.join(ROOT, script)] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_ddp_two_ranks():
    r = launch(os.path.join("tests", "programs", "ddp_checks.py"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    lines = r.stdout.splitlines()
    for name in CHECKS:
        assert any(line.startswith("ok " + name) for line in lines), (name, r.stdout[-3000:])
    assert "ok all done" in lines


def test_bucket_assignment_small_at_both_ends():
    """Default caps: a small first bucket (the last layers' gradients, which
    arrive first) and a small last bucket holding the first-defined module
    whole (its gradients arrive last, all at once), so the all-reduce after
    backward is only that module's; an explicit cap keeps plain reverse
    order."""
    import cthtorch
    from cthtorch.distributed._reducer import compute_bucket_assignment
    sizes = (1024, 2048, 1024, 768, 10)
    params = [p for a, b in zip(sizes, sizes[1:]) for p in cthtorch.nn.Linear(a, b).parameters()]
    owners = [str(i // 2) for i in range(len(params))]
    mb = 1 << 20
    assert compute_bucket_assignment(params, 25 * mb, mb, owners) == [[7, 6, 5, 4], [3, 2], [1, 0]]
    # without module keys the first-defined bucket stops at the cap (torch's first bucket: [0])
    assert compute_bucket_assignment(params, 25 * mb, mb) == [[7, 6, 5, 4], [3, 2, 1], [0]]
    assert compute_bucket_assignment(params, 25 * mb, 25 * mb, owners) == [list(range(7, -1, -1))]
    tiny = [p for a, b in ((3, 4), (4, 5)) for p in cthtorch.nn.Linear(a, b).parameters()]
    assert compute_bucket_assignment(tiny, 25 * mb, mb, ["0", "0", "1", "1"]) == [[3, 2, 1, 0]]
