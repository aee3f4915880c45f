"""pytorch/examples' distributed/ddp/example.py (BSD-3-Clause), rewritten for
cthtorch and for a machine without GPUs: the same program shape (ToyModel,
spmd_main reading torchrun's environment, demo_basic doing one DDP step), with
backend "gloo" and the model on the CPU where the original asks for NCCL and
one GPU per rank (which fails on a CPU-only machine with PyTorch too).

    python -m cthtorch.distributed.run --nproc_per_node=2 ddp_example.py --local_world_size=2

It also checks what the original only hopes: after the step every rank holds
the same parameters."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import cthtorch as torch  # noqa: E402
import cthtorch.distributed as dist  # noqa: E402
import cthtorch.nn as nn  # noqa: E402
import cthtorch.optim as optim  # noqa: E402
from cthtorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(local_world_size, local_rank):
    n = torch.cuda.device_count() // local_world_size
    device_ids = list(range(local_rank * n, (local_rank + 1) * n))
    print(f"[{os.getpid()}] rank = {dist.get_rank()}, world_size = {dist.get_world_size()}, n = {n}, "
          f"device_ids = {device_ids}", flush=True)
    if n:
        model = ToyModel().cuda(device_ids[0])
        ddp_model = DDP(model, device_ids)
        device = torch.device("cuda", device_ids[0])
    else:
        model = ToyModel()
        ddp_model = DDP(model)
        device = torch.device("cpu")
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(device)
    loss_fn(outputs, labels).backward()
    optimizer.step()
    for p in model.parameters():
        copies = [torch.zeros_like(p) for _ in range(dist.get_world_size())]
        dist.all_gather(copies, p.detach())
        assert all(torch.equal(c, copies[0]) for c in copies), "replicas diverged"
    print(f"[{os.getpid()}] rank = {dist.get_rank()}: replicas equal after one step", flush=True)


def spmd_main(local_world_size, local_rank):
    env_dict = {key: os.environ[key] for key in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")}
    print(f"[{os.getpid()}] Initializing process group with: {env_dict}", flush=True)
    dist.init_process_group(backend="nccl" if torch.cuda.device_count() >= local_world_size else "gloo")
    print(f"[{os.getpid()}]: world_size = {dist.get_world_size()}, rank = {dist.get_rank()}, "
          f"backend={dist.get_backend()}", flush=True)
    demo_basic(local_world_size, local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--local_world_size", type=int, default=1)
    args = parser.parse_args()
    spmd_main(args.local_world_size, int(os.environ.get("LOCAL_RANK", args.local_rank)))
