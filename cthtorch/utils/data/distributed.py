"""DistributedSampler: each of num_replicas processes reads its own slice of a
dataset. The order is PyTorch's exactly: randperm(n) from a Generator seeded
with seed + epoch (cthtorch's randperm draws torch's stream), padded by
wrapping around (or cut with drop_last), then every num_replicas-th index
from the rank's offset."""
import math

import cthtorch
from cthtorch.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        import cthtorch.distributed as dist
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError("Invalid rank %d, rank should be in the interval [0, %d]" % (rank, num_replicas - 1))
        self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0
        self.drop_last = drop_last
        if self.drop_last and len(dataset) % num_replicas != 0:
            # every rank gets the same count, so the tail that does not divide evenly is dropped
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle, self.seed = shuffle, seed

    def __iter__(self):
        if self.shuffle:
            g = cthtorch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = cthtorch.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank: self.total_size: self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
