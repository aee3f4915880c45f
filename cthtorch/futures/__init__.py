"""torch.futures: a Future is the result of asynchronous work (a collective's
Work.get_future(), later rpc_async), completed once with a value or an error."""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        if self._error is not None:
            raise self._error
        return self._value

    def _complete(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            self._run_callback(cb)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError("set_exception expects an exception, got %s" % type(result).__name__)
        self._complete(None, result)

    def _run_callback(self, cb):
        try:
            cb(self)
        except Exception:   # torch logs a failing done-callback and carries on
            import traceback
            traceback.print_exc()

    def add_done_callback(self, callback):
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run_callback(callback)

    def then(self, callback):
        """A new Future holding callback(self)'s result (or the error it raised)."""
        fut = Future()

        def chain(f):
            try:
                fut.set_result(callback(f))
            except Exception as e:
                fut.set_exception(e)
        self.add_done_callback(chain)
        return fut

    def __repr__(self):
        return "<torch.futures.Future object at %#x>" % id(self)


Future.__module__ = "torch.futures"


def collect_all(futures):
    """A Future completed with the list of `futures` once all of them are done."""
    futures = list(futures)
    out = Future()
    left = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    return [f.wait() for f in futures]
