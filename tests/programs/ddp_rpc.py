"""pytorch/examples distributed/rpc/ddp_rpc/main.py, reduced and made
CPU-only as torch's documentation allows (backend "gloo", no .to(rank)):
`import cthtorch as torch`; 4 processes from torch.multiprocessing.spawn, of
which the 2 trainers call init_process_group(world_size=2) over tcp:// and all
4 call rpc.init_rpc. The rendezvous ports come from the command line, the
epochs are fewer, and the first step of each trainer (before any optimizer
step) is checked against one process: DDP's averaged gradients of the dense
part in the trainer's distributed autograd context, the embedding's gradient
in the parameter server's. Also a new_group among the 2 trainers.
Run: python ddp_rpc.py PG_PORT RPC_PORT

The example's license:

    BSD 3-Clause License

    Copyright (c) 2017, Pytorch contributors
    All rights reserved.

    Redistribution and use in source and binary forms, with or without
    modification, are permitted provided that the following conditions are met:

    * Redistributions of source code must retain the above copyright notice, this
      list of conditions and the following disclaimer.

    * Redistributions in binary form must reproduce the above copyright notice,
      this list of conditions and the following disclaimer in the documentation
      and/or other materials provided with the distribution.

    * Neither the name of the copyright holder nor the names of its
      contributors may be used to endorse or promote products derived from
      this software without specific prior written permission.

    THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
    AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
    IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
    DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
    FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
    DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
    SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
    CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
    OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
    OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""
import random
import sys

import cthtorch as torch
import cthtorch.distributed as dist
import cthtorch.distributed.autograd as dist_autograd
import cthtorch.distributed.rpc as rpc
import cthtorch.multiprocessing as mp
import cthtorch.optim as optim
from cthtorch.distributed.nn import RemoteModule
from cthtorch.distributed.optim import DistributedOptimizer
from cthtorch.distributed.rpc import RRef
from cthtorch.distributed.rpc import TensorPipeRpcBackendOptions
from cthtorch.nn.parallel import DistributedDataParallel as DDP

NUM_EMBEDDINGS = 100
EMBEDDING_DIM = 16
EPOCHS = 2


class HybridModel(torch.nn.Module):
    """The example's model: an EmbeddingBag on the parameter server (RemoteModule), a DDP Linear on each trainer."""

    def __init__(self, remote_emb_module, rank):
        super(HybridModel, self).__init__()
        self.remote_emb_module = remote_emb_module
        self.fc = DDP(torch.nn.Linear(16, 8))
        self.rank = rank

    def forward(self, indices, offsets):
        emb_lookup = self.remote_emb_module.forward(indices, offsets)
        return self.fc(emb_lookup)


def get_next_batch(rank, rng=random):
    for _ in range(10):
        num_indices = rng.randint(20, 50)
        indices = torch.LongTensor(num_indices).random_(0, NUM_EMBEDDINGS)
        offsets = []
        start = 0
        batch_size = 0
        while start < num_indices:
            offsets.append(start)
            start += rng.randint(1, 10)
            batch_size += 1
        offsets_tensor = torch.LongTensor(offsets)
        target = torch.LongTensor(batch_size).random_(8)
        yield indices, offsets_tensor, target


def _fixed_batch(rank):
    """The checked step's batch of trainer `rank`, the same wherever it is made."""
    torch.manual_seed(100 + rank)
    return next(get_next_batch(rank, random.Random(100 + rank)))


def _ps_embedding_grad(context_id):
    """On the parameter server: the embedding weight's gradient in that context."""
    grads = list(dist_autograd.get_gradients(context_id).values())
    assert len(grads) == 1, len(grads)
    return grads[0]


def _check_first_step(model, rank):
    """One step's gradients against one process computing both trainers' batches."""
    emb_weight = model.remote_emb_module.remote_parameters()[0].to_here().detach()
    fc = model.fc.module
    ref_fc_grads, ref_emb_grad = [torch.zeros_like(p) for p in fc.parameters()], None
    for r in (0, 1):
        emb = torch.nn.EmbeddingBag(NUM_EMBEDDINGS, EMBEDDING_DIM, mode="sum")
        lin = torch.nn.Linear(16, 8)
        with torch.no_grad():
            emb.weight.copy_(emb_weight)
            lin.weight.copy_(fc.weight)
            lin.bias.copy_(fc.bias)
        indices, offsets, target = _fixed_batch(r)
        torch.nn.CrossEntropyLoss()(lin(emb(indices, offsets)), target).backward()
        for acc, p in zip(ref_fc_grads, lin.parameters()):
            acc.add_(p.grad / 2)   # DDP averages over the 2 trainers
        if r == rank:
            ref_emb_grad = emb.weight.grad
    indices, offsets, target = _fixed_batch(rank)
    with dist_autograd.context() as context_id:
        loss = torch.nn.CrossEntropyLoss()(model(indices, offsets), target)
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)
        for p, ref in zip(fc.parameters(), ref_fc_grads):
            assert p.grad is None, "distributed autograd must not write .grad"
            torch.testing.assert_close(grads[p], ref, rtol=1e-5, atol=1e-6)
        emb_grad = rpc.rpc_sync("ps", _ps_embedding_grad, args=(context_id,))
        torch.testing.assert_close(emb_grad, ref_emb_grad, rtol=1e-5, atol=1e-6)
    print("ok gradients equal one process: trainer %d" % rank + "\n", end="", flush=True)   # one write: the ranks interleave


def _run_trainer(remote_emb_module, rank):
    model = HybridModel(remote_emb_module, rank)
    model_parameter_rrefs = model.remote_emb_module.remote_parameters()
    for param in model.fc.parameters():
        model_parameter_rrefs.append(RRef(param))
    opt = DistributedOptimizer(optim.SGD, model_parameter_rrefs, lr=0.05)
    criterion = torch.nn.CrossEntropyLoss()

    _check_first_step(model, rank)
    dist.barrier()   # neither trainer steps the shared embedding before both have checked

    for epoch in range(EPOCHS):
        for indices, offsets, target in get_next_batch(rank):
            with dist_autograd.context() as context_id:
                output = model(indices, offsets)
                loss = criterion(output, target)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)
        print("Training done for epoch {}".format(epoch), flush=True)
    # the trainers' DDP replicas stay equal: every step applied the same averaged gradient
    w = model.fc.module.weight.detach().clone()
    ws = [torch.zeros_like(w) for _ in range(2)]
    dist.all_gather(ws, w)
    torch.testing.assert_close(ws[0], ws[1], rtol=0, atol=0)
    print("ok replicas equal after training: trainer %d" % rank + "\n", end="", flush=True)   # one write: the ranks interleave


def _check_groups(rank):
    """The default group is the 2 trainers of the 4-process job; groups among them work."""
    assert dist.get_world_size() == 2 and dist.get_rank() == rank, (dist.get_world_size(), dist.get_rank())
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    assert t.item() == 3.0, t
    both = dist.new_group([0, 1])
    only1 = dist.new_group([1])
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t, group=both)
    assert t.item() == 3.0, t
    if rank == 1:
        assert dist.get_world_size(only1) == 1 and dist.get_rank(only1) == 0
        dist.all_reduce(t, group=only1)
        assert t.item() == 3.0
    else:
        assert only1 is dist.GroupMember.NON_GROUP_MEMBER
    print("ok 2-rank group in a 4-process job: trainer %d" % rank + "\n", end="", flush=True)   # one write: the ranks interleave


def run_worker(rank, world_size, pg_port, rpc_port):
    rpc_backend_options = TensorPipeRpcBackendOptions()
    rpc_backend_options.init_method = "tcp://127.0.0.1:%d" % rpc_port

    if rank == 2:
        rpc.init_rpc("master", rank=rank, world_size=world_size, rpc_backend_options=rpc_backend_options)
        torch.manual_seed(0)
        remote_emb_module = RemoteModule("ps", torch.nn.EmbeddingBag, args=(NUM_EMBEDDINGS, EMBEDDING_DIM),
                                         kwargs={"mode": "sum"})
        futs = []
        for trainer_rank in [0, 1]:
            trainer_name = "trainer{}".format(trainer_rank)
            fut = rpc.rpc_async(trainer_name, _run_trainer, args=(remote_emb_module, trainer_rank))
            futs.append(fut)
        for fut in futs:
            fut.wait()
    elif rank <= 1:
        backend = "gloo"
        dist.init_process_group(backend=backend, rank=rank, world_size=2,
                                init_method="tcp://127.0.0.1:%d" % pg_port)
        _check_groups(rank)
        trainer_name = "trainer{}".format(rank)
        rpc.init_rpc(trainer_name, rank=rank, world_size=world_size, rpc_backend_options=rpc_backend_options)
    else:
        rpc.init_rpc("ps", rank=rank, world_size=world_size, rpc_backend_options=rpc_backend_options)

    rpc.shutdown()
    if rank <= 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    world_size = 4
    mp.spawn(run_worker, args=(world_size, int(sys.argv[1]), int(sys.argv[2])), nprocs=world_size, join=True)
    print("Distributed RPC example completed successfully.")
