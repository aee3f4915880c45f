"""cthtorch.utils.data in one process: datasets, samplers, collation and the
DataLoader's arguments, against torch.utils.data."""
import collections
import warnings

import numpy as np
import pytest

import cthtorch
import oracle
from cthtorch.utils import data as D

torch = oracle.require_torch()
import torch.utils.data as TD  # noqa: E402


def tolist(x):
    """Nested python values of a batch, with tensor dtypes, so torch and cthtorch batches compare."""
    if isinstance(x, (cthtorch.Tensor, torch.Tensor)):
        return ("T", str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: tolist(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(tolist(v) for v in x)
    if isinstance(x, (list, tuple)):
        return type(x)(tolist(v) for v in x)
    if isinstance(x, np.ndarray):
        return ("np", x.tolist())
    return x


def same_error(fn_c, fn_t, exc=None):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ec:
        fn_c()
    assert type(ec.value) is type(et.value)
    assert str(ec.value) == str(et.value)
    if exc is not None:
        assert isinstance(ec.value, exc)


# ---- datasets ----

def test_tensor_dataset():
    x, y = cthtorch.arange(12.).view(6, 2), cthtorch.arange(6)
    ds = D.TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[2]
    assert a.tolist() == [4., 5.] and b.item() == 2
    same_error(lambda: D.TensorDataset(x, cthtorch.arange(5)), lambda: TD.TensorDataset(torch.zeros(6), torch.zeros(5)))


def test_stack_dataset():
    a, b = list(range(5)), [str(i) for i in range(5)]
    t = TD.StackDataset(a, b)
    c = D.StackDataset(a, b)
    assert len(c) == len(t) == 5 and c[3] == t[3] == (3, "3")
    assert D.StackDataset(x=a, y=b)[1] == TD.StackDataset(x=a, y=b)[1] == {"x": 1, "y": "1"}
    assert c.__getitems__([0, 4]) == t.__getitems__([0, 4])
    assert D.StackDataset(x=a, y=b).__getitems__([2]) == TD.StackDataset(x=a, y=b).__getitems__([2])
    same_error(lambda: D.StackDataset(a, [1]), lambda: TD.StackDataset(a, [1]))
    same_error(lambda: D.StackDataset(), lambda: TD.StackDataset())
    same_error(lambda: D.StackDataset(a, y=b), lambda: TD.StackDataset(a, y=b))


class Seq(D.Dataset):
    def __init__(self, n, base=0):
        self.n, self.base = n, base

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.base + i

    def __len__(self):
        return self.n


class TSeq(TD.Dataset):
    def __init__(self, n, base=0):
        self.n, self.base = n, base

    def __getitem__(self, i):
        return self.base + i

    def __len__(self):
        return self.n


def test_concat_dataset_and_add():
    c = Seq(3) + Seq(4, 100)
    t = TSeq(3) + TSeq(4, 100)
    assert isinstance(c, D.ConcatDataset)
    assert len(c) == len(t) == 7
    assert [c[i] for i in range(7)] == [t[i] for i in range(7)]
    assert [c[-i] for i in range(1, 8)] == [t[-i] for i in range(1, 8)]
    assert c.cumulative_sizes == t.cumulative_sizes
    same_error(lambda: c[-8], lambda: t[-8])
    same_error(lambda: D.ConcatDataset([]), lambda: TD.ConcatDataset([]))


class Count(D.IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        info = D.get_worker_info()
        step, first = (1, 0) if info is None else (info.num_workers, info.id)
        return iter(range(self.lo + first, self.hi, step))

    def __len__(self):
        return self.hi - self.lo


def test_chain_dataset_and_add():
    ch = Count(0, 3) + Count(10, 12)
    assert isinstance(ch, D.ChainDataset)
    assert list(ch) == [0, 1, 2, 10, 11] and len(ch) == 5
    bad = D.ChainDataset([Count(0, 2), Seq(2)])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(bad)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(bad)
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        D.ConcatDataset([Count(0, 2)])


def test_subset():
    s = D.Subset(Seq(10), [7, 2, 5])
    assert len(s) == 3 and [s[i] for i in range(3)] == [7, 2, 5]
    assert s.__getitems__([2, 0]) == [5, 7]

    class Bad(D.Subset):
        def __getitem__(self, i):
            return 0
    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(Seq(3), [0])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.33, 0.33, 0.34], [1, 0, 9]])
def test_random_split_matches_torch(lengths):
    c = D.random_split(range(10), lengths, generator=cthtorch.Generator().manual_seed(42))
    t = TD.random_split(range(10), lengths, generator=torch.Generator().manual_seed(42))
    assert [list(s.indices) for s in c] == [list(s.indices) for s in t]
    assert all(isinstance(s, D.Subset) for s in c)


def test_random_split_errors_and_warning():
    same_error(lambda: D.random_split(range(10), [3, 3]), lambda: TD.random_split(range(10), [3, 3]))
    same_error(lambda: D.random_split(range(10), [1.5, -0.5]), lambda: TD.random_split(range(10), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(range(2), [0.9, 0.1])
    cthtorch.manual_seed(3)
    a = [list(s.indices) for s in D.random_split(range(8), [4, 4])]
    cthtorch.manual_seed(3)
    assert a == [list(s.indices) for s in D.random_split(range(8), [4, 4])]


# ---- samplers ----

def test_sequential_sampler():
    assert list(D.SequentialSampler(range(5))) == [0, 1, 2, 3, 4] and len(D.SequentialSampler(range(5))) == 5


@pytest.mark.parametrize("kw", [{}, {"replacement": True}, {"num_samples": 25}, {"replacement": True, "num_samples": 70},
                                {"num_samples": 4}])
def test_random_sampler_matches_torch(kw):
    c = D.RandomSampler(range(10), generator=cthtorch.Generator().manual_seed(7), **kw)
    t = TD.RandomSampler(range(10), generator=torch.Generator().manual_seed(7), **kw)
    assert list(c) == list(t) and len(c) == len(t)


def test_random_sampler_unseeded_is_permutation_and_errors():
    assert sorted(D.RandomSampler(range(20))) == list(range(20))
    same_error(lambda: D.RandomSampler(range(3), replacement=1), lambda: TD.RandomSampler(range(3), replacement=1))
    same_error(lambda: D.RandomSampler(range(3), num_samples=0), lambda: TD.RandomSampler(range(3), num_samples=0))
    same_error(lambda: D.RandomSampler([], num_samples=None), lambda: TD.RandomSampler([], num_samples=None))


def test_subset_random_sampler():
    c = D.SubsetRandomSampler([10, 20, 30, 40], generator=cthtorch.Generator().manual_seed(1))
    t = TD.SubsetRandomSampler([10, 20, 30, 40], generator=torch.Generator().manual_seed(1))
    assert list(c) == [int(i) for i in t] and len(c) == 4


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler(replacement):
    w = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    c = D.WeightedRandomSampler(w, 5, replacement=replacement, generator=cthtorch.Generator().manual_seed(0))
    t = TD.WeightedRandomSampler(w, 5, replacement=replacement, generator=torch.Generator().manual_seed(0))
    got = list(c)
    assert len(got) == len(c) == len(list(t)) == 5
    assert all(isinstance(i, int) and 0 <= i < 6 for i in got)
    if not replacement:
        assert len(set(got)) == 5
    # heavily weighted index dominates
    big = list(D.WeightedRandomSampler([0.0, 1.0, 0.0], 50))
    assert big == [1] * 50
    same_error(lambda: D.WeightedRandomSampler(w, 0), lambda: TD.WeightedRandomSampler(w, 0))
    same_error(lambda: D.WeightedRandomSampler(w, True), lambda: TD.WeightedRandomSampler(w, True))
    same_error(lambda: D.WeightedRandomSampler(w, 3, replacement=1), lambda: TD.WeightedRandomSampler(w, 3, replacement=1))
    same_error(lambda: D.WeightedRandomSampler([[1., 2.]], 3), lambda: TD.WeightedRandomSampler([[1., 2.]], 3))


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)])
def test_batch_sampler(n, bs, drop):
    c = D.BatchSampler(D.SequentialSampler(range(n)), bs, drop)
    t = TD.BatchSampler(TD.SequentialSampler(range(n)), bs, drop)
    assert list(c) == list(t) and len(c) == len(t)
    same_error(lambda: D.BatchSampler(range(3), 0, False), lambda: TD.BatchSampler(range(3), 0, False))
    same_error(lambda: D.BatchSampler(range(3), 2, 1), lambda: TD.BatchSampler(range(3), 2, 1))


@pytest.mark.parametrize("n", [10, 11, 3])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_distributed_sampler(n, shuffle, drop_last):
    for rank in range(4):
        c = D.DistributedSampler(range(n), num_replicas=4, rank=rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        t = TD.DistributedSampler(range(n), num_replicas=4, rank=rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        for epoch in (0, 3):
            c.set_epoch(epoch)
            t.set_epoch(epoch)
            assert list(c) == list(t)
        assert len(c) == len(t) and c.total_size == t.total_size
    from cthtorch.utils.data.distributed import DistributedSampler
    assert DistributedSampler is D.DistributedSampler


def test_distributed_sampler_mnist_sized_order():
    # the distributed MNIST job's shards: randperm(60000) seeded with seed + epoch, as torch draws it
    for epoch in (0, 1, 7):
        for rank in range(2):
            c = D.DistributedSampler(range(60001), num_replicas=2, rank=rank, seed=1)
            t = TD.DistributedSampler(range(60001), num_replicas=2, rank=rank, seed=1)
            c.set_epoch(epoch)
            t.set_epoch(epoch)
            assert list(c) == list(t) and len(c) == 30001


def test_distributed_sampler_errors():
    same_error(lambda: D.DistributedSampler(range(4), num_replicas=2, rank=2),
               lambda: TD.DistributedSampler(range(4), num_replicas=2, rank=2))
    same_error(lambda: D.DistributedSampler(range(4), num_replicas=2, rank=-1),
               lambda: TD.DistributedSampler(range(4), num_replicas=2, rank=-1))
    # no process group: the default group's error, as torch's
    same_error(lambda: D.DistributedSampler(range(4)), lambda: TD.DistributedSampler(range(4)))


# ---- collation ----

Point = collections.namedtuple("Point", ["x", "y"])


def collate_cases(lib, np_):
    return [
        [lib.tensor([1, 2]), lib.tensor([3, 4])],
        [np_.array([1.5, 2.0]), np_.array([3.0, 4.0])],
        [np_.float32(1.5), np_.float32(2.5)],
        [np_.int64(3), np_.int64(4)],
        [np_.bool_(True), np_.bool_(False)],
        [1.5, 2.5], [1, 2], [True, False], ["a", "b"], [b"x", b"y"],
        [{"a": 1, "b": lib.tensor(2.0)}, {"a": 3, "b": lib.tensor(4.0)}],
        [Point(1, 2.0), Point(3, 4.0)],
        [(1, "s"), (2, "t")], [[1, 2], [3, 4]],
        [{"img": np_.zeros((2, 2), dtype=np_.uint8), "meta": {"id": 1, "tags": ["p", "q"]}},
         {"img": np_.ones((2, 2), dtype=np_.uint8), "meta": {"id": 2, "tags": ["r", "s"]}}],
        [collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)],
    ]


def test_default_collate_matches_torch():
    for c_case, t_case in zip(collate_cases(cthtorch, np), collate_cases(torch, np)):
        c, t = D.default_collate(c_case), TD.default_collate(t_case)
        assert type(c).__name__ == type(t).__name__
        assert tolist(c) == tolist(t), (c_case, c, t)


def test_default_collate_errors():
    same_error(lambda: D.default_collate([[1, 2], [3]]), lambda: TD.default_collate([[1, 2], [3]]))
    same_error(lambda: D.default_collate([object()]), lambda: TD.default_collate([object()]))
    same_error(lambda: D.default_collate([np.array(["a"])]), lambda: TD.default_collate([np.array(["a"])]))


def test_default_convert_matches_torch():
    cases = [np.array([1, 2]), np.float64(2.0), Point(np.array(0), np.array(1)), [np.array([1]), 3],
             (np.array([1]), "s"), {"k": np.zeros(2)}, "str", 5, np.array(["a", "b"])]
    for case in cases:
        c, t = D.default_convert(case), TD.default_convert(case)
        assert type(c).__name__ == type(t).__name__
        assert tolist(c) == tolist(t)
    x = cthtorch.ones(2)
    assert D.default_convert(x) is x


# ---- DataLoader (single process) ----

def loader_pair(n=10, **kw):
    c_ds = D.TensorDataset(cthtorch.arange(n * 2.).view(n, 2), cthtorch.arange(n))
    t_ds = TD.TensorDataset(torch.arange(n * 2.).view(n, 2), torch.arange(n))
    c_kw = {k: (cthtorch.Generator().manual_seed(v) if k == "generator" else v) for k, v in kw.items()}
    t_kw = {k: (torch.Generator().manual_seed(v) if k == "generator" else v) for k, v in kw.items()}
    return D.DataLoader(c_ds, **c_kw), TD.DataLoader(t_ds, **t_kw)


@pytest.mark.parametrize("kw", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
                                {"batch_size": 4, "shuffle": True, "generator": 3},
                                {"shuffle": True, "generator": 0, "batch_size": None}])
def test_dataloader_matches_torch(kw):
    c, t = loader_pair(**kw)
    assert len(c) == len(t)
    assert [tolist(b) for b in c] == [tolist(b) for b in t]


def test_dataloader_custom_samplers_and_collate():
    c, t = loader_pair(sampler=[9, 0, 4], batch_size=2)
    assert [tolist(b) for b in c] == [tolist(b) for b in t] and len(c) == 2
    c, t = loader_pair(batch_sampler=[[1, 2], [5], [0, 9, 8]])
    assert [tolist(b) for b in c] == [tolist(b) for b in t] and len(c) == 3
    dl = D.DataLoader(Seq(7), batch_size=3, collate_fn=lambda b: ("custom", sum(b)))
    assert list(dl) == [("custom", 3), ("custom", 12), ("custom", 6)]


def test_dataloader_pin_memory_is_noop_with_warning():
    dl = D.DataLoader(Seq(4), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        out = list(dl)
    assert [b.tolist() for b in out] == [[0, 1], [2, 3]]


def test_dataloader_iterable_dataset_single_process():
    c = D.DataLoader(Count(0, 7), batch_size=3)
    assert [b.tolist() for b in c] == [[0, 1, 2], [3, 4, 5], [6]] and len(c) == 3
    c = D.DataLoader(Count(0, 7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in c] == [[0, 1, 2], [3, 4, 5]] and len(c) == 2
    c = D.DataLoader(Count(0, 3), batch_size=None)
    assert [b for b in c] == [0, 1, 2]


def test_dataloader_iterable_len_warning():
    dl = D.DataLoader(Count(0, 5), batch_size=None)
    dl.dataset.hi = 5
    n = len(dl)
    dl.dataset.hi = 7
    with pytest.warns(UserWarning, match="was reported to be %d" % n):
        list(dl)


def test_dataloader_argument_errors_match_torch():
    ds_c, ds_t = Seq(4), TSeq(4)

    class TIt(TD.IterableDataset):
        def __iter__(self):
            return iter([])
    cases = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1),
             dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
             dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]], drop_last=True),
             dict(batch_size=None, drop_last=True), dict(multiprocessing_context="fork"),
             dict(num_workers=1, multiprocessing_context="nope"), dict(num_workers=1, multiprocessing_context=3)]
    for kw in cases:
        same_error(lambda: D.DataLoader(ds_c, **kw), lambda: TD.DataLoader(ds_t, **kw))
    for kw in [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])]:
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
            D.DataLoader(Count(0, 2), **kw)
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
            TD.DataLoader(TIt(), **kw)
    dl_c, dl_t = D.DataLoader(ds_c), TD.DataLoader(ds_t)
    same_error(lambda: setattr(dl_c, "batch_size", 3), lambda: setattr(dl_t, "batch_size", 3))
    dl_c.num_workers = 0   # other attributes stay settable


def test_dataloader_multiprocessing_context_accepts_string_and_context():
    import multiprocessing
    dl = D.DataLoader(Seq(2), num_workers=1, multiprocessing_context="spawn")
    assert isinstance(dl.multiprocessing_context, multiprocessing.context.BaseContext)
    ctx = multiprocessing.get_context("fork")
    assert D.DataLoader(Seq(2), num_workers=1, multiprocessing_context=ctx).multiprocessing_context is ctx


def test_worker_number_warning():
    import os
    n = len(os.sched_getaffinity(0)) + 1
    with pytest.warns(UserWarning, match="This DataLoader will create %d worker processes in total" % n):
        D.DataLoader(Seq(2), num_workers=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.DataLoader(Seq(2), num_workers=1)


def test_get_worker_info_in_main_process_is_none():
    assert D.get_worker_info() is None


def test_data_utils_modules_under_torchs_paths():
    """torch.utils.data._utils.collate / worker / pin_memory, which programs import by path (default_collate,
    default_convert, the collate_fn_map extension point, get_worker_info): the same functions the DataLoader
    uses, collating as torch's"""
    import importlib
    for lib in ("cthtorch", "torch"):
        u = importlib.import_module(lib + ".utils.data._utils")
        c = importlib.import_module(lib + ".utils.data._utils.collate")
        assert u.collate is c and isinstance(u.MP_STATUS_CHECK_INTERVAL, float) and u.HAS_NUMPY is True
        assert u.IS_WINDOWS is False and u.worker.get_worker_info() is None
        assert c.default_collate is importlib.import_module(lib + ".utils.data").default_collate
        for name in ("collate", "default_convert", "default_collate_fn_map", "collate_tensor_fn",
                     "np_str_obj_array_pattern", "default_collate_err_msg_format"):
            assert hasattr(c, name), (lib, name)
        assert callable(u.pin_memory.pin_memory) and callable(u.ExceptionWrapper)
    Pt = collections.namedtuple("Pt", "x y")
    batch = [{"a": Pt(1.5, np.array([1, 2])), "b": "s"}, {"a": Pt(2.5, np.array([3, 4])), "b": "t"}]
    from cthtorch.utils.data._utils.collate import default_collate, collate, default_collate_fn_map
    from torch.utils.data._utils.collate import default_collate as t_collate
    ours, theirs = default_collate(batch), t_collate(batch)
    assert ours["b"] == theirs["b"] and type(ours["a"]).__name__ == "Pt"
    assert ours["a"].x.tolist() == theirs["a"].x.tolist() and str(ours["a"].x.dtype) == str(theirs["a"].x.dtype)
    assert ours["a"].y.tolist() == theirs["a"].y.tolist()
    # the extension point: a type's collate function added to a copy of the default map
    fn_map = dict(default_collate_fn_map)
    fn_map[range] = lambda b, *, collate_fn_map=None: [len(r) for r in b]
    assert collate([range(2), range(3)], collate_fn_map=fn_map) == [2, 3]
    from cthtorch.utils.data import dataloader
    assert dataloader._pin is D._utils.pin_memory.pin_memory   # what pin_memory=True applies to each batch


def test_default_collate_refuses_sparse_and_nested_batches_like_torch():
    """a dataset of sparse adjacencies needs its own collate_fn, as under torch (default_collate stacked them
    once sparse stack existed); nested tensors likewise"""
    def batches(L):
        adj = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.ones(2), (2, 2))
        return ([adj, adj], [adj.to_sparse_csr()] * 2,
                [L.nested.nested_tensor([L.ones(2), L.ones(3)])] * 2)
    for ours, theirs in zip(batches(cthtorch), batches(torch)):
        oracle.raises_like(lambda: D.default_collate(ours), lambda: TD.default_collate(theirs))
