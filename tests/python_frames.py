"""What Python code runs during a call: tests that assert a path stays in C
(the JIT's interpreter and fused kernels) count the frames it enters."""
import sys


def python_calls(fn, *args, **kwargs):
    """(result, [(file name, function name)] of every Python frame entered while fn runs)."""
    seen = []

    def prof(frame, event, arg):
        if event == "call":
            seen.append((frame.f_code.co_filename.rpartition("/")[2], frame.f_code.co_name))
    sys.setprofile(prof)
    try:
        r = fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return r, seen
