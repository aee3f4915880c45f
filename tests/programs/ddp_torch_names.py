"""A CPU DDP program written with `import torch` names only, the way
pytorch/examples' distributed/ddp/example.py and the DDP tutorial write
theirs, for tests/test_torch_alias.py: with the alias on PYTHONPATH it runs
on cthtorch, unchanged.

    python -m torch.distributed.run --nproc_per_node=2 ddp_torch_names.py   # torchrun's environment
    python ddp_torch_names.py --spawn PORT                                  # torch.multiprocessing.spawn, tcp://

(It replaces a CPU rewrite of example.py that imported cthtorch: the
upstream example itself, ddp_example_upstream.py, needs two accelerators.)

Each rank does one DDP step of the example's ToyModel and checks that the
replicas agree afterwards; rank 0 also checks that every torch.* module it
used is the cthtorch one when the alias is on (ALIAS=1)."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_example_upstream import ToyModel  # noqa: E402 -- the example's model (its main() needs GPUs)


def demo_basic(rank):
    # one write per line: the ranks share the launcher's stdout
    print(f"rank = {dist.get_rank()}, world_size = {dist.get_world_size()}, backend = {dist.get_backend()}\n",
          end="", flush=True)
    torch.manual_seed(rank)   # different data and initial weights per rank: DDP's broadcast must unify them
    model = ToyModel()
    ddp_model = DDP(model)
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    F.mse_loss(outputs, torch.randn(20, 5)).backward()
    optimizer.step()
    for p in model.parameters():
        copies = [torch.zeros_like(p) for _ in range(dist.get_world_size())]
        dist.all_gather(copies, p.detach())
        assert all(torch.equal(c, copies[0]) for c in copies), "replicas diverged"
    sampler = DistributedSampler(range(10), num_replicas=dist.get_world_size(), rank=dist.get_rank())
    print(f"rank {rank}: replicas equal after one step; sampler {list(sampler)}\n", end="", flush=True)


def check_alias():
    if os.environ.get("ALIAS") != "1":
        return
    import cthtorch
    assert torch is cthtorch, torch
    for name, mod in list(sys.modules.items()):
        if name.startswith("torch."):
            assert mod is sys.modules["cthtorch" + name[5:]], name
    assert DDP is cthtorch.nn.parallel.DistributedDataParallel
    print("alias: every torch.* module is cthtorch's", flush=True)


def spawned(rank, world_size, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    demo_basic(rank)
    dist.destroy_process_group()


@record
def main():
    if sys.argv[1:2] == ["--spawn"]:
        check_alias()
        mp.spawn(spawned, args=(2, int(sys.argv[2])), nprocs=2, join=True)
    else:
        env = {k: os.environ[k] for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                          "LOCAL_WORLD_SIZE")}
        if env["RANK"] == "0":
            check_alias()
        print(f"[{os.getpid()}] Initializing process group with: {env}\n", end="", flush=True)
        dist.init_process_group(backend="gloo")
        demo_basic(int(env["RANK"]))
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
