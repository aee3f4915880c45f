"""Every collective on 2 ranks, recorded so that cthtorch's MPI engine and
PyTorch's gloo backend can be compared record for record.

    python -m cthtorch.distributed.run --nproc_per_node=2 dist_collectives.py cthtorch OUTDIR
    python dist_collectives.py torch OUTDIR PORT        (torch.multiprocessing.spawn, gloo)

Each rank writes OUTDIR/<impl>-<rank>.json: [[name, value], ...] where a value
is a tensor's (dtype, shape, values), a plain value, or an error's type and
message (or only its type, where gloo's text cannot be matched: FATAL checks
that carry a timestamp).
"""
import datetime
import json
import os
import sys


def checks(torch, dist, rank, world):
    out = []
    R = dist.ReduceOp

    def T(x):
        if isinstance(x, torch.Tensor):
            return [str(x.dtype), list(x.shape), x.tolist()]
        if isinstance(x, (list, tuple)):
            return [T(v) for v in x]
        return x

    def rec(name, fn, msg=True):
        if os.environ.get("DIST_CHECKS_TRACE"):   # find a check that desynchronises the ranks
            dist.barrier()
            print(rank, name, flush=True)
        try:
            out.append([name, T(fn())])
        except Exception as e:   # noqa: BLE001 -- the error is the record
            out.append([name, "%s: %s" % (type(e).__name__, str(e).split("\n")[0] if msg else "")])

    def vals(dt):
        if dt == torch.bool:
            return torch.tensor([True, False, True, False] if rank == 0 else [True, True, False, False])
        return torch.tensor([1, 2, 3, 4] if rank == 0 else [3, 2, 1, 6], dtype=dt)

    # gloo has no int16 (MPI has: cthtorch reduces it too)
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64]
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"):
        for dt in dtypes:
            if (op == "AVG") != dt.is_floating_point and (op == "AVG" or op in ("BAND", "BOR", "BXOR")):
                continue   # gloo reports these errors at a later wait; test_distributed checks cthtorch's
            def f(op=op, dt=dt):
                t = vals(dt)
                dist.all_reduce(t, op=getattr(R, op))
                return t
            rec("all_reduce %s %s" % (op, dt), f)
    # non-contiguous, requires_grad, async, 0-d, empty
    rec("all_reduce transposed", lambda: (lambda t: (dist.all_reduce(t.t()), t)[1])(
        torch.arange(6.).reshape(2, 3) * (rank + 1)))
    rec("all_reduce requires_grad", lambda: (lambda t: (dist.all_reduce(t), t.detach())[1])(
        torch.ones(3, requires_grad=True)))
    rec("all_reduce 0-d", lambda: (lambda t: (dist.all_reduce(t), t)[1])(torch.tensor(float(rank + 2))))
    rec("all_reduce empty", lambda: (lambda t: (dist.all_reduce(t), t)[1])(torch.ones(0)))

    def async_ar():
        t = torch.ones(4) * (rank + 1)
        w = dist.all_reduce(t, async_op=True)
        fut = w.get_future()
        done = w.wait()
        return [done, w.is_completed(), w.is_success(), fut.wait(), w.result()]
    rec("all_reduce async", async_ar)
    rec("broadcast", lambda: (lambda t: (dist.broadcast(t, src=1), t)[1])(torch.arange(4.) + 10 * rank))
    if torch.__name__ == "cthtorch":   # gloo broadcasts a strided view as if it were contiguous
        rec("broadcast bf16 strided", lambda: (lambda t: (dist.broadcast(t[:, ::2], src=0), t)[1])(
            (torch.arange(8.).reshape(2, 4) + 10 * rank).to(torch.bfloat16)))
    rec("broadcast async", lambda: (lambda t: dist.broadcast(t, 0, async_op=True).get_future().wait())(
        torch.ones(2) * rank))
    rec("broadcast bad src", lambda: dist.broadcast(torch.zeros(2), src=5))
    rec("reduce dst", lambda: (lambda t: (dist.reduce(t, dst=1), t if rank == 1 else None)[1])(torch.ones(2) * (rank + 1)))
    rec("reduce max", lambda: (lambda t: (dist.reduce(t, dst=0, op=R.MAX), t if rank == 0 else None)[1])(vals(torch.int64)))

    def ag(dt):
        outs = [torch.zeros(2, 2, dtype=dt) for _ in range(world)]
        dist.all_gather(outs, (torch.arange(4) + 4 * rank).reshape(2, 2).to(dt))
        return outs
    rec("all_gather", lambda: ag(torch.float32))
    rec("all_gather bool", lambda: ag(torch.bool))
    rec("all_gather int64", lambda: ag(torch.int64))
    rec("all_gather wrong length", lambda: dist.all_gather([torch.zeros(2)], torch.ones(2)))
    rec("all_gather wrong size", lambda: dist.all_gather([torch.zeros(3), torch.zeros(3)], torch.ones(2)))
    rec("all_gather wrong dtype", lambda: dist.all_gather([torch.zeros(2, dtype=torch.int32)] * 2, torch.ones(2)))
    rec("all_gather_into_tensor", lambda: (lambda o: (dist.all_gather_into_tensor(o, torch.ones(3) * rank), o)[1])(
        torch.zeros(6)))
    rec("all_gather_into_tensor 2d", lambda: (lambda o: (dist.all_gather_into_tensor(o, torch.ones(1, 3) * rank), o)[1])(
        torch.zeros(2, 3)))
    rec("all_gather_into_tensor wrong size", lambda: dist.all_gather_into_tensor(torch.zeros(5), torch.ones(2)))
    rec("gather", lambda: (lambda l: (dist.gather(torch.ones(2) * rank, l, dst=0), l)[1])(
        [torch.zeros(2), torch.zeros(2)] if rank == 0 else None))
    rec("gather list on non-dst", lambda: dist.gather(torch.ones(2), [torch.zeros(2)] * 2, dst=1 - rank))
    rec("scatter", lambda: (lambda t: (dist.scatter(t, [torch.arange(2.) + 10 * i for i in range(2)] if rank == 0
                                                    else None, src=0), t)[1])(torch.zeros(2)))
    rec("scatter list on non-src", lambda: dist.scatter(torch.zeros(2), [torch.zeros(2)] * 2, src=1 - rank))
    rec("reduce_scatter", lambda: (lambda o: (dist.reduce_scatter(o, [torch.ones(2) * (rank + 1),
                                                                    torch.ones(2) * 10 * (rank + 1)]), o)[1])(torch.zeros(2)))
    rec("reduce_scatter_tensor", lambda: (lambda o: (dist.reduce_scatter_tensor(o, torch.arange(4.) * (rank + 1)), o)[1])(
        torch.zeros(2)))
    rec("reduce_scatter_tensor avg", lambda: (lambda o: (dist.reduce_scatter_tensor(o, torch.arange(4.) * (rank + 1),
                                                                                     op=R.AVG), o)[1])(torch.zeros(2)))
    rec("reduce_scatter_tensor wrong size", lambda: dist.reduce_scatter_tensor(torch.zeros(2), torch.ones(5)),
        msg=False)
    rec("all_to_all_single", lambda: (lambda o: (dist.all_to_all_single(o, torch.arange(4.) + 10 * rank), o)[1])(
        torch.zeros(4)))
    rec("all_to_all_single splits", lambda: (lambda o: (dist.all_to_all_single(
        o, torch.arange(3.) + 10 * rank, [1, 2] if rank == 0 else [2, 1], [1, 2] if rank == 0 else [2, 1]), o)[1])(
        torch.zeros(3)))
    rec("all_to_all", lambda: (lambda o: (dist.all_to_all(o, [torch.ones(2) * (rank * 10 + i) for i in range(2)]), o)[1])(
        [torch.zeros(2), torch.zeros(2)]))
    rec("barrier", lambda: dist.barrier())
    rec("barrier async", lambda: dist.barrier(async_op=True).wait())
    rec("monitored_barrier", lambda: dist.monitored_barrier(timeout=datetime.timedelta(seconds=30)))

    def p2p():
        if rank == 0:
            a = torch.zeros(3)
            src = dist.recv(a)
            b = torch.zeros(2, 2)
            w = dist.irecv(b, src=1, tag=7)
            w.wait()
            return [src, a, b]
        dist.send(torch.arange(3.), dst=0)
        dist.isend(torch.arange(4.).reshape(2, 2), dst=0, tag=7).wait()
        return None
    rec("send/recv", p2p)
    rec("send to self", lambda: dist.send(torch.zeros(2), dst=rank))

    def batch():
        other = 1 - rank
        got = torch.zeros(2)
        ops = [dist.P2POp(dist.isend, torch.ones(2) * (rank + 5), other), dist.P2POp(dist.irecv, got, other)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        return got
    rec("batch_isend_irecv", batch)
    rec("P2POp bad op", lambda: dist.P2POp(dist.all_reduce, torch.zeros(1), 0))

    def objs():
        lst = [None, None]
        dist.all_gather_object(lst, {"rank": rank, "t": [rank] * rank})
        b = ["x", 1] if rank == 0 else [None, None]
        dist.broadcast_object_list(b, src=0)
        g = [None, None] if rank == 1 else None
        dist.gather_object(("g", rank), g, dst=1)
        s = [None]
        dist.scatter_object_list(s, [{"to": 0}, {"to": 1}] if rank == 0 else None, src=0)
        return [lst, b, g, s]
    rec("object collectives", objs)
    rec("all_gather_object short list", lambda: dist.all_gather_object([None], rank))

    g1 = dist.new_group([1])
    rec("group of rank 1", lambda: [dist.get_rank(g1), dist.get_world_size(g1) if rank == 1 else None])
    rec("group all_reduce", lambda: (lambda t: (dist.all_reduce(t, group=g1), t)[1])(torch.ones(1) * (rank + 1)))
    g01 = dist.new_group([1, 0])
    rec("group [1,0]", lambda: [dist.get_rank(g01), dist.get_process_group_ranks(g01)])
    rec("new_group out of range", lambda: dist.new_group([0, 5]))
    cur, subs = dist.new_subgroups(group_size=1)
    rec("new_subgroups", lambda: [dist.get_rank(cur), dist.get_world_size(cur), len(subs)])
    rec("new_subgroups bad size", lambda: dist.new_subgroups(group_size=3))
    rec("ranks", lambda: [dist.get_rank(), dist.get_world_size(), str(dist.get_backend()), dist.is_initialized()])
    rec("ReduceOp", lambda: [str(R.SUM), repr(R.AVG), R.SUM == R.SUM, R.SUM == R.MAX])
    rec("Backend", lambda: [dist.Backend("GLOO"), dist.Backend("mpi"), dist.Backend.NCCL])
    rec("init twice", lambda: dist.init_process_group("gloo"))
    if torch.__name__ == "cthtorch":
        extensions(torch, dist, rank, rec, vals)
    return out


def extensions(torch, dist, rank, rec, vals):
    """cthtorch only (gloo cannot run these, or reports them late): the
    test states what is expected."""
    R = dist.ReduceOp
    rec("ext avg int", lambda: dist.all_reduce(vals(torch.int32), op=R.AVG))
    rec("ext band float", lambda: dist.all_reduce(torch.ones(2), op=R.BAND))
    rec("ext int16 sum", lambda: (lambda t: (dist.all_reduce(t), t)[1])(vals(torch.int16)))
    # 2048 + 1 is 2049 in float32, which float16 rounds to 2048 (as gloo's float16 sum)
    rec("ext fp16 rounding", lambda: (lambda t: (dist.all_reduce(t), t)[1])(
        torch.tensor([2048.0 if rank == 0 else 1.0, 0.1], dtype=torch.float16)))
    rec("ext bf16 avg", lambda: (lambda t: (dist.all_reduce(t, op=R.AVG), t)[1])(
        torch.tensor([1.0, 3.0]).to(torch.bfloat16) * (rank + 1)))

    def strided_recv():
        if rank == 0:
            b = torch.zeros(2, 3)
            dist.irecv(b.t(), src=1).wait()
            return b
        dist.send(torch.arange(6.).reshape(3, 2), dst=1 - rank)
    rec("ext strided recv", strided_recv)

    def overlap():
        big = torch.ones(1 << 20) * (rank + 1)
        w = dist.all_reduce(big, async_op=True)
        x = torch.ones(256, 256) @ torch.ones(256, 256)   # runs while MPI works
        w.wait()
        f = dist.all_reduce(torch.ones(2), async_op=True).get_future().then(lambda fut: fut.value()[0] * 10)
        return [float(big[0]), float(big[-1]), float(x[0, 0]), f.wait()]
    rec("ext async overlap", overlap)

    def reduce_scatter_strided():
        out = torch.zeros(2, 2)
        dist.reduce_scatter_tensor(out.t(), torch.arange(8.).reshape(4, 2) * (rank + 1))
        return out
    rec("ext reduce_scatter_tensor into strided", reduce_scatter_strided)

    def late_barrier():
        import datetime
        import time
        if rank == 1:
            time.sleep(1.5)
        return dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.5))
    rec("ext monitored_barrier timeout", late_barrier)


def run(impl, rank, world, outdir):
    if impl == "torch":
        import torch
    else:
        import cthtorch as torch
    dist = torch.distributed
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=int(os.environ.get("DIST_CHECKS_TIMEOUT", "60"))))
    records = checks(torch, dist, rank, world)
    dist.barrier()
    dist.destroy_process_group()
    records.append(["after destroy", "%s" % (lambda: None)() if False else _err(lambda: dist.get_rank())])
    with open(os.path.join(outdir, "%s-%d.json" % (impl, rank)), "w") as f:
        json.dump(records, f)


def _err(fn):
    try:
        return fn()
    except Exception as e:   # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)


def _torch_child(rank, outdir, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    run("torch", rank, 2, outdir)


if __name__ == "__main__":
    impl, outdir = sys.argv[1], sys.argv[2]
    import warnings
    warnings.simplefilter("ignore")
    if impl == "torch":
        import torch.multiprocessing as tmp
        tmp.spawn(_torch_child, args=(outdir, int(sys.argv[3])), nprocs=2)
    else:
        run(impl, int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), outdir)
