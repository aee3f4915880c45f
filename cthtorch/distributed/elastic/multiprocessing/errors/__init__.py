"""torch.distributed.elastic.multiprocessing.errors: the @record decorator
torchrun scripts put on their entry point. An exception escaping it is
written, as torch writes it, to the JSON file TORCHELASTIC_ERROR_FILE names
(when set), then re-raised; SystemExit(0) returns None. The launcher reports
a failed rank from its own heartbeat store, so it needs no error file."""
import faulthandler
import functools
import json
import os
import time
import traceback
import warnings

__all__ = ["record", "ErrorHandler", "get_error_handler"]


class ErrorHandler:
    """Writes an exception, with its traceback and a timestamp, to the file in
    TORCHELASTIC_ERROR_FILE; does nothing without it."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self):
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:  # noqa: BLE001 -- a missing fault handler only loses diagnostics
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}", stacklevel=2)

    def record_exception(self, e):
        file = self._get_error_file_path()
        if file:
            data = {"message": {"message": f"{type(e).__name__}: {e}",
                                "extraInfo": {"py_callstack": traceback.format_exc(),
                                              "timestamp": str(int(time.time()))}}}
            with open(file, "w") as fp:
                json.dump(data, fp)


def get_error_handler():
    return ErrorHandler()


def record(fn, error_handler=None):
    """Decorates a process's entry point: errors escaping it are recorded
    (ErrorHandler.record_exception) and re-raised."""
    if not error_handler:
        error_handler = get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        error_handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:
                return None
            raise
        except Exception as e:
            error_handler.record_exception(e)
            raise
    return wrapper
