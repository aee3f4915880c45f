"""What runs inside a DataLoader worker process, and the fetchers both the
single-process and the multi-process iterators use to turn an index into a
batch."""
import itertools
import os
import pickle
import queue
import random
import signal
import sys
import traceback

import cthtorch

MP_STATUS_CHECK_INTERVAL = 5.0   # how often an idle worker checks that its parent is alive
_worker_info = None


class WorkerInfo:
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_WorkerInfo__keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError("Cannot assign attributes to %s objects" % self.__class__.__name__)

    def __repr__(self):
        return "%s(%s)" % (self.__class__.__name__,
                           ", ".join("%s=%s" % (k, getattr(self, k)) for k in self.__keys))


def get_worker_info():
    """In a worker: its id, num_workers, seed and dataset copy; in the main process: None."""
    return _worker_info


class KeyErrorMessage(str):
    """KeyError reprs its argument; this str reprs as itself so the traceback stays readable."""
    __slots__ = ()

    def __repr__(self):
        return self


def _crosses_processes(cls):
    try:
        return pickle.loads(pickle.dumps(cls)) is cls
    except Exception:  # noqa: BLE001 - pickling fails with many exception types
        return False


class ExceptionWrapper:
    """An exception with its formatted traceback, picklable across processes."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        # A class the queue cannot pickle (one defined in a function, say)
        # would be dropped by the queue's feeder thread and the main process
        # would wait for the batch forever: send only its name then.
        self.exc_type = exc_info[0] if _crosses_processes(exc_info[0]) else None
        self.exc_type_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = "Caught %s %s.\nOriginal %s" % (self.exc_type_name, self.where, self.exc_msg)
        if self.exc_type is None:
            raise RuntimeError(msg + "\n(the exception's class could not be pickled, so it is re-raised as a "
                                     "RuntimeError)")
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - exception types whose __init__ wants other arguments
            raise RuntimeError(msg) from None
        raise exc


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at a new epoch; echoed back once older tasks are flushed."""


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = list(itertools.islice(self.it, len(index)))
            if len(data) < len(index):
                self.ended = True
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.it)
        return self.collate_fn(data)


def create_fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(seed):
    random.seed(seed)
    cthtorch.manual_seed(seed)
    try:
        import numpy as np
        np.random.seed(seed % (2 ** 32))
    except ImportError:
        pass


def _unlink_own_segments():
    import glob
    for seg in glob.glob("/dev/shm/cthtorch_%d_*" % os.getpid()):
        try:
            os.unlink(seg)
        except OSError:
            pass


def worker_loop(dataset, index_queue, data_queue, done_event, collate_fn, auto_collation, drop_last, base_seed,
                init_fn, worker_id, num_workers, is_iterable, parent_pid):
    """Serve (task_idx, index) from index_queue until None; answer (task_idx, batch) on data_queue.
    Errors travel as ExceptionWrapper; an exhausted iterable answers _IterableDatasetStopIteration."""
    global _worker_info
    import cthtorch.multiprocessing  # noqa: F401 - a spawned worker must send tensors as shm handles too
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the main process's to handle
        cthtorch.set_num_threads(1)                     # workers run side by side: no thread oversubscription
        seed = base_seed + worker_id
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exc = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001
            init_exc = ExceptionWrapper(where="in DataLoader worker process %d" % worker_id)
        iteration_end = False
        while True:
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:   # the main process is gone: nobody will attach our batches
                    done_event.set()
                    _unlink_own_segments()
                    return
                continue
            if task is None:
                return
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                if init_exc is None:
                    fetcher = create_fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last)
                continue
            if iteration_end:          # tasks queued after this worker's iterable ran dry
                continue
            idx, index = task
            if init_exc is not None:
                data, init_exc = init_exc, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where="in DataLoader worker process %d" % worker_id)
            data_queue.put((idx, data))
            del data, task, index
    except KeyboardInterrupt:
        pass
    finally:
        if done_event.is_set():
            # shutting down: nobody reads any more, don't block on a full pipe
            data_queue.cancel_join_thread()
            data_queue.close()
        else:
            # our iterable ran dry: flush, and never exit while our feeder thread holds the
            # queue's write lock (the other workers would wait on it forever)
            data_queue.close()
            data_queue.join_thread()
