"""What run.py and multiprocessing.spawn start under mpiexec, once per rank.

It sets torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, ...) from the
MPI launcher's, then runs the rank's program (a script, a module, a program,
or a spawn child) as its own child process and waits for it. Standing
between mpiexec and the rank lets a death by signal be seen: mpiexec would
kill the whole job at once (so no peer could say which rank died), whereas
this parent records "rank r was killed by SIGKILL" in the job's store, where
the peers' watchdog reads it, and exits with 128+signal.

Run by path (python .../_rank_bootstrap.py), so it starts without importing
cthtorch.
"""
import importlib.util
import os
import pickle
import signal
import subprocess
import sys


def launcher_rank_env():
    """(rank, world size, local rank, local world size) from the MPI
    launcher's environment (MPICH/hydra, Open MPI, Slurm); None outside one."""
    e = os.environ
    for r, s, lr, ls in (("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
                         ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                          "OMPI_COMM_WORLD_LOCAL_SIZE"),
                         ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE")):
        if r in e and s in e:
            rank, size = int(e[r]), int(e[s])
            lrank = int(e[lr]) if lr in e else rank
            lsize = e.get(ls, str(size)).split("(")[0].split(",")[0]
            return rank, size, lrank, int(lsize)
    return None


def set_rank_env():
    info = launcher_rank_env()
    if info is None:
        raise RuntimeError("cthtorch.distributed._rank_bootstrap must run under an MPI launcher (mpiexec)")
    rank, size, lrank, lsize = info
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(lrank), LOCAL_WORLD_SIZE=str(lsize),
                      GROUP_RANK=os.environ.get("GROUP_RANK", "0"), ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(size),
                      GROUP_WORLD_SIZE=os.environ.get("GROUP_WORLD_SIZE", "1"))
    return rank


def _die_with_parent():
    # the rank must not outlive this parent if mpiexec kills it
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except OSError:
        pass


def _report_death(rank, why):
    """Mark the rank failed in the job's store (the launcher's), as the rank's
    own excepthook would have."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("_cthtorch_dist_stores", os.path.join(here, "_stores.py"))
        stores = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(stores)
        import datetime
        store = stores.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                                timeout=datetime.timedelta(seconds=5))
        store.set("default_pg/cth/hb/%d" % rank, pickle.dumps(("killed: " + why, -1, {})))
    except Exception as e:   # the report is a courtesy; the watchdog still sees a silent heartbeat
        sys.stderr.write("cthtorch.distributed: could not report rank %d's death: %s\n" % (rank, e))


def main(argv):
    # argv: [--module | --no-python | --spawn] [--local-rank-arg] target args...
    mode, local_rank_arg = None, False
    while argv and argv[0] in ("--module", "--no-python", "--spawn", "--local-rank-arg"):
        if argv[0] == "--local-rank-arg":   # torch.distributed.launch without --use-env
            local_rank_arg = True
        else:
            mode = argv[0]
        argv = argv[1:]
    rank = set_rank_env()
    target, args = argv[0], argv[1:]
    if local_rank_arg:
        args = ["--local-rank=" + os.environ["LOCAL_RANK"]] + args
    if mode == "--no-python":
        cmd = [target] + args
    elif mode == "--module":
        cmd = [sys.executable, "-m", target] + args
    elif mode == "--spawn":
        cmd = [sys.executable, "-m", "cthtorch.multiprocessing._spawn_child", target] + args
    else:
        cmd = [sys.executable, target] + args
    # close_fds=False: the rank inherits the launcher's PMI socket
    child = subprocess.Popen(cmd, close_fds=False, preexec_fn=_die_with_parent)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda signum, frame: child.send_signal(signum))
    # MPICH's launcher signals a peer's failure with SIGUSR1; the rank's watchdog handles that
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    while True:
        try:
            rc = child.wait()
            break
        except InterruptedError:
            continue
    if rc < 0:
        name = signal.Signals(-rc).name
        if os.environ.get("CTHTORCH_SPAWN_DIR"):
            with open(os.path.join(os.environ["CTHTORCH_SPAWN_DIR"], "signal%d" % rank), "w") as f:
                f.write("%s %d" % (name, child.pid))
        _report_death(rank, "by signal %s" % name)
        sys.stderr.write("cthtorch.distributed: rank %d (pid %d) was killed by signal %s\n" % (rank, child.pid, name))
        sys.exit(128 - rc)
    sys.exit(rc)


if __name__ == "__main__":
    main(sys.argv[1:])
