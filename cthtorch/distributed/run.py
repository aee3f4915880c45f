"""torchrun for cthtorch: `python -m cthtorch.distributed.run --nproc_per_node=N script.py args`.

It takes torchrun's flags, hosts the rendezvous store itself (as torchrun's
agent does: ranks connect to it, TORCHELASTIC_USE_AGENT_STORE=True), and
starts the N ranks as one MPI job through mpiexec; each rank gets RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT before its
script runs. It exits with the job's status and leaves no process behind:
once a rank has failed, the others get a grace period to report it (their
watchdog names the failed rank), then the job is killed.

Several machines: start the ranks with `mpiexec -f hostfile -n N python
script.py` (see the README); --nnodes other than 1 is refused here.
"""
import argparse
import os
import pickle
import signal
import socket
import sys
import time
import uuid

from cthtorch.distributed import _mpiexec, _watchdog
from cthtorch.distributed._stores import TCPStore

__all__ = ["get_args_parser", "parse_args", "run", "main"]


def _flag(p, name, **kw):
    """torchrun accepts --a_b and --a-b alike."""
    names = ["--" + name] + (["--" + name.replace("_", "-")] if "_" in name else [])
    p.add_argument(*names, dest=name, **kw)


def get_args_parser():
    p = argparse.ArgumentParser(description="Torch Distributed Elastic Training Launcher (cthtorch, on MPI)")
    _flag(p, "nnodes", type=str, default="1:1")
    _flag(p, "nproc_per_node", type=str, default="1")
    _flag(p, "rdzv_backend", type=str, default="static")
    _flag(p, "rdzv_endpoint", type=str, default="")
    _flag(p, "rdzv_id", type=str, default="none")
    _flag(p, "rdzv_conf", type=str, default="")
    p.add_argument("--standalone", action="store_true")
    _flag(p, "max_restarts", type=int, default=0)
    _flag(p, "monitor_interval", type=float, default=0.1)
    _flag(p, "start_method", type=str, default="spawn", choices=["spawn", "fork", "forkserver"])
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true")
    _flag(p, "no_python", action="store_true")
    _flag(p, "run_path", action="store_true")
    _flag(p, "log_dir", type=str, default=None)
    p.add_argument("-r", "--redirects", type=str, default="0")
    p.add_argument("-t", "--tee", type=str, default="0")
    _flag(p, "local_ranks_filter", type=str, default="")
    _flag(p, "node_rank", type=int, default=0)
    _flag(p, "master_addr", type=str, default="127.0.0.1")
    _flag(p, "master_port", type=int, default=29500)
    _flag(p, "local_addr", type=str, default=None)
    _flag(p, "logs_specs", type=str, default=None)
    _flag(p, "fail_grace", type=float, default=10.0,
          help="seconds the other ranks get to report a failed rank before the job is killed (cthtorch)")
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nprocs(spec):
    if spec in ("auto", "cpu"):
        return os.cpu_count() or 1
    if spec == "gpu":
        raise ValueError("--nproc_per_node=gpu: no GPU devices are available to cthtorch.distributed")
    return int(spec)


def _free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class _JobWatch:
    """The ranks' heartbeats as the launcher sees them in its store: who
    failed, and whose beat stopped first (a rank killed by a signal says
    nothing; MPI then ends the others, so the launcher names it)."""

    def __init__(self, store, nprocs):
        self.store, self.nprocs = store, nprocs
        self.seen = {}        # rank -> (state, beat, wall time the beat last changed)
        self.first_failure = None

    def poll(self):
        keys = ["default_pg/cth/hb/%d" % r for r in range(self.nprocs)]
        try:
            if not self.store.check(keys):
                return
            vals = self.store.multi_get(keys)
        except Exception:
            return
        now = time.time()
        new = []
        for r, v in enumerate(vals):
            state, beat, _ = pickle.loads(v)
            old = self.seen.get(r)
            self.seen[r] = (state, beat, now if old is None or old[1] != beat or old[0] != state else old[2])
            if state.startswith(("failed: ", "killed: ")):
                why = state.replace("killed: ", "killed ", 1).replace("failed: ", "", 1)
                # a rank's own error before a peer's report of it ("[Rank 0] ... rank 1 failed ...")
                new.append((why.startswith("[Rank "), r, why))
        if new and self.first_failure is None:
            self.first_failure = min(new)[1:]

    def failed(self):
        return self.first_failure is not None

    def summary(self, rc):
        """Why the job failed, naming the first rank that failed or died."""
        if self.first_failure is not None:
            r, why = self.first_failure
            return "rank %d (local rank %d) failed first: %s" % (r, r, why)
        silent = [(t, r) for r, (state, beat, t) in self.seen.items() if state == "alive"]
        if silent:
            t, r = min(silent)
            return ("rank %d (local rank %d) died first: its heartbeat stopped at %s without an error (killed by a "
                    "signal, or os._exit)" % (r, r, time.strftime("%H:%M:%S", time.localtime(t))))
        return "a rank exited with status %d before joining the process group" % rc


def run(args):
    nnodes = args.nnodes.split(":")
    if nnodes[0] != "1" or nnodes[-1] != "1":
        raise NotImplementedError("cthtorch.distributed.run starts the ranks of one machine (--nnodes=1); on several "
                                  "machines start them all with `mpiexec -f hostfile -n N python script.py` (README)")
    nprocs = _nprocs(args.nproc_per_node)
    if nprocs < 1:
        raise ValueError("--nproc_per_node must be positive, got %d" % nprocs)
    addr = args.master_addr
    port = args.master_port
    if args.standalone:
        addr, port = "127.0.0.1", 0
    elif args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = (host or args.rdzv_endpoint), (int(p) if p.isdigit() else 29400)
    if port == 0:
        port = _free_port(addr)
    store = TCPStore(addr, port, is_master=True, wait_for_workers=False)   # the agent's store
    run_id = args.rdzv_id if args.rdzv_id != "none" else str(uuid.uuid4())

    env = dict(os.environ)
    env.update(MASTER_ADDR=addr, MASTER_PORT=str(store.port), TORCHELASTIC_USE_AGENT_STORE="True",
               TORCHELASTIC_RUN_ID=run_id, TORCHELASTIC_RESTART_COUNT="0",
               TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts), GROUP_RANK=str(args.node_rank),
               GROUP_WORLD_SIZE="1", ROLE_NAME=args.role, TORCH_NCCL_ASYNC_ERROR_HANDLING="1")
    if nprocs > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"   # as torchrun: N ranks must not each start a thread per core
    mode = ["--module"] if args.module else ["--no-python"] if args.no_python else []
    if getattr(args, "local_rank_arg", False):
        mode.append("--local-rank-arg")
    if args.module and args.no_python:
        raise ValueError("Don't use both the '--no-python' flag and the '--module' flag at the same time.")
    argv = [sys.executable, _mpiexec.BOOTSTRAP] + mode + \
           [args.training_script] + list(args.training_script_args)
    proc = _mpiexec.start(nprocs, argv, env)

    def on_signal(signum, frame):
        _mpiexec.terminate(proc)
        sys.exit(128 + signum)
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        watch = _JobWatch(store, nprocs)
        failed_at = None
        while proc.poll() is None:
            time.sleep(_watchdog.INTERVAL)
            watch.poll()
            if failed_at is None and watch.failed():
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > args.fail_grace:
                sys.stderr.write("cthtorch.distributed.run: a rank failed and the job did not end within %g s "
                                 "(--fail_grace); killing it\n" % args.fail_grace)
                _mpiexec.terminate(proc)
                break
        rc = proc.returncode
        _mpiexec.terminate(proc)   # nothing of the job outlives it
        if rc != 0:
            watch.poll()
            sys.stderr.write("cthtorch.distributed.run: the job failed (exit status %d): %s\n" % (rc, watch.summary(rc)))
        return rc if rc else 0
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(args=None):
    args = parse_args(sys.argv[1:] if args is None else args)
    rc = run(args)
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
