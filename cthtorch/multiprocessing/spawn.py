"""torch.multiprocessing.spawn, with the children started as ONE MPI job
(mpiexec -n nprocs): child i is MPI rank i and calls fn(i, *args), so
children that then call init_process_group (tcp://, env://) form one
process group. Errors travel as torch's do: a child's exception reaches the
parent as ProcessRaisedException with its traceback, a non-zero exit or a
signal as ProcessExitedException.
"""
import multiprocessing
import multiprocessing.spawn as _mp_spawn
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
import warnings
from multiprocessing.reduction import ForkingPickler

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException"]

# seconds the other children get, once one has failed, to end on their own
# (their watchdog reports the failed rank) before the job is killed
_FAIL_GRACE = 10.0


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception; the message holds its traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg, error_index, error_pid)


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero status or was killed by a signal."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


for _c in (ProcessException, ProcessRaisedException, ProcessExitedException):
    _c.__module__ = "torch.multiprocessing.spawn"


class ProcessContext:
    """The running job: join() waits for it (raising a child's failure)."""

    def __init__(self, proc, nprocs, workdir):
        self._proc, self._nprocs, self._dir = proc, nprocs, workdir
        self._failed_at = None
        self._done = False

    @property
    def processes(self):
        return [self._proc]

    def pids(self):
        out = []
        for i in range(self._nprocs):
            try:
                with open(os.path.join(self._dir, "pid%d" % i)) as f:
                    out.append(int(f.read()))
            except (OSError, ValueError):
                out.append(None)
        return out

    def _errors(self):
        return [f for f in os.listdir(self._dir) if f.startswith(("error", "signal", "exit"))]

    def join(self, timeout=None, grace_period=None):
        """True once every child has ended well; False if timeout passed
        first; raises the first child's failure."""
        if self._done:
            return True
        from cthtorch.distributed import _mpiexec
        grace = _FAIL_GRACE if grace_period is None else grace_period
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._proc.poll() is None:
            if self._failed_at is None and self._errors():
                self._failed_at = time.monotonic()
            if self._failed_at is not None and time.monotonic() - self._failed_at > grace:
                break
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        _mpiexec.terminate(self._proc)
        rc = self._proc.returncode
        try:
            err = self._first_failure(rc)
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._done = True
        if err is not None:
            raise err
        return True

    def _first_failure(self, rc):
        pids = self.pids()
        raised, other = [], []
        for name in self._errors():
            path = os.path.join(self._dir, name)
            i = int(name.lstrip("errorsignalxt"))
            with open(path, "rb") as f:
                data = f.read()
            when = os.path.getmtime(path)
            if name.startswith("error"):
                trace = pickle.loads(data)
                # a child's own error before a peer's report of it
                secondary = "DistBackendError: [Rank " in trace
                raised.append((secondary, when, i, trace))
            elif name.startswith("signal"):
                other.append((when, i, ProcessExitedException(
                    "process %d terminated with signal %s" % (i, data.decode().split()[0]), error_index=i,
                    error_pid=pids[i], exit_code=-signal.Signals[data.decode().split()[0]].value,
                    signal_name=data.decode().split()[0])))
            else:
                code = int(data)
                other.append((when, i, ProcessExitedException(
                    "process %d terminated with exit code %d" % (i, code), error_index=i, error_pid=pids[i],
                    exit_code=code)))
        firsts = sorted(other)
        primary = sorted(r for r in raised if not r[0])
        if firsts and (not primary or firsts[0][0] <= primary[0][1]):
            return firsts[0][2]
        if raised:
            _, _, i, trace = sorted(raised)[0]
            msg = "\n\n-- Process %d terminated with the following error:\n" % i + trace
            return ProcessRaisedException(msg, i, pids[i])
        if rc:
            return ProcessExitedException("process 0 terminated with exit code %d" % rc, error_index=0,
                                          error_pid=pids[0], exit_code=rc)
        return None


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    from cthtorch.distributed import _mpiexec
    workdir = tempfile.mkdtemp(prefix="cthtorch-spawn-")
    try:
        prep = _mp_spawn.get_preparation_data("cthtorch-spawn")
        prep["authkey"] = bytes(prep["authkey"])   # AuthenticationString refuses plain pickling
        with open(os.path.join(workdir, "prep"), "wb") as f:
            pickle.dump(prep, f)
        for i in range(nprocs):   # one pickle per child: each attaches its own shared-memory handles
            with open(os.path.join(workdir, "args%d" % i), "wb") as f:
                f.write(ForkingPickler.dumps((fn, tuple(args))))
        env = dict(os.environ, CTHTORCH_SPAWN_DIR=workdir)
        proc = _mpiexec.start(nprocs, [sys.executable, _mpiexec.BOOTSTRAP, "--spawn", workdir], env)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    context = ProcessContext(proc, nprocs, workdir)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    if start_method != "spawn":
        warnings.warn("This method only supports start_method=spawn (got: %s).\nTo use a different start_method "
                      "use:\n\t\t torch.multiprocessing.start_processes(...)" % start_method, FutureWarning)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
