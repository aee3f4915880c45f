"""Starting a job through the MPI launcher, for run.py and
multiprocessing.spawn: every rank must be started by mpiexec (MPI cannot
join processes that were started separately)."""
import functools
import os
import shutil
import signal
import subprocess
import sys
import time

# run by path: each rank's parent process (see there)
BOOTSTRAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rank_bootstrap.py")

# what an MPI launcher puts in a rank's environment: a job started from
# inside a rank must not inherit it, or its mpiexec would think it is a rank
_LAUNCHER_ENV_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPI_LOCAL", "OMPI_", "MPIR_CVAR_CH3")


def mpiexec_path():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    path = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if path is None:
        raise RuntimeError("cthtorch.distributed: mpiexec was not found; install MPI with `pip install mpi4py mpich` "
                           "(requirements.txt does)")
    return path


@functools.lru_cache(None)
def _flavor(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return "openmpi" if "Open MPI" in out or "OpenRTE" in out else "mpich"


def clean_env(env):
    return {k: v for k, v in env.items() if not k.startswith(_LAUNCHER_ENV_PREFIXES)}


def command(nprocs, argv):
    """mpiexec running argv as nprocs ranks on this machine. A rank that dies
    does not take the others down at once (their watchdog names it first);
    the caller's grace period ends the job."""
    path = mpiexec_path()
    if _flavor(path) == "openmpi":
        extra = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        return [path, "-n", str(nprocs)] + extra + list(argv)
    return [path, "-n", str(nprocs), "-disable-auto-cleanup"] + list(argv)


def _end_with_parent():
    # the job ends (SIGTERM, which mpiexec passes to the ranks) if whoever started it dies
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except OSError:
        pass


def start(nprocs, argv, env):
    # a session of its own, so the whole job (mpiexec, its proxies, the ranks) can be signalled at once
    return subprocess.Popen(command(nprocs, argv), env=clean_env(env), start_new_session=True,
                            preexec_fn=_end_with_parent)


def terminate(proc, grace=5.0):
    """End the job: SIGTERM to its process group, SIGKILL after grace."""
    if proc.poll() is not None:
        _killpg(proc, signal.SIGKILL)   # stray ranks of a finished mpiexec
        return
    _killpg(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    _killpg(proc, signal.SIGKILL)
    proc.wait()


def _killpg(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
