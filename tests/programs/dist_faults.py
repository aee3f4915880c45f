"""A 2-rank job for tests/test_distributed.py's launcher and fault checks.

    dist_faults.py [--local-rank=N] MODE PIDFILE_DIR [ARGS...]

Every rank writes its pid to PIDFILE_DIR/<rank>.pid (so the test can check
nothing outlives the job), then joins the process group and all-reduces.
MODE: env (write what the launcher set to PIDFILE_DIR/<rank>.json), raise / kill (rank 1 raises
or is killed by SIGKILL before the second all-reduce), hang (rank 1 sleeps
instead of joining it; the group's timeout is 3 s), ddp_kill (a DDP step
whose last bucket, in node shared memory, rank 0 all-reduces on its own
thread at the end of backward: rank 1 is killed once its backward has
deferred that bucket, so rank 0 waits for a dead peer outside the
communication thread).
"""
import datetime
import json
import os
import signal
import sys
import time

import cthtorch as torch
import cthtorch.distributed as dist

local_rank_args = [a for a in sys.argv[1:] if a.startswith("--local-rank=")]   # torch.distributed.launch's
args = [a for a in sys.argv[1:] if not a.startswith("--local-rank=")]
mode, piddir = args[0], args[1]
rank = int(os.environ.get("RANK", os.environ.get("PMI_RANK", "0")))
with open(os.path.join(piddir, "%d.pid" % rank), "w") as f:
    f.write(str(os.getpid()))
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3 if mode == "hang" else 60))
t = torch.ones(2) * (dist.get_rank() + 1)
dist.all_reduce(t)
if mode == "env":
    keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
    with open(os.path.join(piddir, "%d.json" % rank), "w") as f:
        json.dump({"env": {k: os.environ.get(k) for k in keys}, "argv": local_rank_args + args[2:], "rank": dist.get_rank(),
                   "sum": t.tolist(), "elastic": dist.is_torchelastic_launched()}, f)
if mode == "ddp_kill":
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 4))
    model = torch.nn.parallel.DistributedDataParallel(net)
    last = model.reducer.buckets[-1]
    assert last.node, "the last bucket is not in node shared memory"
    armed = [False]

    def kill_once_deferred(p):
        if armed[0] and dist.get_rank() == 1 and last.deferred:
            os.kill(os.getpid(), signal.SIGKILL)
    for p in net.parameters():   # after DDP's own hooks
        p.register_post_accumulate_grad_hook(kill_once_deferred)
    for step in range(2):   # the first step passes on both ranks
        armed[0] = step == 1
        model(torch.randn(8, 256)).sum().backward()
    dist.destroy_process_group()
    sys.exit(0)
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 gives up")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(600)
dist.all_reduce(t)
dist.destroy_process_group()
