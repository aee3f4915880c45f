"""The multi-process DataLoader iterator.

Each worker has its own index queue; all answer on one result queue. Tasks are
numbered in sampler order and handed out round-robin, at most prefetch_factor
per worker ahead; results are delivered in task order (or as they come with
in_order=False). Tensors come back as shared-memory handles (the pickling of
cthtorch.multiprocessing), not bytes. Workers stop when the iterator is
exhausted, deleted, broken out of, or fails; afterwards no worker process and
no /dev/shm segment of theirs is left.
"""
import atexit
import glob
import itertools
import multiprocessing
import os
import queue
import signal
import time
import weakref

from cthtorch.utils.data._utils.worker import (ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration,
                                         worker_loop)
from cthtorch.utils.data.dataloader import _BaseDataLoaderIter

_live_iterators = weakref.WeakSet()   # shut down at interpreter exit, before multiprocessing kills the workers
_POLL = 0.5                           # how often a waiting main process checks on its workers


@atexit.register
def _shutdown_all():
    for it in list(_live_iterators):
        it._shutdown_workers()


def _signal_name(signum):
    try:
        return signal.strsignal(signum) or signal.Signals(signum).name
    except (ValueError, AttributeError):
        return str(signum)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        import cthtorch.multiprocessing  # noqa: F401 - registers tensor pickling through shared memory
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._shutdown = False
        self._workers, self._index_queues = [], []
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        _live_iterators.add(self)
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()   # never block exit on indices nobody will read
                w = ctx.Process(target=worker_loop, args=(
                    self._dataset, iq, self._data_queue, self._done_event, self._collate_fn, self._auto_collation, self._drop_last,
                    self._base_seed, loader.worker_init_fn, i, self._num_workers, self._is_iterable, os.getpid()),
                    daemon=True)
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._worker_pids = [w.pid for w in self._workers]
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._pending = {}        # task idx -> worker id, not yet answered
        self._results = {}        # task idx -> data, answered early (in-order delivery)
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # an earlier epoch may have been left mid-way: each worker echoes the resume marker after
            # its older tasks, so draining up to every echo discards everything stale
            for q in self._index_queues:
                q.put(_ResumeIteration())
            left = self._num_workers
            while left > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    left -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        if len(self._pending) >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._workers_status[wid]:
                break
        else:
            return   # every worker's iterable has run dry
        self._index_queues[wid].put((self._send_idx, index))
        self._pending[self._send_idx] = wid
        self._send_idx += 1

    def _check_workers(self):
        failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
        if not failed or self._shutdown:
            return
        w = failed[0]
        pid, code = w.pid, w.exitcode
        self._shutdown_workers()
        if code is not None and code < 0:
            raise RuntimeError("DataLoader worker (pid %d) is killed by signal: %s. " % (pid, _signal_name(-code)))
        if code:
            raise RuntimeError("DataLoader worker (pid %d) exited unexpectedly with exit code %d. Details are lost due "
                               "to multiprocessing. Rerunning with num_workers=0 may give better error trace."
                               % (pid, code))
        raise RuntimeError("DataLoader worker (pid(s) %s) exited unexpectedly"
                           % ", ".join(str(f.pid) for f in failed))

    def _get_data(self):
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL if deadline is None else max(0.0, min(_POLL, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                self._check_workers()
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown_workers()
                    raise RuntimeError("DataLoader timed out after %s seconds" % self._timeout) from None

    def _next_data(self):
        while True:
            # skip tasks already delivered (out of order) or owned by a worker whose iterable ran dry
            while self._rcvd_idx < self._send_idx:
                r = self._rcvd_idx
                if r in self._results:
                    break
                wid = self._pending.get(r)
                if wid is not None and self._workers_status[wid]:
                    break
                self._pending.pop(r, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._results:
                data = self._results.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            if isinstance(idx, _ResumeIteration):
                continue
            wid = self._pending.pop(idx, None)
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if wid is None:
                continue   # a stale answer
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
                return self._process_data(data)
            if not self._in_order:
                return self._process_data(data)
            self._results[idx] = data

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()   # as PyTorch: the iterator stays usable; its workers stop when it is dropped
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            if hasattr(self, "_done_event"):
                self._done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            deadline = time.monotonic() + 5.0
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=2.0)
                if w.is_alive():
                    os.kill(w.pid, signal.SIGKILL)
                    w.join()
            for q in self._index_queues + [self._data_queue]:
                q.cancel_join_thread()
                q.close()
        finally:
            # batches sent but never received: their segments are named after the worker that made them
            for pid in getattr(self, "_worker_pids", [w.pid for w in self._workers if w.pid]):
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
