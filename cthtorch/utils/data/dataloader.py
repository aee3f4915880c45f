"""DataLoader: batches from a dataset, in this process or in worker processes.

Workers are processes fed by one index queue each and answering on a shared
result queue; batches come back in sampler order. Tensors a worker makes
travel as shared-memory handles (cthtorch.multiprocessing's pickling), not as
pickled bytes. A worker that raises re-raises in the main process with its
traceback; one killed by a signal is reported; on shutdown (exhaustion, break,
del, error) workers are stopped and no shared-memory segment is left behind.
"""
import glob
import itertools
import os
import queue
import random
import signal
import sys
import threading
import time
import traceback

import cthtorch
from cthtorch.utils.data._collate import default_collate, default_convert
from cthtorch.utils.data.dataset import IterableDataset
from cthtorch.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

_worker_info = None
_MP_STATUS_CHECK_INTERVAL = 5.0


class WorkerInfo:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        return "WorkerInfo(%s)" % ", ".join("%s=%s" % kv for kv in self.__dict__.items())


def get_worker_info():
    return _worker_info


class ExceptionWrapper:
    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = "Caught %s %s.\nOriginal %s" % (self.exc_type.__name__, self.where, self.exc_msg)
        if self.exc_type is KeyError:
            msg = KeyError(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:   # noqa: BLE001 - exception types whose __init__ wants more
            raise RuntimeError(msg) from None
        raise exc


_SKIP = object()   # a task that produced no batch (an iterable worker ran dry)


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


def _worker_loop(dataset, index_queue, data_queue, collate_fn, auto_collation, drop_last, seed, init_fn, worker_id,
                 num_workers, is_iterable, batch_size, parent_pid):
    global _worker_info
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        random.seed(seed)
        cthtorch.manual_seed(seed)
        try:
            import numpy as np
            np.random.seed(seed % (2 ** 32))
        except ImportError:
            pass
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exc = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
        except Exception:  # noqa: BLE001
            init_exc = ExceptionWrapper(sys.exc_info(), "in DataLoader worker process %d" % worker_id)
        it = iter(dataset) if is_iterable else None
        while True:
            try:
                task = index_queue.get(timeout=_MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:   # the main process is gone: stop
                    return
                continue
            if task is None:
                return
            idx, indices = task
            if init_exc is not None:
                data_queue.put((idx, init_exc))
                init_exc = None
                continue
            try:
                if is_iterable:
                    if auto_collation:
                        items = list(itertools.islice(it, batch_size))
                        if not items or (drop_last and len(items) < batch_size):
                            data_queue.put((idx, _IterableDatasetStopIteration(worker_id)))
                            continue
                        data = collate_fn(items)
                    else:
                        data = collate_fn(next(it))
                elif auto_collation:
                    getitems = getattr(dataset, "__getitems__", None)
                    data = collate_fn(getitems(indices) if getitems else [dataset[i] for i in indices])
                else:
                    data = collate_fn(dataset[indices])
                data_queue.put((idx, data))
            except StopIteration:
                data_queue.put((idx, _IterableDatasetStopIteration(worker_id)))
            except Exception:  # noqa: BLE001
                data_queue.put((idx, ExceptionWrapper(sys.exc_info(), "in DataLoader worker process %d" % worker_id)))
            del task
    except KeyboardInterrupt:
        pass


class _BaseIter:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._is_iterable = isinstance(loader.dataset, IterableDataset)
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler) if not self._is_iterable or self._auto_collation is False else \
            itertools.count()
        if self._is_iterable:
            self._sampler_iter = itertools.count()
        self._num_yielded = 0
        self._timeout = loader.timeout
        self._base_seed = int(cthtorch.empty((), dtype=cthtorch.int64).random_(generator=loader.generator).item())

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _next_index(self):
        return next(self._sampler_iter)


class _SingleProcessDataLoaderIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._data_iter = iter(self._dataset) if self._is_iterable else None

    def __next__(self):
        if self._is_iterable:
            if self._auto_collation:
                items = list(itertools.islice(self._data_iter, self._loader.batch_size))
                if not items or (self._drop_last and len(items) < self._loader.batch_size):
                    raise StopIteration
                data = self._collate_fn(items)
            else:
                data = self._collate_fn(next(self._data_iter))
        else:
            indices = self._next_index()
            if self._auto_collation:
                getitems = getattr(self._dataset, "__getitems__", None)
                data = self._collate_fn(getitems(indices) if getitems else [self._dataset[i] for i in indices])
            else:
                data = self._collate_fn(self._dataset[indices])
        self._num_yielded += 1
        return data


class _MultiProcessingDataLoaderIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        import cthtorch.multiprocessing  # noqa: F401 - registers tensor pickling through shared memory
        ctx = loader.multiprocessing_context
        if ctx is None:
            import multiprocessing
            ctx = multiprocessing.get_context("fork") if sys.platform != "win32" else multiprocessing.get_context()
        elif isinstance(ctx, str):
            import multiprocessing
            ctx = multiprocessing.get_context(ctx)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor if loader.prefetch_factor is not None else 2
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        self._shutdown = False
        for i in range(self._num_workers):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, args=(
                self._dataset, iq, self._data_queue, self._collate_fn, self._auto_collation, self._drop_last,
                self._base_seed + i, loader.worker_init_fn, i, self._num_workers, self._is_iterable,
                loader.batch_size, os.getpid()), daemon=True)
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._worker_pids = [w.pid for w in self._workers]
        self._workers_status = [True] * self._num_workers
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._worker_queue_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_queue_cycle)
            if self._workers_status[wid]:
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _check_workers(self):
        for w in self._workers:
            if w.exitcode is not None and w.exitcode != 0 and not self._shutdown:
                pid, code = w.pid, w.exitcode
                self._shutdown_workers()
                if code < 0:
                    try:
                        name = signal.strsignal(-code) or signal.Signals(-code).name
                    except (ValueError, AttributeError):
                        name = str(-code)
                    raise RuntimeError("DataLoader worker (pid %d) is killed by signal: %s. " % (pid, name))
                raise RuntimeError("DataLoader worker (pid(s) %d) exited unexpectedly" % pid)

    def _get_data(self):
        timeout = self._timeout if self._timeout > 0 else None
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                self._check_workers()
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown_workers()
                    raise RuntimeError("DataLoader timed out after %s seconds" % self._timeout) from None

    def __next__(self):
        while True:
            if self._rcvd_idx >= self._send_idx:
                self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:                      # arrived earlier, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                if info[1] is _SKIP:
                    continue
                return self._process(info[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._index_queues[data.worker_id].put(None)
                data = _SKIP
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            if data is _SKIP:
                continue
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        self._num_yielded += 1
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            for q in self._index_queues:
                try:
                    q.put(None)
                except Exception:  # noqa: BLE001
                    pass
            for w in self._workers:
                w.join(timeout=2.0)
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=2.0)
            # drain batches nobody will receive, so their segments get unlinked
            while True:
                try:
                    self._data_queue.get(timeout=0.05)
                except Exception:  # noqa: BLE001
                    break
            for q in self._index_queues + [self._data_queue]:
                q.cancel_join_thread()
                q.close()
        finally:
            for pid in self._worker_pids:
                for seg in glob.glob("/dev/shm/cthtorch_%d_*" % pid):
                    try:
                        os.unlink(seg)
                    except OSError:
                        pass

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001
            pass


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator
        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 "shuffle=%s" % shuffle)
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 "sampler=%s" % sampler)
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                                 "batch_sampler=%s" % batch_sampler)
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = None
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and sampler is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (isinstance(self.dataset, IterableDataset) and self.batch_size is not None)

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is not None:
                self._iterator._shutdown_workers()
            self._iterator = self._get_iterator()
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                import math
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        pass
