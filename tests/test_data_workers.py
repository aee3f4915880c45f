"""DataLoader worker processes: ordering, shared-memory transfer, persistent
workers, worker_init_fn/get_worker_info, and the failure paths (exceptions,
killed workers, timeouts, break/del/errors), which run in a child process with
a time limit and must leave no process and no /dev/shm segment behind."""
import glob
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cthtorch
from cthtorch.utils import data as D

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PidDataset(D.Dataset):
    """Item i: (i, pid of the process that fetched it, a float tensor), optionally slow."""

    def __init__(self, n=24, delay=0.0):
        self.n, self.delay = n, delay

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay * ((i * 7) % 3))   # uneven: later tasks may finish first
        return i, os.getpid(), cthtorch.full((3,), float(i))

    def __len__(self):
        return self.n


class Ranges(D.IterableDataset):
    """The torch docs' pattern: worker_init_fn narrows each worker's copy to its share."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def split_ranges(worker_id):
    info = D.get_worker_info()
    ds = info.dataset
    per = -(-(ds.end - ds.start) // info.num_workers)
    ds.start, ds.end = ds.start + worker_id * per, min(ds.start + (worker_id + 1) * per, ds.end)


class InfoDataset(D.Dataset):
    def __getitem__(self, i):
        info = D.get_worker_info()
        return {"id": info.id, "num_workers": info.num_workers, "seed": info.seed, "same": info.dataset is self,
                "torch_rand": cthtorch.rand(1).item(), "np_rand": float(np.random.rand())}

    def __len__(self):
        return 4


def shm_segments(pids):
    return [p for pid in pids for p in glob.glob("/dev/shm/cthtorch_%d_*" % pid)]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie of ours counts as gone
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


# ---- normal operation ----

@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_batches_in_sampler_order_through_shared_memory(num_workers):
    ds = PidDataset(delay=0.01)
    dl = D.DataLoader(ds, batch_size=4, num_workers=num_workers)
    assert len(dl) == 6
    batches = list(dl)
    assert [b[0].tolist() for b in batches] == [list(range(i, i + 4)) for i in range(0, 24, 4)]
    pids = {p for b in batches for p in b[1].tolist()}
    assert os.getpid() not in pids and len(pids) == num_workers
    for b in batches:   # tensors arrive as shared-memory handles, not pickled bytes
        assert b[2].is_shared() and b[0].is_shared()
        assert b[2].tolist() == [[float(i)] * 3 for i in b[0].tolist()]
    assert wait_gone(pids) == [] and shm_segments(pids) == []


def test_shuffled_loader_matches_single_process():
    ds = PidDataset(n=30)
    g = lambda: cthtorch.Generator().manual_seed(11)  # noqa: E731
    one = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True, generator=g())]
    two = [b[0].tolist() for b in D.DataLoader(ds, batch_size=4, shuffle=True, generator=g(), num_workers=2)]
    assert one == two and sorted(sum(one, [])) == list(range(30))


def test_in_order_false_delivers_everything():
    batches = list(D.DataLoader(PidDataset(delay=0.02), batch_size=2, num_workers=2, in_order=False))
    assert sorted(i for b in batches for i in b[0].tolist()) == list(range(24))


def test_nested_numpy_and_dict_batches_from_workers():
    class Mixed(D.Dataset):
        def __getitem__(self, i):
            return {"img": np.full((2, 2), i, dtype=np.uint8), "label": i, "name": "s%d" % i, "w": float(i) / 2}

        def __len__(self):
            return 5
    out = list(D.DataLoader(Mixed(), batch_size=2, num_workers=2))
    ref = list(D.DataLoader(Mixed(), batch_size=2))
    for a, b in zip(out, ref):
        assert a["img"].dtype == cthtorch.uint8 and a["img"].tolist() == b["img"].tolist()
        assert a["label"].tolist() == b["label"].tolist() and a["name"] == b["name"]
        assert a["w"].dtype == cthtorch.float64 and a["img"].is_shared()


def test_batch_size_none_with_workers():
    out = list(D.DataLoader(PidDataset(n=5), batch_size=None, num_workers=2))
    assert [o[0] for o in out] == [0, 1, 2, 3, 4] and out[0][2].is_shared()


def test_persistent_workers_reuse_processes_across_epochs():
    dl = D.DataLoader(PidDataset(n=12), batch_size=3, num_workers=2, persistent_workers=True)
    first = list(dl)
    pids = {p for b in first for p in b[1].tolist()}
    for b in dl:          # leave an epoch half-way: the next one must start clean
        break
    second = list(dl)
    assert [b[0].tolist() for b in second] == [b[0].tolist() for b in first]
    assert {p for b in second for p in b[1].tolist()} == pids
    it = dl._iterator
    del dl, b, first, second
    import gc
    gc.collect()
    del it
    gc.collect()
    assert wait_gone(pids) == [] and shm_segments(pids) == []


def test_persistent_workers_iterable_dataset_restarts_each_epoch():
    dl = D.DataLoader(Ranges(0, 10), batch_size=3, num_workers=2, worker_init_fn=split_ranges,
                      persistent_workers=True)
    for _ in range(2):
        assert sorted(sum((b.tolist() for b in dl), [])) == list(range(10))


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_iterable_dataset_split_by_worker_init_fn(num_workers):
    dl = D.DataLoader(Ranges(3, 17), batch_size=2, num_workers=num_workers, worker_init_fn=split_ranges)
    got = sum((b.tolist() for b in dl), [])
    assert sorted(got) == list(range(3, 17))
    # without splitting every worker yields the whole range: duplicates, as in PyTorch
    dup = sum((b.tolist() for b in D.DataLoader(Ranges(0, 4), batch_size=2, num_workers=2)), [])
    assert sorted(dup) == sorted(list(range(4)) * 2)


def test_iterable_dataset_drop_last_and_no_batching_with_workers():
    dl = D.DataLoader(Ranges(0, 7), batch_size=2, drop_last=True, num_workers=2, worker_init_fn=split_ranges)
    assert all(len(b) == 2 for b in dl)   # worker shares 0..3 and 4..6: the odd tail of each is dropped
    assert sorted(sum((b.tolist() for b in dl), [])) == [0, 1, 2, 3, 4, 5]
    assert sorted(D.DataLoader(Ranges(0, 5), batch_size=None, num_workers=2, worker_init_fn=split_ranges)) == \
        [0, 1, 2, 3, 4]


def test_get_worker_info_and_seeds():
    g = cthtorch.Generator().manual_seed(5)
    dl = D.DataLoader(InfoDataset(), batch_size=None, num_workers=2, generator=g)
    infos = list(dl)
    assert [i["id"] for i in infos] == [0, 1, 0, 1] and all(i["num_workers"] == 2 for i in infos)
    assert all(i["same"] for i in infos)   # info.dataset is the worker's own copy, the one serving items
    base = int(cthtorch.empty((), dtype=cthtorch.int64).random_(generator=cthtorch.Generator().manual_seed(5)).item())
    assert [i["seed"] for i in infos] == [base, base + 1, base, base + 1]
    assert infos[0]["torch_rand"] != infos[1]["torch_rand"] and infos[0]["np_rand"] != infos[1]["np_rand"]
    again = list(D.DataLoader(InfoDataset(), batch_size=None, num_workers=2,
                              generator=cthtorch.Generator().manual_seed(5)))
    assert [i["torch_rand"] for i in again] == [i["torch_rand"] for i in infos]


def test_worker_info_is_read_only():
    info = D._utils.worker.WorkerInfo(id=0, num_workers=1, seed=1, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 3
    assert repr(info).startswith("WorkerInfo(id=0, num_workers=1, seed=1")


def test_spawn_context():
    dl = D.DataLoader(PidDataset(n=6), batch_size=3, num_workers=2, multiprocessing_context="spawn")
    out = list(dl)
    assert [b[0].tolist() for b in out] == [[0, 1, 2], [3, 4, 5]] and out[0][2].is_shared()


class Failing(D.Dataset):
    def __init__(self, exc, at=3):
        self.exc, self.at = exc, at

    def __getitem__(self, i):
        if i == self.at:
            raise self.exc("bad item %d" % i)
        return i

    def __len__(self):
        return 8


def raise_in_init(worker_id):
    raise ValueError("init failed in %d" % worker_id)


def test_worker_exception_is_reraised_with_traceback():
    dl = D.DataLoader(Failing(ValueError), batch_size=1, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(dl)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):")
    assert "raise self.exc(\"bad item %d\" % i)" in msg and msg.rstrip().endswith("ValueError: bad item 3")


def test_worker_keyerror_message_is_readable_and_iterator_continues():
    it = iter(D.DataLoader(Failing(KeyError, at=1), batch_size=1, num_workers=2))
    assert next(it).tolist() == [0]
    with pytest.raises(KeyError) as e:
        next(it)
    assert str(e.value).startswith("Caught KeyError in DataLoader worker process 1.")
    assert [b.tolist() for b in it] == [[i] for i in range(2, 8)]   # as PyTorch: the iterator stays usable


def test_worker_init_fn_exception():
    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process 0\.(.|\n)*init failed in 0"):
        list(D.DataLoader(PidDataset(n=4), num_workers=1, worker_init_fn=raise_in_init))


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class RaisesTwoArg(D.Dataset):
    def __getitem__(self, i):
        raise TwoArgError(1, 2)

    def __len__(self):
        return 1


def test_exception_types_needing_arguments_become_runtime_error():
    with pytest.raises(RuntimeError, match="Caught TwoArgError in DataLoader worker process 0"):
        list(D.DataLoader(RaisesTwoArg(), num_workers=1))


# ---- failure paths, in a child process with a time limit ----

CHILD_PRELUDE = """
import json, os, signal, sys, time
sys.path.insert(0, %r)
import cthtorch
from cthtorch.utils import data as D

class DS(D.Dataset):
    def __init__(self, n=40, kill_at=-1, sleep_at=-1):
        self.n, self.kill_at, self.sleep_at = n, kill_at, sleep_at
    def __getitem__(self, i):
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.sleep_at:
            time.sleep(30)
        return os.getpid(), cthtorch.ones(1000)
    def __len__(self):
        return self.n

def mine(worker_pids):
    # segments named after this process or its workers (other programs may use /dev/shm too)
    pids = {os.getpid(), *worker_pids}
    return [f for f in os.listdir("/dev/shm") if f.startswith("cthtorch_") and int(f.split("_")[1]) in pids]

def report(**kw):
    print("REPORT " + json.dumps(kw), flush=True)
""" % ROOT


def run_child(body, limit=60):
    code = CHILD_PRELUDE + textwrap.dedent(body)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        p.stdout_text, p.stderr = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    reports = [json.loads(line[7:]) for line in p.stdout_text.splitlines() if line.startswith("REPORT ")]
    return p, reports, p.pid


def assert_clean(child_pid, worker_pids):
    assert wait_gone(worker_pids) == []
    assert shm_segments([child_pid] + list(worker_pids)) == []


def test_break_leaves_nothing_behind():
    p, reps, pid = run_child("""
        dl = D.DataLoader(DS(), batch_size=2, num_workers=2)
        seen = set()
        for b in dl:
            seen.update(b[0].tolist())
            if len(seen) == 2:
                break
        del b
        report(pids=sorted(seen), shm=mine(seen))
    """)
    assert p.returncode == 0, p.stderr
    (r,) = reps
    assert len(r["pids"]) == 2 and r["shm"] == []
    assert_clean(pid, r["pids"])


def test_del_iterator_and_main_error_leave_nothing_behind():
    p, reps, pid = run_child("""
        it = iter(D.DataLoader(DS(), batch_size=2, num_workers=2))
        pids = set(next(it)[0].tolist()) | set(next(it)[0].tolist())
        del it
        report(pids=sorted(pids), shm=mine(pids))
        def train():
            for b in D.DataLoader(DS(), batch_size=2, num_workers=2):
                report(pids=sorted(set(b[0].tolist())))
                raise ZeroDivisionError("in the training loop")
        try:
            train()
        except ZeroDivisionError:
            pass
        report(shm=mine(pids))
    """)
    assert p.returncode == 0, p.stderr
    assert reps[0]["shm"] == [] and reps[2]["shm"] == []
    assert_clean(pid, reps[0]["pids"] + reps[1]["pids"])


def test_exit_mid_epoch_leaves_nothing_behind():
    p, reps, pid = run_child("""
        it = iter(D.DataLoader(DS(), batch_size=2, num_workers=2, prefetch_factor=4))
        b = next(it)
        report(pids=sorted(set(b[0].tolist())))
        sys.exit(0)   # the iterator (and batches in flight) are still alive here
    """)
    assert p.returncode == 0, p.stderr
    time.sleep(0.2)
    assert_clean(pid, reps[0]["pids"])
    assert glob.glob("/dev/shm/cthtorch_%d_*" % pid) == []


def test_worker_killed_by_signal():
    p, reps, pid = run_child("""
        try:
            for b in D.DataLoader(DS(kill_at=5), batch_size=1, num_workers=2):
                pass
        except RuntimeError as e:
            report(msg=str(e))
    """)
    assert p.returncode == 0, p.stderr
    import re
    m = re.fullmatch(r"DataLoader worker \(pid (\d+)\) is killed by signal: Killed\. ", reps[0]["msg"])
    assert m, reps[0]["msg"]
    assert_clean(pid, [int(m.group(1))])


def test_worker_exit_code():
    p, reps, pid = run_child("""
        class Exit(D.Dataset):
            def __getitem__(self, i):
                os._exit(3)
            def __len__(self):
                return 2
        try:
            list(D.DataLoader(Exit(), num_workers=1))
        except RuntimeError as e:
            report(msg=str(e))
    """)
    assert p.returncode == 0, p.stderr
    assert "exited unexpectedly with exit code 3" in reps[0]["msg"]


def test_timeout():
    p, reps, pid = run_child("""
        t0 = time.time()
        try:
            for b in D.DataLoader(DS(sleep_at=2), batch_size=1, num_workers=1, timeout=1):
                pass
        except RuntimeError as e:
            report(msg=str(e), took=time.time() - t0)
    """)
    assert p.returncode == 0, p.stderr
    assert reps[0]["msg"] == "DataLoader timed out after 1 seconds"
    assert reps[0]["took"] < 10
    assert glob.glob("/dev/shm/cthtorch_%d_*" % pid) == []


def test_main_process_killed_workers_exit():
    p, reps, pid = run_child("""
        it = iter(D.DataLoader(DS(), batch_size=2, num_workers=2))
        b = next(it)
        report(pids=[w.pid for w in it._workers])
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert p.returncode == -9
    workers = reps[0]["pids"]
    assert wait_gone(workers, limit=20) == []   # workers notice their parent is gone ...
    assert shm_segments(workers) == []           # ... and unlink the batches nobody will receive


def test_unpicklable_exception_class_reaches_main_process():
    # PyTorch hangs here: the worker's queue cannot pickle a class defined in a
    # function, drops the error, and the main process waits for the batch.
    p, reps, pid = run_child("""
        def make():
            class LocalError(Exception):
                pass
            class Bad(D.Dataset):
                def __getitem__(self, i):
                    if i == 3:
                        raise LocalError("item %d cannot be loaded" % i)
                    return os.getpid(), cthtorch.ones(3)
                def __len__(self):
                    return 8
            return Bad()
        pids = set()
        try:
            for b in D.DataLoader(make(), batch_size=1, num_workers=2):
                pids.update(b[0].tolist())
        except Exception as e:
            report(type=type(e).__name__, msg=str(e), pids=sorted(pids))
    """, limit=60)
    assert p.returncode == 0, p.stderr
    (r,) = reps
    assert r["type"] == "RuntimeError"
    assert r["msg"].startswith("Caught LocalError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):")
    assert ", in __getitem__" in r["msg"]   # the worker's traceback text
    assert "LocalError: item 3 cannot be loaded" in r["msg"]
    assert_clean(pid, r["pids"])
