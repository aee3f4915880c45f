"""torch.distributed on MPI, run for real: 2-rank jobs on loopback, started by
the launcher (python -m cthtorch.distributed.run), by mpiexec and by
multiprocessing.spawn, compared with PyTorch's gloo backend where torch can
run the same program. Each job is a subprocess with a timeout; each test
checks that no rank outlives its job.
"""
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import cthtorch
import cthtorch.distributed as dist
from oracle import require_torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "programs")
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONWARNINGS="ignore")

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="mpi4py/MPI is not installed")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _free_ports(n):
    """n distinct free ports (as strings), all held until each is known, so
    none repeats."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [str(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _launch(args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "cthtorch.distributed.run", "--nproc_per_node=2", "--standalone"]
                          + args, env=ENV, capture_output=True, text=True, timeout=timeout, cwd=ROOT, **kw)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:   # a zombie is gone for our purposes
        return f.read().split(")")[-1].split()[0] != "Z"


def _assert_no_rank_left(piddir):
    pids = [int(open(os.path.join(piddir, f)).read()) for f in os.listdir(piddir) if f.endswith(".pid")]
    assert pids, "no rank started"
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, "ranks outlived the job: %s" % left


# ---------------------------------------------------------------- collectives vs gloo

def test_every_collective_matches_torch_gloo(tmp_path):
    """tests/programs/dist_collectives.py on 2 ranks under our launcher and
    under torch's spawn+gloo: the same record (values, dtypes, shapes,
    errors) for every check."""
    torch = require_torch()
    prog = os.path.join(PROGRAMS, "dist_collectives.py")
    ref = subprocess.Popen([sys.executable, prog, "torch", str(tmp_path), str(_free_port())], env=ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ours = _launch([prog, "cthtorch", str(tmp_path)])
    ref_out = ref.communicate(timeout=180)[0]
    assert ours.returncode == 0, ours.stdout + ours.stderr
    assert ref.returncode == 0, ref_out
    del torch
    for rank in (0, 1):
        mine = json.load(open(tmp_path / ("cthtorch-%d.json" % rank)))
        theirs = dict(json.load(open(tmp_path / ("torch-%d.json" % rank))))
        ext = {k: v for k, v in mine if k.startswith("ext ")}
        mine = dict((k, v) for k, v in mine if not k.startswith("ext "))
        assert len(theirs) > 100
        for name, value in theirs.items():
            assert mine.get(name) == value, (rank, name, mine.get(name), value)
        _check_extensions(rank, ext, mine)


def _check_extensions(rank, ext, mine):
    """What only cthtorch runs (gloo cannot, or reports the error at a later
    wait): PyTorch's messages and the values a correct reduction gives."""
    assert ext["ext avg int"] == "RuntimeError: result type Float can't be cast to the desired output type Int"
    assert ext["ext band float"] == "RuntimeError: Cannot use ReduceOp.BAND with non-integral dtype"
    assert ext["ext int16 sum"] == ["torch.int16", [4], [4, 4, 4, 10]]
    assert ext["ext fp16 rounding"] == ["torch.float16", [2], [2048.0, 0.199951171875]]
    assert ext["ext bf16 avg"] == ["torch.bfloat16", [2], [1.5, 4.5]]
    assert ext["ext strided recv"] == (["torch.float32", [2, 3], [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]] if rank == 0
                                       else None)
    assert ext["ext async overlap"] == [3.0, 3.0, 256.0, ["torch.float32", [2], [20.0, 20.0]]]
    assert ext["ext reduce_scatter_tensor into strided"] == (
        ["torch.float32", [2, 2], [[0.0, 6.0], [3.0, 9.0]] if rank == 0 else [[12.0, 18.0], [15.0, 21.0]]])
    # a strided view is broadcast element by element (gloo sends it as if it were contiguous)
    assert mine["broadcast bf16 strided"] == ["torch.bfloat16", [2, 4], [[0.0, 1.0 + 10 * rank, 2.0, 3.0 + 10 * rank],
                                                                         [4.0, 5.0 + 10 * rank, 6.0, 7.0 + 10 * rank]]]
    assert ext["ext monitored_barrier timeout"] == (
        "DistBackendError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 500 ms" if rank == 0 else
        "DistBackendError: [Rank 1]: monitoredBarrier timed out after 500 ms waiting for rank 0")


@pytest.mark.parametrize("ranks", [2, 3])
def test_same_node_all_reduce_matches_mpi(ranks):
    """The shared-memory all-reduce gives MPI's Allreduce result bit for bit
    (and the rank-order reduction on 2 ranks) over its dtypes, ops and block
    boundaries, copying or in place in node buffers (DDP's buckets, whose
    gradients must equal one process's), and actually runs for every one."""
    r = subprocess.run([sys.executable, "-m", "cthtorch.distributed.run", "--nproc_per_node=%d" % ranks, "--standalone",
                        os.path.join(PROGRAMS, "dist_node_allreduce.py")],
                       env=ENV, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    assert "ok node all_reduce" in r.stdout.splitlines(), r.stdout[-3000:]
    assert "ok windows freed" in r.stdout.splitlines(), r.stdout[-3000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_groups_and_ddp_models_made_and_destroyed_in_a_loop_do_not_pile_up_shared_memory():
    """destroy_process_group lets go of the group's node shared memory (even
    with a DDP model still alive), a deleted DDP model of its buckets' at
    once, without waiting for the peers; six rounds end with no shared
    mapping, no file left in /dev/shm and the same resident memory."""
    r = subprocess.run([sys.executable, "-m", "cthtorch.distributed.run", "--nproc_per_node=2", "--standalone",
                        os.path.join(PROGRAMS, "dist_group_lifecycle.py")],
                       env=ENV, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    for rank in (0, 1):
        assert any(line.startswith("rank %d ok group lifecycle" % rank) for line in r.stdout.splitlines()), r.stdout
    assert "UCX  WARN" not in r.stderr, r.stderr[-3000:]   # nothing MPI-owned is left at MPI_Finalize


# ---------------------------------------------------------------- launchers

def _env_records(piddir):
    return [json.load(open(os.path.join(piddir, "%d.json" % r))) for r in (0, 1)]


def test_launcher_sets_torchrun_env_and_launch_passes_local_rank(tmp_path):
    prog = os.path.join(PROGRAMS, "dist_faults.py")
    r = _launch([prog, "env", str(tmp_path), "extra"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = _env_records(tmp_path)
    assert [d["rank"] for d in lines] == [0, 1]
    for d in lines:
        e = d["env"]
        assert e["RANK"] == e["LOCAL_RANK"] == str(d["rank"])
        assert e["WORLD_SIZE"] == e["LOCAL_WORLD_SIZE"] == "2"
        assert e["MASTER_ADDR"] == "127.0.0.1" and int(e["MASTER_PORT"]) > 0
        assert d["argv"] == ["extra"] and d["sum"] == [3.0, 3.0] and d["elastic"] is True
    _assert_no_rank_left(tmp_path)
    # the deprecated launcher hands the local rank to the script as an argument
    r = subprocess.run([sys.executable, "-m", "cthtorch.distributed.launch", "--nproc_per_node=2", "--standalone",
                        prog, "env", str(tmp_path)], env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    argvs = [d["argv"] for d in _env_records(tmp_path)]
    assert argvs == [["--local-rank=0"], ["--local-rank=1"]]


def test_plain_mpiexec_takes_ranks_from_mpi(tmp_path):
    """mpiexec -n 2 python script.py: no RANK/MASTER_ADDR, the MPI job says
    who is who and rank 0 hosts the store on a free port."""
    from cthtorch.distributed import _mpiexec
    env = _mpiexec.clean_env(ENV)
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    r = subprocess.run([_mpiexec.mpiexec_path(), "-n", "2", sys.executable, os.path.join(PROGRAMS, "dist_faults.py"),
                        "env", str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = [(d["rank"], d["sum"]) for d in _env_records(tmp_path)]
    assert got == [(0, [3.0, 3.0]), (1, [3.0, 3.0])]
    _assert_no_rank_left(tmp_path)


def test_one_process_groups_inside_a_larger_job(tmp_path):
    """Each of 2 ranks makes its own 1-process default group (rank 0 of
    world_size 1, file:// rendezvous): a group over part of the MPI job."""
    prog = tmp_path / "one.py"
    prog.write_text(
        "import os, sys\n"
        "import cthtorch as torch, cthtorch.distributed as dist\n"
        "r = int(os.environ['RANK'])\n"
        "dist.init_process_group('gloo', rank=0, world_size=1, init_method='file://%s' % os.path.join(sys.argv[1], "
        "'store%d' % r))\n"
        "t = torch.ones(3) * (r + 1)\n"
        "dist.all_reduce(t)\n"
        "assert t.tolist() == [r + 1.0] * 3 and dist.get_world_size() == 1 and dist.get_rank() == 0\n"
        "dist.destroy_process_group()\n"
        "open(os.path.join(sys.argv[1], 'ok%d' % r), 'w').close()\n")
    r = _launch([str(prog), str(tmp_path)])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert os.path.exists(tmp_path / "ok0") and os.path.exists(tmp_path / "ok1"), r.stdout[-3000:]


@pytest.mark.parametrize("mode, says", [
    ("raise", "rank 1 failed with ValueError: rank 1 gives up"),
    ("kill", "rank 1 was killed by signal SIGKILL"),
    ("hang", "timed out after 3000 ms (ranks [1] had not joined it)"),
])
def test_a_failed_rank_is_named_and_the_job_ends(tmp_path, mode, says):
    """Rank 1 raises, dies, or never joins: rank 0's all_reduce fails with an
    error naming it (not a hang), the launcher exits non-zero, and no rank is
    left running."""
    t0 = time.monotonic()
    r = _launch(["--fail_grace=1", os.path.join(PROGRAMS, "dist_faults.py"), mode, str(tmp_path)], timeout=90)
    assert r.returncode != 0
    assert "DistBackendError: [Rank 0] all_reduce (operation 2 on the group of ranks [0, 1]) failed: " + says \
        in r.stderr, r.stderr
    assert "cthtorch.distributed.run: the job failed" in r.stderr
    if mode != "hang":
        assert "rank 1 (local rank 1) failed first" in r.stderr
    assert time.monotonic() - t0 < 60
    _assert_no_rank_left(tmp_path)


def test_a_rank_killed_while_a_peer_all_reduces_ddps_last_bucket_on_its_own_thread(tmp_path):
    """DDP's last bucket is all-reduced on the thread that runs backward, not
    on the communication thread whose waits watch the peers: killed in its
    backward, rank 1 must still be named by rank 0's error, not hang it."""
    t0 = time.monotonic()
    r = _launch(["--fail_grace=1", os.path.join(PROGRAMS, "dist_faults.py"), "ddp_kill", str(tmp_path)], timeout=90)
    assert r.returncode != 0
    assert "DistBackendError: [Rank 0] all_reduce (operation" in r.stderr, r.stderr
    assert "failed: rank 1 was killed by signal SIGKILL" in r.stderr, r.stderr
    assert "rank 1 (local rank 1) failed first" in r.stderr
    assert time.monotonic() - t0 < 60
    _assert_no_rank_left(tmp_path)


def test_spawn_runs_one_mpi_job_with_torch_error_semantics():
    r = subprocess.run([sys.executable, os.path.join(PROGRAMS, "dist_spawn.py")] + _free_ports(4), env=ENV,
                       capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {d["mode"]: d for d in (json.loads(line[6:]) for line in r.stdout.splitlines() if line.startswith("SPAWN "))}
    assert got["ok"] == {"mode": "ok", "returned": None, "shared": [9.0, 9.0]}
    e = got["raise"]
    assert e["type"] == "ProcessRaisedException" and e["index"] == 1 and e["pid_ok"]
    assert e["msg"].startswith("\n\n-- Process 1 terminated with the following error:\nTraceback")
    assert e["msg"].rstrip().endswith("ValueError: child 1 fails")
    assert got["exit"]["type"] == "ProcessExitedException"
    assert (got["exit"]["msg"], got["exit"]["index"], got["exit"]["exit_code"]) == \
        ("process 1 terminated with exit code 4", 1, 4)
    assert (got["kill"]["msg"], got["kill"]["exit_code"]) == ("process 1 terminated with signal SIGKILL", -9)


def test_single_process_without_launcher():
    """Not started by MPI: world_size 1 works (MPI singleton); asking for more
    ranks, or NCCL, raises a clear error."""
    code = r"""
import datetime, cthtorch as torch, cthtorch.distributed as dist
for kw in (dict(backend="nccl"), dict(backend="gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=2)):
    try:
        dist.init_process_group(**kw)
    except RuntimeError as e:
        print("ERR", str(e).split(",")[0])
dist.init_process_group("mpi", init_method="tcp://127.0.0.1:%d" % PORT, rank=0, world_size=1)
t = torch.arange(3.)
dist.all_reduce(t, op=dist.ReduceOp.AVG)
objs = [None]
dist.all_gather_object(objs, {"a": 1})
print("OK", dist.get_rank(), dist.get_world_size(), dist.get_backend(), t.tolist(), objs)
dist.destroy_process_group()
print("INIT", dist.is_initialized())
""".replace("PORT", str(_free_port()))
    from cthtorch.distributed import _mpiexec
    r = subprocess.run([sys.executable, "-c", code], env=_mpiexec.clean_env(ENV), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "ERR ProcessGroupNCCL is only supported with GPUs",
        "ERR cthtorch.distributed: world_size=2",
        "OK 0 1 mpi [0.0, 1.0, 2.0] [{'a': 1}]",
        "INIT False"]


# ---------------------------------------------------------------- in-process API

def test_api_without_a_group():
    torch = require_torch()
    import torch.distributed as tdist
    for name in ("get_rank", "get_world_size", "barrier"):
        with pytest.raises(ValueError) as ours:
            getattr(dist, name)()
        with pytest.raises(ValueError) as theirs:
            getattr(tdist, name)()
        assert str(ours.value) == str(theirs.value)
    assert dist.is_available() and not dist.is_initialized() and not dist.is_nccl_available()
    assert dist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo" and dist.Backend.MPI == "mpi"
    assert str(dist.ReduceOp.SUM) == str(tdist.ReduceOp.SUM) and repr(dist.ReduceOp.AVG) == repr(tdist.ReduceOp.AVG)
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        assert int(getattr(dist.ReduceOp, op)) == int(getattr(tdist.ReduceOp, op))
    del torch


def _store_ops(store):
    out = [store.set("a", "1"), store.get("a"), store.add("c", 3), store.add("c", -1), store.get("c"),
           store.compare_set("a", "1", "2"), store.compare_set("a", "9", "3"), store.compare_set("new", "", "x"),
           store.compare_set("absent", "q", "3"), store.check(["a", "c"]), store.check(["zz"]),
           store.delete_key("a"), store.delete_key("a"), store.get("new")]
    store.set("b", b"\x00\xff")
    out.append(store.get("b"))
    store.wait(["b", "c"])
    store.set_timeout(datetime.timedelta(seconds=0.2))
    with pytest.raises(RuntimeError) as e:
        store.get("never")
    out.append("%s: %s" % (type(e.value).__name__, e.value))
    with pytest.raises(RuntimeError) as e:
        store.wait(["never"], datetime.timedelta(seconds=0.1))
    out.append("%s: %s" % (type(e.value).__name__, e.value))
    return out


def test_stores_behave_as_torch_stores(tmp_path):
    torch = require_torch()
    import torch.distributed as tdist
    port = _free_port()
    pairs = [(dist.HashStore(), tdist.HashStore()),
             (dist.FileStore(str(tmp_path / "ours")), tdist.FileStore(str(tmp_path / "theirs"))),
             (dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False),
              tdist.TCPStore("127.0.0.1", _free_port(), is_master=True, wait_for_workers=False))]
    for ours, theirs in pairs:
        assert _store_ops(ours) == _store_ops(theirs), type(ours)
    # a second client of the TCP store sees the master's keys; PrefixStore namespaces them
    client = dist.TCPStore("127.0.0.1", port, is_master=False)
    assert client.get("c") == b"2" and client.add("c", 5) == 7
    p = dist.PrefixStore("job", client)
    p.set("k", "v")
    assert p.get("k") == b"v" and client.get("job/k") == b"v"
    del torch


def test_futures():
    from cthtorch.futures import Future, collect_all, wait_all
    f = Future()
    chained = f.then(lambda fut: fut.value() * 2)
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    assert not f.done()
    f.set_result(21)
    assert f.done() and f.wait() == 21 and chained.wait() == 42 and seen == [21]
    with pytest.raises(RuntimeError):
        f.set_result(1)
    bad = Future()
    after = bad.then(lambda fut: fut.value())
    bad.set_exception(ValueError("no"))
    with pytest.raises(ValueError):
        after.wait()
    g = Future()
    both = collect_all([f, g])
    g.set_result("x")
    assert [x.value() for x in both.wait()] == [21, "x"] and wait_all([f, g]) == [21, "x"]
    assert cthtorch.futures.Future is Future


def test_get_default_backend_for_device_as_torch():
    torch = require_torch()
    import torch.distributed as tdist
    for dev in ("cpu", "cuda", "cuda:1", "xpu", "xpu:1", "mps"):
        assert dist.get_default_backend_for_device(dev) == tdist.get_default_backend_for_device(dev)
        assert dist.get_default_backend_for_device(cthtorch.device(dev)) == \
            tdist.get_default_backend_for_device(torch.device(dev))
    assert dist.get_default_backend_for_device(cthtorch.device("cpu")) == "gloo"
    assert dist.get_default_backend_for_device("xpu") == "xccl"
    assert dist.Backend.default_device_backend_map == {k: v for k, v in tdist.Backend.default_device_backend_map.items()
                                                       if k in ("cpu", "cuda", "xpu", "mps")}
    # torch's answers for devices without a default backend come from a fresh process: once torch has run a
    # meta op it registers a 'fake' backend for several of them, so an earlier test would change them here
    devs = ("meta", "hpu", "xla", "mtia", "privateuseone", "gpu", None)
    probe = ("import json, torch.distributed as d\nout = []\nfor dev in %r:\n    try:\n"
             "        out.append(['', d.get_default_backend_for_device(dev)])\n    except Exception as e:\n"
             "        out.append([type(e).__name__, str(e)])\nprint(json.dumps(out))" % (devs,))
    want = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                                     env=ENV, timeout=120).stdout)
    for dev, (etype, emsg) in zip(devs, want):
        assert etype, (dev, emsg)   # torch raises for each of these
        with pytest.raises(Exception) as ec:
            dist.get_default_backend_for_device(dev)
        assert type(ec.value).__name__ == etype
        if dev is not None:
            assert str(ec.value) == emsg
    del torch


def test_elastic_record_writes_torchs_error_file(tmp_path):
    """@record (torch.distributed.elastic.multiprocessing.errors): an error
    escaping the entry point goes to TORCHELASTIC_ERROR_FILE in torch's JSON
    layout and is re-raised; SystemExit(0) returns None. In a subprocess:
    the handler enables faulthandler, as torch's does."""
    err = tmp_path / "error.json"
    code = """
from cthtorch.distributed.elastic.multiprocessing.errors import record, ErrorHandler, get_error_handler
@record
def main(x):
    if x == 1:
        raise ValueError("rank failed")
    if x == 2:
        raise SystemExit(0)
    return x
assert main(0) == 0 and main(2) is None and main.__name__ == "main"
assert isinstance(get_error_handler(), ErrorHandler)
main(1)
"""
    r = subprocess.run([sys.executable, "-c", code], env=dict(ENV, TORCHELASTIC_ERROR_FILE=str(err)),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "ValueError: rank failed" in r.stderr, r.stderr
    data = json.loads(err.read_text())
    assert data["message"]["message"] == "ValueError: rank failed"
    extra = data["message"]["extraInfo"]
    assert "in main\nValueError: rank failed" in extra["py_callstack"] and extra["timestamp"].isdigit()


def test_zero_redundancy_optimizer_two_ranks_step_like_a_plain_optimizer(tmp_path):
    """ZeroRedundancyOptimizer (llm.c's train_gpt2.py --zero_stage 1): each of 2 ranks keeps AdamW state for
    its share of the parameters only, and after the owner's step and broadcast every rank holds the
    parameters a plain AdamW over all of them gives (a scheduler's lr change reaches the shards)"""
    prog = tmp_path / "zero.py"
    prog.write_text(
        "import os, sys\n"
        "import cthtorch as torch, cthtorch.distributed as dist\n"
        "from cthtorch.distributed.optim import ZeroRedundancyOptimizer\n"
        "dist.init_process_group('gloo')\n"
        "r = dist.get_rank()\n"
        "def model():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))\n"
        "a, b = model(), model()\n"
        "za = ZeroRedundancyOptimizer(a[0].parameters(), optimizer_class=torch.optim.AdamW, lr=0.1, weight_decay=0.1)\n"
        "za.add_param_group({'params': a[2].parameters()})\n"
        "ob = torch.optim.AdamW(b.parameters(), lr=0.1, weight_decay=0.1)\n"
        "sa, sb = (torch.optim.lr_scheduler.StepLR(o, 1, 0.5) for o in (za, ob))\n"
        "x = torch.randn(5, 4)\n"
        "for _ in range(3):\n"
        "    for m, o, s in ((a, za, sa), (b, ob, sb)):\n"
        "        o.zero_grad(); m(x).pow(2).sum().backward(); o.step(); s.step()\n"
        "owned = sum(p.numel() for g in za.optim.param_groups for p in g['params'])\n"
        "# torch's partition keeps one running total per rank over both groups: 32|8 then 24 to rank 1, 3 to rank 0\n"
        "assert owned == (35, 32)[r], owned\n"
        "assert len(za.optim.state) == 2 and za.param_groups[0]['lr'] == 0.1 * 0.5 ** 3\n"
        "# a group added after steps goes to the lighter rank; the local optimizer keeps its moments\n"
        "moments = {id(s['exp_avg']) for s in za.optim.state.values()}\n"
        "za.add_param_group({'params': [torch.nn.Parameter(torch.ones(5))]})\n"
        "assert {id(s['exp_avg']) for s in za.optim.state.values()} == moments\n"
        "assert len(za.optim.param_groups) == 3, za.optim.param_groups   # empty local groups too, as torch's\n"
        "try:\n"
        "    za.state_dict()\n"
        "    raise AssertionError('state_dict before consolidate_state_dict')\n"
        "except RuntimeError as e:\n"
        "    assert 'consolidate_state_dict(to=%d)' % r in str(e), e\n"
        "for p, q in zip(a.parameters(), b.parameters()):\n"
        "    assert torch.allclose(p, q, atol=1e-6), (r, p, q)\n"
        "dist.destroy_process_group()\n"
        "open(os.path.join(sys.argv[1], 'ok%d' % r), 'w').close()\n")
    r = _launch([str(prog), str(tmp_path)])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert os.path.exists(tmp_path / "ok0") and os.path.exists(tmp_path / "ok1"), r.stdout[-3000:]
