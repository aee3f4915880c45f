"""torch.multiprocessing.spawn cases for tests/test_distributed.py: prints
one JSON line per case with what spawn returned or raised.

    dist_spawn.py PORT PORT PORT PORT

One free port per case, each found free by the caller: port + i was never
checked, and when another process held it (an ephemeral client port of a
busy machine) rank 0's store could not listen, so a case ended with that
DistNetworkError (ProcessRaisedException) instead of its own failure.
"""
import json
import os
import signal
import sys

import cthtorch as torch
import cthtorch.distributed as dist
import cthtorch.multiprocessing as mp


def child(rank, mode, port, shared):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2)
    t = torch.ones(3) * (rank + 1)
    dist.all_reduce(t)
    shared[rank] = t.sum()
    if rank == 1 and mode == "raise":
        raise ValueError("child 1 fails")
    if rank == 1 and mode == "exit":
        sys.exit(4)
    if rank == 1 and mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    dist.barrier()


if __name__ == "__main__":
    ports = [int(p) for p in sys.argv[1:5]]
    for i, mode in enumerate(["ok", "raise", "exit", "kill"]):
        shared = torch.zeros(2)
        shared.share_memory_()
        try:
            r = mp.spawn(child, args=(mode, ports[i], shared), nprocs=2)
            out = {"mode": mode, "returned": r, "shared": shared.tolist()}
        except Exception as e:   # noqa: BLE001 -- the error is the result
            out = {"mode": mode, "type": type(e).__name__, "msg": str(e), "index": e.error_index,
                   "exit_code": getattr(e, "exit_code", None), "pid_ok": isinstance(e.pid, int)}
        print("SPAWN " + json.dumps(out), flush=True)
