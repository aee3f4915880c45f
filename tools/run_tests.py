"""Runs pytest in several processes that share the test files between them:
`python tools/run_tests.py [-j N] PYTEST_ARGS...` (make test uses it).

The suite is mostly one Python thread, so one pytest leaves the other cores
idle. Each worker collects the same items and claims test files as it
reaches them (tests/suite_workers.py), so a worker that finishes a file
early takes the next free one. The first worker reports as it goes; the
others' output is printed when all have ended. The exit status is the
first failing worker's (1 for one killed by a signal, a crash, which is named
at the end), else 0. Stopped itself (SIGTERM, SIGHUP, ^C), it stops the workers and
removes its temporary directory."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="worker processes (default: the CPU count)")
    args, pytest_args = ap.parse_known_args()
    jobs = max(1, args.jobs)
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"] + pytest_args
    if jobs == 1:
        return subprocess.call(base)
    claims = tempfile.mkdtemp(prefix="cthtorch-tests-")
    procs, logs = [], []

    def stop(signum, frame):   # a kill or hang-up: through the cleanup below, as ^C
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        env = dict(os.environ, CTHTORCH_TEST_CLAIMS=claims)
        for k in range(jobs):
            # each worker its own temporary-directory root: pytest clears it at start
            cmd = base + ["--basetemp", os.path.join(claims, "tmp%d" % k)]
            if k == 0:
                procs.append(subprocess.Popen(cmd, env=env))
            else:
                log = open(os.path.join(claims, "worker%d.log" % k), "w+")
                logs.append(log)
                procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
        codes = [p.wait() for p in procs]
        for k, log in enumerate(logs, 1):
            log.seek(0)
            sys.stdout.write("\n==== test worker %d of %d (exit %d) ====\n" % (k + 1, jobs, codes[k]))
            sys.stdout.write(log.read())
        for k, c in enumerate(codes):
            if c < 0:   # its own output may end mid-test: say so last
                sys.stdout.write("\n==== test worker %d of %d was killed by %s: the run fails ====\n"
                                 % (k + 1, jobs, signal.Signals(-c).name))
        sys.stdout.flush()
        return next((c if c > 0 else 1 for c in codes if c != 0), 0)
    finally:
        for p in procs:   # still running only when this process was stopped
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in logs:
            log.close()
        shutil.rmtree(claims, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
