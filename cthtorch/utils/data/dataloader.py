"""DataLoader: batches from a dataset, in this process or in worker processes
(the worker side is _utils/worker.py, the multi-process iterator _mp_iter.py)."""
import math
import multiprocessing as python_multiprocessing
import os
import warnings

import cthtorch
from cthtorch.utils.data._utils.collate import default_collate, default_convert
from cthtorch.utils.data._utils.pin_memory import pin_memory as _pin
from cthtorch.utils.data._utils.worker import WorkerInfo, create_fetcher, get_worker_info  # noqa: F401
from cthtorch.utils.data.dataset import IterableDataset
from cthtorch.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: the dataset itself decides what comes next."""

    def __iter__(self):
        while True:
            yield None


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = isinstance(loader.dataset, IterableDataset)
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin_memory = loader.pin_memory and cthtorch.cuda.is_available()
        if loader.pin_memory and not self._pin_memory:   # no accelerator: PyTorch warns and carries on
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(cthtorch.empty((), dtype=cthtorch.int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        if self._pin_memory:
            # pinned here, in the consuming thread (torch pins in a helper thread to overlap
            # it with training; the batches are the same)
            data = _pin(data)
        self._num_yielded += 1
        if self._is_iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = ("Length of IterableDataset %s was reported to be %d(when accessing len(dataloader)), but %d samples "
                   "have been fetched. " % (self._dataset, self._IterableDataset_len_called, self._num_yielded))
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._dataset, self._is_iterable, self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class DataLoader:
    __initialized = False

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
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            if shuffle not in {False, None}:
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
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > "
                                 "0), but got num_workers=%s" % self.num_workers)
            if isinstance(ctx, str):
                valid = python_multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start method in %r, but "
                                     "got multiprocessing_context=%r" % (valid, ctx))
                ctx = python_multiprocessing.get_context(ctx)
            if not isinstance(ctx, python_multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                "specifying the start method, but got multiprocessing_context=%s" % ctx)
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError("%s attribute should not be set after %s is initialized"
                             % (attr, self.__class__.__name__))
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from cthtorch.utils.data._mp_iter import _MultiProcessingDataLoaderIter
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # persistent workers: one iterator (and one set of processes) for the loader's lifetime
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        try:
            suggest = len(os.sched_getaffinity(0))
        except AttributeError:
            suggest = os.cpu_count()
        if suggest is None or self.num_workers > suggest:
            if suggest is not None:
                why = ("Our suggested max number of worker in current system is %d%s, which is smaller than what this "
                       "DataLoader is going to create." % (suggest, "" if hasattr(os, "sched_getaffinity") else
                                                           " (`cpuset` is not taken into account)"))
            else:
                why = "DataLoader is not able to compute a suggested max number of worker in current system."
            warnings.warn("This DataLoader will create %d worker processes in total. %s Please be aware that excessive "
                          "worker creation might get DataLoader running slow or even freeze, lower the worker number "
                          "to avoid potential slowness/freeze if necessary." % (self.num_workers, why), stacklevel=2)
