"""share_memory_/is_shared, cthtorch.multiprocessing queues passing tensors as
shared-memory handles, the Hogwild pattern, and segment lifetime (no leaks,
a forked child never unlinks its parent's segment)."""
import gc
import glob
import os

import pytest

import cthtorch
import cthtorch.multiprocessing as mp
from cthtorch import nn
from multiprocessing.reduction import ForkingPickler


def my_segments():
    return glob.glob("/dev/shm/cthtorch_%d_*" % os.getpid())


def roundtrip(t):
    return ForkingPickler.loads(ForkingPickler.dumps(t))


def test_share_memory_and_is_shared():
    before = set(my_segments())
    t = cthtorch.arange(6.).view(2, 3)
    v = t[:, 1:]
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared()                 # views share the moved storage
    assert t.tolist() == [[0., 1., 2.], [3., 4., 5.]]
    v.fill_(9.)
    assert t.tolist() == [[0., 9., 9.], [3., 9., 9.]]
    t.share_memory_()                                      # idempotent
    assert len(set(my_segments()) - before) == 1
    del t, v
    gc.collect()
    assert set(my_segments()) == before


def test_module_share_memory():
    m = nn.Linear(3, 2)
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters())


def test_pickled_tensor_keeps_dtype_view_and_type():
    base = cthtorch.arange(24, dtype=cthtorch.int16).view(4, 6)
    v = base.t()[1:4]
    r = roundtrip(v)
    assert r.dtype == cthtorch.int16 and r.shape == v.shape and r.stride() == v.stride()
    assert r.storage_offset() == v.storage_offset() and r.tolist() == v.tolist()
    assert r.is_shared() and base.is_shared()              # sending moves the sender into shared memory too
    r.add_(100)                                            # same memory on both ends
    assert v.tolist() == r.tolist()
    p = nn.Parameter(cthtorch.ones(2))
    rp = roundtrip(p)
    assert type(rp) is nn.Parameter and rp.requires_grad


def test_handle_can_be_sent_twice_and_name_goes_away():
    t = cthtorch.ones(5)
    a, b = ForkingPickler.dumps(t), ForkingPickler.dumps(t)   # two handles in flight
    ra, rb = ForkingPickler.loads(a), ForkingPickler.loads(b)
    ra.fill_(2.)
    assert rb.tolist() == [2.] * 5 and t.tolist() == [2.] * 5
    del t
    gc.collect()
    assert my_segments() == []          # creator freed, both handles used: the name is gone
    assert ra.tolist() == [2.] * 5      # the mappings keep the memory


def test_non_leaf_requiring_grad_refuses():
    x = cthtorch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(x)


def _child_fill(q, done):
    t = q.get()
    t.fill_(7.)
    done.put((t.is_shared(), t.dtype == cthtorch.float64, t.sum().item()))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_passes_tensor_by_shared_memory(method):
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Queue()
    t = cthtorch.zeros(4, dtype=cthtorch.float64)
    p = ctx.Process(target=_child_fill, args=(q, done))
    p.start()
    q.put(t)
    shared, dt_ok, s = done.get(timeout=60)
    p.join(timeout=60)
    assert p.exitcode == 0 and shared and dt_ok and s == 28.0
    assert t.tolist() == [7.] * 4       # the child wrote into our memory


def _hogwild_worker(rank, model, lock, steps, device):
    opt = cthtorch.optim.SGD(model.parameters(), lr=0.05)
    g = cthtorch.Generator().manual_seed(rank)
    for _ in range(steps):
        x = cthtorch.randn(16, 2, generator=g).to(device)
        y = x @ cthtorch.tensor([[2.0], [-3.0]]) + 1.0
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        with lock:
            model.counter.add_(1)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild_two_processes_train_one_model(method):
    ctx = mp.get_context(method)
    cthtorch.manual_seed(0)
    model = nn.Linear(2, 1)
    model.register_buffer("counter", cthtorch.zeros(()))
    model.share_memory()
    w0 = model.weight.detach().clone()
    lock = ctx.Lock()
    # a device travels in the args, as in pytorch/examples' mnist_hogwild (spawn pickles it)
    procs = [ctx.Process(target=_hogwild_worker, args=(r, model, lock, 60, cthtorch.device("cpu")))
             for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert model.counter.item() == 120           # both processes updated the same memory
    assert not cthtorch.equal(model.weight.detach(), w0)
    assert cthtorch.allclose(model.weight.detach(), cthtorch.tensor([[2.0, -3.0]]), atol=0.3)
    assert abs(model.bias.item() - 1.0) < 0.3


def test_forked_child_freeing_inherited_tensor_keeps_parent_segment():
    t = cthtorch.arange(4.).share_memory_()
    pid = os.fork()
    if pid == 0:   # the child frees its inherited copy, then exits without cleanup
        del t
        gc.collect()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert len(my_segments()) == 1
    assert roundtrip(t).tolist() == [0., 1., 2., 3.]   # the name still attaches
    del t
    gc.collect()
    assert my_segments() == []


def test_sharing_strategy_api():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("bogus")
    assert mp.Queue is not None and mp.Process is not None and callable(mp.get_context)
