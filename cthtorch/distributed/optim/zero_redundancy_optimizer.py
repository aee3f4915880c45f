"""torch.distributed.optim.ZeroRedundancyOptimizer: each rank keeps the optimizer state of its own share of
the parameters (ZeRO stage 1). The shares are balanced greedily by size, largest parameters first, per
param group; step() runs the local optimizer on this rank's share, then every parameter is broadcast from
the rank that owns it, so all replicas stay equal."""
import cthtorch
from cthtorch import distributed as dist
from cthtorch.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) needs DDP communication "
                                      "hooks, which cthtorch does not have")
        super().__init__(params, defaults)
        self._optim_constructor = optimizer_class
        self._default_defaults = defaults
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank) \
            if self.process_group is not dist.group.WORLD else self.rank
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._partition()

    def _partition(self):
        self._owner = {}
        local_groups = []
        for group in self.param_groups:
            sizes = [0] * self.world_size
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                r = min(range(self.world_size), key=lambda i: sizes[i])
                sizes[r] += p.numel()
                self._owner[p] = r
            local = {k: v for k, v in group.items() if k != "params"}
            local["params"] = [p for p in group["params"] if self._owner[p] == self.rank]
            local_groups.append(local)
        self._local_groups = [g for g in local_groups if g["params"]]
        self.optim = self._optim_constructor(self._local_groups, **self._default_defaults) if self._local_groups \
            else None

    def _sync_hyperparameters(self):
        # a scheduler changes lr on self.param_groups; the local optimizer steps with the same values
        if self.optim is None:
            return
        owned = [g for g in self.param_groups if any(self._owner[p] == self.rank for p in g["params"])]
        for group, local in zip(owned, self.optim.param_groups):
            for k, v in group.items():
                if k != "params":
                    local[k] = v

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if hasattr(self, "_owner"):
            self._partition()

    @cthtorch.no_grad()
    def step(self, closure=None, **kwargs):
        self._sync_hyperparameters()
        loss = None
        if self.optim is not None:
            loss = self.optim.step(closure=closure, **kwargs) if closure is not None else self.optim.step(**kwargs)
        elif closure is not None:
            with cthtorch.enable_grad():
                loss = closure()
        if self.world_size > 1:
            for group in self.param_groups:
                for p in group["params"]:
                    src = self._owner[p]
                    if self.process_group is not dist.group.WORLD:
                        src = dist.get_global_rank(self.process_group, src)
                    dist.broadcast(p.data, src=src, group=self.process_group)
        return loss

    def state_dict(self):
        if self.world_size > 1:
            raise NotImplementedError("ZeroRedundancyOptimizer.state_dict with several ranks needs "
                                      "consolidate_state_dict, which cthtorch does not have yet")
        return self.optim.state_dict()

    def load_state_dict(self, state_dict):
        if self.world_size > 1:
            raise NotImplementedError("ZeroRedundancyOptimizer.load_state_dict with several ranks is not "
                                      "supported by cthtorch yet")
        self.optim.load_state_dict(state_dict)
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in local.items():
                if k != "params":
                    group[k] = v
