"""Run on 2 ranks (python -m cthtorch.distributed.run --nproc_per_node=2 ...):
checks DistributedDataParallel, its hooks and Join, and DistributedSampler
against a single process that sees every rank's data. Each check prints
"ok <name>" on rank 0; an assertion failing on any rank fails the job.
The test (tests/test_ddp.py) expects every check's line."""
import os
import sys
import threading
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402

import cthtorch as torch  # noqa: E402
import cthtorch.distributed as dist  # noqa: E402
import cthtorch.nn as nn  # noqa: E402
import cthtorch.nn.functional as F  # noqa: E402
from cthtorch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from cthtorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

B = 8   # samples per rank per step


class Net(nn.Module):
    def __init__(self, unused_layers=False):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 3)
        if unused_layers:
            self.extra = nn.Linear(16, 3)     # used only when asked (find_unused_parameters)
            self.never = nn.Linear(3, 3)      # never used

    def forward(self, x, use_extra=False):
        h = F.relu(self.fc2(F.relu(self.fc1(x))))
        out = self.fc3(h)
        return out + self.extra(h) if use_extra else out


def report(name, *details):
    """Rank 0 says a check passed (a failure on any rank fails the job)."""
    if dist.get_rank() == 0:
        print("ok", name, *details, flush=True)


def batch(step, rank):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(B, 10, generator=g), torch.randint(0, 3, (B,), generator=g)


def full_batch(step, world):
    xs, ys = zip(*(batch(step, r) for r in range(world)))
    return torch.cat(xs), torch.cat(ys)


def fresh(seed=0, unused_layers=False):
    torch.manual_seed(seed)
    return Net(unused_layers)


def close(a, b, what, tol=1e-5):
    a, b = np.asarray(a.detach() if isinstance(a, torch.Tensor) else a), np.asarray(
        b.detach() if isinstance(b, torch.Tensor) else b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
        raise AssertionError("%s: rank %d differs\n%s\n%s" % (what, dist.get_rank(), a, b))


def same_across_ranks(t, what):
    parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t.detach().contiguous())
    for p in parts[1:]:
        close(p, parts[0], what, tol=0)


def grads(model, names):
    return {n: p.grad for n, p in model.named_parameters() if n in names}


TRAINED = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias")


def check_matches_one_process(rank, world, **ddp_kwargs):
    """Three SGD steps of DDP equal three steps of one process on the
    concatenated batch: gradients after each backward, parameters after."""
    model = DDP(fresh(seed=rank), **ddp_kwargs)     # rank 1 starts different: construction broadcasts rank 0's
    ref = fresh(seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = batch(step, rank)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        fx, fy = full_batch(step, world)
        ref_opt.zero_grad()
        F.cross_entropy(ref(fx), fy).backward()
        for n, p in model.module.named_parameters():
            close(p.grad, dict(ref.named_parameters())[n].grad, "grad %s step %d %s" % (n, step, ddp_kwargs))
        opt.step()
        ref_opt.step()
    for (n, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
        close(p, q, "param %s %s" % (n, ddp_kwargs))
    return model


def check_buckets(rank, world):
    model = check_matches_one_process(rank, world, bucket_cap_mb=0.0002)   # 209 bytes: several buckets
    r = model.reducer
    assert len(r.buckets) == 3, len(r.buckets)   # [fc3.bias fc3.weight fc2.bias] [fc2.weight] [fc1.*]
    order = [i for b in r.buckets for i in b.param_indices]
    assert sorted(order) == list(range(len(r.params)))
    # reverse parameter order: the first bucket holds the last parameters
    assert r.buckets[0].param_indices[0] == len(r.params) - 1, r.buckets[0].param_indices
    report("buckets", len(r.buckets))


def check_no_sync(rank, world):
    model = DDP(fresh(seed=rank))
    ref = fresh()
    with model.no_sync():
        for step in range(2):
            x, y = batch(step, rank)
            F.cross_entropy(model(x), y).backward()
    # local only: the gradients differ between the ranks here
    local = model.module.fc1.weight.grad.clone()
    x, y = batch(2, rank)
    F.cross_entropy(model(x), y).backward()
    for step in range(3):
        fx, fy = full_batch(step, world)
        F.cross_entropy(ref(fx), fy).backward()
    for n in TRAINED:
        close(dict(model.module.named_parameters())[n].grad, dict(ref.named_parameters())[n].grad, "no_sync " + n)
    assert not np.allclose(np.asarray(local), np.asarray(ref.fc1.weight.grad)) or world == 1
    report("no_sync")


def check_find_unused(rank, world):
    model = DDP(fresh(unused_layers=True), find_unused_parameters=True)
    ref = fresh(unused_layers=True)
    for step in range(2):
        model.zero_grad()
        ref.zero_grad()
        x, y = batch(step, rank)
        # rank 0 uses `extra`, rank 1 does not; nobody uses `never`
        F.cross_entropy(model(x, use_extra=(rank == 0)), y).backward()
        # the reference: the mean over ranks of each rank's own loss gradient
        for r in range(world):
            xr, yr = batch(step, r)
            (F.cross_entropy(ref(xr, use_extra=(r == 0)), yr) / world).backward()
        for n, p in model.module.named_parameters():
            q = dict(ref.named_parameters())[n]
            if n.startswith("never"):
                assert p.grad is None and q.grad is None, n
            else:
                close(p.grad, q.grad, "find_unused %s step %d" % (n, step))
    report("find_unused_parameters")


def check_unused_without_find_unused(rank, world):
    model = DDP(fresh(unused_layers=True))
    x, y = batch(0, rank)
    F.cross_entropy(model(x), y).backward()   # `extra` and `never` get no gradient
    try:
        model(x)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e), e
        assert "Parameter indices which did not receive grad for rank %d: 6 7 8 9" % rank in str(e), e
    else:
        raise AssertionError("no error for unused parameters")
    model.reducer.remove_hooks()
    report("unused parameter error")


def check_bucket_view(rank, world):
    model = check_matches_one_process(rank, world, gradient_as_bucket_view=True, bucket_cap_mb=0.0002)
    r = model.reducer
    for i, p in enumerate(r.params):
        b, pos = r.slot[i]
        if p.grad is not None:
            assert p.grad.data_ptr() == b.views[pos].data_ptr(), i
    report("gradient_as_bucket_view")


def check_static_graph(rank, world):
    check_matches_one_process(rank, world, static_graph=True, bucket_cap_mb=0.0002)
    report("static_graph")


def check_comm_hooks(rank, world):
    m = DDP(fresh())
    m.register_comm_hook(None, default_hooks.allreduce_hook)
    try:
        m.register_comm_hook(None, default_hooks.allreduce_hook)
    except RuntimeError as e:
        assert "can only be called once" in str(e)
    m.reducer.remove_hooks()
    for hook, tol in ((default_hooks.allreduce_hook, 1e-5), (default_hooks.fp16_compress_hook, 2e-3)):
        model = DDP(fresh(), bucket_cap_mb=0.0002)
        model.register_comm_hook(None, hook)
        ref = fresh()
        x, y = batch(0, rank)
        F.cross_entropy(model(x), y).backward()
        fx, fy = full_batch(0, world)
        F.cross_entropy(ref(fx), fy).backward()
        for n in TRAINED:
            close(dict(model.module.named_parameters())[n].grad, dict(ref.named_parameters())[n].grad,
                  "%s %s" % (hook.__name__, n), tol=tol)
        model.reducer.remove_hooks()

    def noop(state, bucket):   # no communication: each rank keeps its local gradient
        state.append(bucket.index())
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut
    seen = []
    model = DDP(fresh(), bucket_cap_mb=0.0002)
    model.register_comm_hook(seen, noop)
    local = fresh()
    x, y = batch(0, rank)
    F.cross_entropy(model(x), y).backward()
    F.cross_entropy(local(x), y).backward()
    assert seen == list(range(len(model.reducer.buckets))), seen
    for n in TRAINED:
        close(dict(model.module.named_parameters())[n].grad, dict(local.named_parameters())[n].grad, "noop " + n)
    model.reducer.remove_hooks()
    report("comm hooks")


def check_join(rank, world):
    """Uneven inputs: rank r has 3 + 2r batches. Joined ranks contribute zero
    gradients and the average still divides by the initial world size."""
    model = DDP(fresh(), bucket_cap_mb=0.0002)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref = fresh()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    counts = [3 + 2 * r for r in range(world)]
    with model.join():
        for step in range(counts[rank]):
            opt.zero_grad()
            x, y = batch(step, rank)
            F.cross_entropy(model(x), y).backward()
            opt.step()
    for step in range(max(counts)):
        ref_opt.zero_grad()
        for r in range(world):
            if step < counts[r]:
                xr, yr = batch(step, r)
                (F.cross_entropy(ref(xr), yr) / world).backward()
        ref_opt.step()
    for (n, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
        close(p, q, "join " + n)
        same_across_ranks(p, "join " + n)
    model.reducer.remove_hooks()
    report("join")


def _node_net():
    torch.manual_seed(0)   # weights of 512 KB and 1 MB: buckets big enough for node shared memory
    return nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 3))


def _node_batch(step, rank):
    g = torch.Generator().manual_seed(7000 + 100 * step + rank)
    return torch.randn(B, 128, generator=g), torch.randint(0, 3, (B,), generator=g)


def check_node_buckets(rank, world):
    """Buckets in node shared memory. The first (L3 and L2) is reduced on the
    communication thread: each rank sums its averages straight into .grad,
    and may only write its slots again once every peer has read them (each
    rank counts its finished sums in node memory; the next backward waits
    for the peers' counts). The last (L1), with 2 ranks, is all-reduced
    split on the thread of backward: each rank sums half into both ranks'
    buckets, and L1's .grad become views of the bucket (as with
    gradient_as_bucket_view). Rank 1 is late (a pause before each sum) and
    rank 0 goes straight on (no collective between the steps): were the
    release not awaited, rank 0 would overwrite a slot rank 1 is still to
    read; were the split's last barrier missing, rank 0's .grad would lack
    rank 1's half. Step 1 zeroes .grad instead of dropping it, so backward
    accumulates into the bucket views. Gradients equal one process's, bit
    for bit on every rank, and so do the parameters after the SGD steps;
    then uneven inputs under join(), where a joined rank's shadow
    all-reduces take MPI's path."""
    import time
    from cthtorch.distributed import _shm_allreduce
    from cthtorch.distributed import distributed_c10d as c10d
    model = DDP(_node_net(), bucket_cap_mb=0.5)
    r = model.reducer
    assert [b.param_indices for b in r.buckets] == [[5, 4, 3, 2], [1, 0]], [b.param_indices for b in r.buckets]
    assert all(b.node for b in r.buckets) and r._release_needed(), "no bucket in node shared memory"
    split = world == 2
    node = c10d._group(None)._node()
    threads, split_threads = [], []   # the thread of each sum into .grad, and of each split sum
    _orig_into, _orig_split = node._reduce_into, node._split_sum

    def watched_reduce_into(*args):
        threads.append(threading.current_thread())
        if rank == 1:
            time.sleep(0.2)
        _orig_into(*args)

    def watched_split_sum(*args):
        split_threads.append(threading.current_thread())
        if rank == 1:
            time.sleep(0.2)
        _orig_split(*args)
    node._reduce_into, node._split_sum = watched_reduce_into, watched_split_sum
    ref = _node_net()
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    seen = []
    first, last = r.buckets
    for step in range(3):
        opt.zero_grad(set_to_none=step != 1)
        if step == 1 and split:
            assert all(r.params[i].grad is last.views[k] for k, i in enumerate(last.param_indices))
        x, y = _node_batch(step, rank)
        del threads[:], split_threads[:]
        F.cross_entropy(model(x), y).backward()
        assert r._release_pending
        # the first bucket's sum ran on the communication thread, into .grad; its slot still holds this
        # rank's share
        assert threads and threads[0] is not threading.main_thread(), threads
        assert first.copied_out
        assert not torch.equal(first.views[0], r.params[first.param_indices[0]].grad), "first bucket in place"
        if split:
            # the last bucket's on this thread, at the end of backward; its .grad are views of the bucket
            assert len(threads) == 1 and split_threads == [threading.main_thread()], (threads, split_threads)
            for k, i in enumerate(last.param_indices):
                g = r.params[i].grad
                assert g is last.views[k] and g.data_ptr() == last.views[k].data_ptr()
        else:
            assert len(threads) == 2 and threads[-1] is threading.main_thread() and not split_threads, threads
            assert last.copied_out
        seen.append([p.grad.clone() for p in model.module.parameters()])
        opt.step()
    node._reduce_into, node._split_sum = _orig_into, _orig_split
    for step in range(3):
        ref_opt.zero_grad()
        xs, ys = zip(*(_node_batch(step, q) for q in range(world)))
        F.cross_entropy(ref(torch.cat(xs)), torch.cat(ys)).backward()
        for (n, q), g in zip(ref.named_parameters(), seen[step]):
            close(g, q.grad, "node bucket grad %s step %d" % (n, step))
            same_across_ranks(g, "node bucket grad %s step %d" % (n, step))
        ref_opt.step()
    for (n, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
        close(p, q, "node bucket param " + n)
        same_across_ranks(p, "node bucket param " + n)
    assert set(model.state_dict()) == {"module." + k for k in ref.state_dict()}
    counts = [2 + r_ for r_ in range(world)]
    with model.join():
        for step in range(counts[rank]):
            opt.zero_grad()
            x, y = _node_batch(10 + step, rank)
            F.cross_entropy(model(x), y).backward()
            opt.step()
    for step in range(max(counts)):
        ref_opt.zero_grad()
        for q in range(world):
            if step < counts[q]:
                xq, yq = _node_batch(10 + step, q)
                (F.cross_entropy(ref(xq), yq) / world).backward()
        ref_opt.step()
    for (n, p), (_, q) in zip(model.module.named_parameters(), ref.named_parameters()):
        close(p, q, "node bucket join " + n, tol=1e-4)
        same_across_ranks(p, "node bucket join " + n)
    report("node buckets", len(r.buckets))


def check_broadcast_buffers(rank, world):
    for flag in (True, False):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        with warnings.catch_warnings(record=True) as w:   # deprecated in torch 2.13, still honoured
            warnings.simplefilter("always")
            model = DDP(net, broadcast_buffers=flag)
        assert any(issubclass(x.category, FutureWarning) and "broadcast_buffers" in str(x.message) for x in w)
        g = torch.Generator().manual_seed(rank)
        for _ in range(2):
            model(torch.randn(6, 4, generator=g) * (rank + 1)).sum().backward()
        model.eval()
        with torch.no_grad():
            model(torch.randn(6, 4, generator=g))   # syncs (flag) before a forward that changes nothing
        means = [torch.zeros(4) for _ in range(world)]
        dist.all_gather(means, net[1].running_mean.clone())
        equal = all(np.array_equal(np.asarray(m), np.asarray(means[0])) for m in means)
        assert equal == flag or world == 1, (flag, means)
        model.reducer.remove_hooks()
    report("broadcast_buffers")


def check_construction_errors(rank, world):
    frozen = nn.Linear(2, 2).requires_grad_(False)
    for fn, text in ((lambda: DDP(frozen), "DistributedDataParallel is not needed when a module doesn't have any "
                                           "parameter that requires a gradient."),
                     (lambda: DDP(nn.Linear(2, 2), device_ids=[0]), "DistributedDataParallel device_ids and "
                                                                    "output_device arguments only work with")):
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            assert text in str(e), e
        else:
            raise AssertionError("no error: " + text)
    report("construction errors")


def check_sampler_vs_torch(rank, world):
    from cthtorch.utils.data.distributed import DistributedSampler
    try:
        import torch as real_torch
    except ImportError:
        if os.environ.get("CTHTORCH_REQUIRE_TORCH") == "1":
            raise
        report("sampler (torch absent: order not compared)")
        return
    from torch.utils.data.distributed import DistributedSampler as TS
    ds = list(range(103))
    for epoch in range(3):
        s = DistributedSampler(ds, seed=7)        # num_replicas and rank from the process group
        t = TS(ds, num_replicas=world, rank=rank, seed=7)
        s.set_epoch(epoch)
        t.set_epoch(epoch)
        assert (s.num_replicas, s.rank) == (world, rank)
        assert list(s) == list(t), (epoch, list(s), list(t))
    gathered = [None] * world
    dist.all_gather_object(gathered, list(s))
    flat = sorted(i for part in gathered for i in part)
    assert set(flat) == set(ds) and len(flat) == len(s) * world, flat
    del real_torch
    report("sampler")


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    checks = [check_construction_errors, check_buckets, check_no_sync, check_find_unused, check_bucket_view,
              check_static_graph, check_comm_hooks, check_join, check_node_buckets, check_broadcast_buffers,
              check_sampler_vs_torch,
              check_unused_without_find_unused]
    for c in checks:
        c(rank, world)
        sys.stdout.flush()
    dist.barrier()
    report("all done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
