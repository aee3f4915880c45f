"""Several pytest processes share one run of the suite, file by file
(tools/run_tests.py starts them; conftest.py imports these hooks).

Each worker collects everything and walks the items in the same order; the
first to reach a test file claims it (an atomic mkdir in the shared
CTHTORCH_TEST_CLAIMS directory) and runs all of its tests, the others pass
over it without a report. A whole file goes to one worker so its module
fixtures are set up once. Without the variable the hooks do nothing."""
import errno
import os

import pytest

_CLAIMS = os.environ.get("CTHTORCH_TEST_CLAIMS")
_mine = {}   # test file -> whether this worker claimed it


def _claim(path):
    if path not in _mine:
        try:
            os.mkdir(os.path.join(_CLAIMS, path.replace("/", "%").replace(os.sep, "%")))
            _mine[path] = True
        except OSError as e:
            if e.errno != errno.EEXIST:
                raise
            _mine[path] = False
    return _mine[path]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _CLAIMS and not _claim(item.nodeid.split("::", 1)[0]):
        return True   # another worker runs this file
    return None


def pytest_terminal_summary(terminalreporter):
    if _CLAIMS:
        ran = sorted(p for p, m in _mine.items() if m)
        terminalreporter.write_line("this worker ran %d of %d test files" % (len(ran), len(_mine)))
