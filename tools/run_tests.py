"""Runs pytest in several processes that share the test files between them:
`python tools/run_tests.py [-j N] PYTEST_ARGS...` (make test uses it).

The suite is mostly one Python thread, so one pytest leaves the other cores
idle. Each worker collects the same items and claims test files as it
reaches them (tests/suite_workers.py), so a worker that finishes a file
early takes the next free one. The first worker reports as it goes; the
others' output is printed when all have ended. The exit status is the
first failing worker's, else 0."""
import argparse
import os
import shutil
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
    try:
        env = dict(os.environ, CTHTORCH_TEST_CLAIMS=claims)
        procs, logs = [], []
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
            log.close()
        sys.stdout.flush()
        return next((c for c in codes if c != 0), 0)
    finally:
        shutil.rmtree(claims, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
