"""tools/run_tests.py's workers share the test files: every test runs once, in
one worker, a file's module fixture is set up once, and a failure in any
worker is the run's exit status."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(os.path.dirname(HERE), "tools", "run_tests.py")

# each test appends "<file> <test> <pid>" to a log; the module fixture "<file> setup <pid>"
TEST_FILE = '''import os, pytest
LOG = os.environ["SUITE_WORKERS_LOG"]
def note(what):
    with open(LOG, "a") as fh:
        fh.write("%s %s %d\\n" % (os.path.basename(__file__), what, os.getpid()))
@pytest.fixture(scope="module")
def mod():
    note("setup")
    yield
@pytest.mark.parametrize("i", range(3))
def test_a(mod, i):
    note("a%d" % i)
def test_b(mod):
    note("b")
    assert FAIL == 0
'''


def run_suite(tmp_path, nfiles, failing=None):
    for k in range(nfiles):
        (tmp_path / ("test_f%d.py" % k)).write_text(TEST_FILE.replace("FAIL", "1" if k == failing else "0"))
    shutil.copy(os.path.join(HERE, "suite_workers.py"), tmp_path)
    (tmp_path / "conftest.py").write_text("from suite_workers import pytest_runtest_protocol, pytest_terminal_summary\n")
    log = tmp_path / "log.txt"
    env = dict(os.environ, SUITE_WORKERS_LOG=str(log))
    out = subprocess.run([sys.executable, RUNNER, "-j", "2", "-q", str(tmp_path)], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=300)
    rows = [line.split() for line in log.read_text().splitlines()]
    return out, rows


def test_each_test_runs_once_and_a_file_stays_in_one_worker(tmp_path):
    out, rows = run_suite(tmp_path, 6)
    assert out.returncode == 0, out.stdout[-3000:]
    ran = sorted((f, what) for f, what, _ in rows)
    expect = sorted((("test_f%d.py" % k), w) for k in range(6) for w in ("setup", "a0", "a1", "a2", "b"))
    assert ran == expect
    workers = {}
    for f, _, pid in rows:
        workers.setdefault(f, set()).add(pid)
    assert all(len(p) == 1 for p in workers.values())
    assert out.stdout.count("this worker ran") == 2 and "test worker 2 of 2" in out.stdout


def test_a_failure_in_any_worker_fails_the_run(tmp_path):
    out, rows = run_suite(tmp_path, 4, failing=3)
    assert out.returncode == 1
    assert "FAILED" in out.stdout and "test_f3.py::test_b" in out.stdout
    assert len(rows) == 4 * 5
