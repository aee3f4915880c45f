"""The same-node shared-memory all-reduce (cthtorch/distributed/_shm_allreduce)
against MPI's own Allreduce and against the reduction computed locally, on
every rank of the job (any number of ranks). Sizes straddle the pipeline's
block and part boundaries; dtypes and ops are those the path takes, plus
the ones it must leave to MPI. Rank 0 prints "ok node all_reduce <n> shm
calls" when every rank agreed; any mismatch fails the job."""
import functools
import gc

import cthtorch as torch
import cthtorch.distributed as dist
from cthtorch.distributed import _shm_allreduce as shm

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
R = dist.ReduceOp

taken = [0]
_orig = shm.NodeReducer.allreduce


def _counting(self, arr, op_name, outs=None, check=None):
    done = _orig(self, arr, op_name, outs, check)
    taken[0] += bool(done)
    return done


_orig_split = shm.NodeReducer.allreduce_split


def _counting_split(self, arr, own, scale, check=None):   # DDP's last bucket on 2 ranks
    done = _orig_split(self, arr, own, scale, check)
    taken[0] += bool(done)
    return done


shm.NodeReducer.allreduce = _counting
shm.NodeReducer.allreduce_split = _counting_split
shm.BLOCK_BYTES = 1 << 18   # many blocks (and a ragged last one) at these sizes

LOCAL = {"SUM": torch.add, "AVG": torch.add, "PRODUCT": torch.mul, "MIN": torch.minimum, "MAX": torch.maximum,
         "BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor}


def inputs(dt, n):
    g = torch.Generator().manual_seed(1234 + n)
    if dt.is_floating_point:
        return [(torch.randn(n, generator=g) * 3).to(dt) for _ in range(world)]
    return [torch.randint(1, 5, (n,), generator=g).to(dt) for _ in range(world)]


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool(((a == b) | ((a != a) & (b != b))).all())


def mpi_result(t, op):
    old, shm.MIN_BYTES = shm.MIN_BYTES, 1 << 62
    try:
        dist.all_reduce(t, op=op)
    finally:
        shm.MIN_BYTES = old
    return t


failures = []
expected_shm = 0
for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
           torch.int8, torch.uint8, torch.bool]:
    for op in LOCAL:
        if op == "AVG" and not dt.is_floating_point or op in ("BAND", "BOR", "BXOR") and dt.is_floating_point:
            continue
        if dt is torch.bool and op not in ("SUM", "MAX"):
            continue
        for n in (70001, 300007, (1 << 20) + 3):
            vals = inputs(dt, n)
            t = vals[rank].clone()
            before = taken[0]
            dist.all_reduce(t, op=getattr(R, op))
            used = taken[0] > before
            nbytes = n * (4 if dt in (torch.float16, torch.bfloat16) else t.element_size())   # halves go as float32
            expected_shm += nbytes >= shm.MIN_BYTES and dt is not torch.bool and (
                op in ("SUM", "AVG", "PRODUCT") or not dt.is_floating_point)
            ref = mpi_result(vals[rank].clone(), getattr(R, op))
            if not same(t, ref):
                failures.append("%s %s %d: differs from MPI's Allreduce" % (dt, op, n))
            if dt is not torch.bool and world == 2:   # a local reduction in rank order (exact for 2 ranks)
                acc = functools.reduce(LOCAL[op], [v.float() if dt in (torch.float16, torch.bfloat16) else v
                                                   for v in vals])
                if op == "AVG":
                    acc = acc / world
                if not same(t, acc.to(dt)):
                    failures.append("%s %s %d: differs from the local reduction" % (dt, op, n))

# non-contiguous, async, and a tensor that needs the window to grow
x = (torch.arange(600000.).reshape(600, 1000) * (rank + 1)).t()
dist.all_reduce(x, async_op=True).wait()
if not torch.equal(x, torch.arange(600000.).reshape(600, 1000).t() * (world * (world + 1) // 2)):
    failures.append("transposed async")
big = torch.full((3 << 20,), float(rank + 1))
dist.all_reduce(big)
if not bool((big == world * (world + 1) / 2).all()):
    failures.append("grown window")
expected_shm += 2

# tensors in node buffers (as DDP's buckets): reduced in place, same results
from cthtorch.distributed import distributed_c10d as c10d
pg = c10d._group(None)
arrays = pg._node_buffers([4 * 300007, 8 * 70001, 4 * (1 << 20)])
for a, dt in zip(arrays, (torch.float32, torch.float64, torch.float32)):
    t = a.view(dt)
    for op in ("SUM", "PRODUCT"):
        vals = inputs(dt, t.numel())
        t.copy_(vals[rank])
        dist.all_reduce(t, op=getattr(R, op))
        expected_shm += 1
        if not same(t, mpi_result(vals[rank].clone(), getattr(R, op))):
            failures.append("node buffer %s %s %d" % (dt, op, t.numel()))
    t.fill_(rank + 1)
    w = dist.all_reduce(t[8:], async_op=True)   # a view at an offset inside the window
    w.wait()
    expected_shm += 1
    if not (bool((t[8:] == world * (world + 1) / 2).all()) and bool((t[:8] == rank + 1).all())):
        failures.append("node buffer view %s" % dt)

# DDP with buckets in node buffers: gradients equal one process on the whole batch
torch.manual_seed(0)

def mlp():   # two buckets of at least 1 MB: [layer 2, layer 1] and [layer 0]
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 300))


net, ref = mlp(), mlp()
ref.load_state_dict(net.state_dict())
model = torch.nn.parallel.DistributedDataParallel(net)
g = torch.Generator().manual_seed(7)
xs, ys = torch.randn(world * 8, 256, generator=g), torch.randint(0, 300, (world * 8,), generator=g)
for step in range(2):
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(xs[rank * 8:(rank + 1) * 8]), ys[rank * 8:(rank + 1) * 8]).backward()
    ref.zero_grad()
    torch.nn.functional.cross_entropy(ref(xs), ys).backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        if not torch.allclose(p.grad, q.grad, atol=1e-6, rtol=1e-4):
            failures.append("DDP gradient step %d" % step)
in_node = sum(b.buffer.numel() * 4 >= shm.MIN_BYTES for b in model.reducer.buckets)
expected_shm += 2 * in_node
if in_node < 2 or not all(pg._node_reducer._locate(b.buffer)[0] for b in model.reducer.buckets
                          if b.buffer.numel() * 4 >= shm.MIN_BYTES):
    failures.append("DDP buckets not in node buffers (%d)" % in_node)
if taken[0] != expected_shm:
    failures.append("the shared-memory path ran %d times, expected %d" % (taken[0], expected_shm))
# node memory is let go: a deleted DDP model's buckets leave the reducer at once
node = pg._node_reducer
before = len(node.buffers)
for _ in range(3):
    m = torch.nn.parallel.DistributedDataParallel(mlp())
    del m
    gc.collect()
m = torch.nn.parallel.DistributedDataParallel(mlp())
if len(node.buffers) != before + 1:
    failures.append("DDP windows of deleted models were not freed: %d windows, expected %d"
                    % (len(node.buffers), before + 1))
if failures:
    raise SystemExit("rank %d: %s" % (rank, "; ".join(failures)))
dist.barrier()
if rank == 0:
    print("ok node all_reduce", flush=True)
del model, net
gc.collect()
dist.destroy_process_group()
dist.init_process_group("gloo")   # and the job goes on with a new group
t = torch.full((300000,), float(rank + 1))
dist.all_reduce(t)
if not bool((t == world * (world + 1) / 2).all()):
    raise SystemExit("rank %d: all_reduce after re-initialisation" % rank)
dist.destroy_process_group()
if rank == 0:
    print("ok windows freed", flush=True)
