"""torch.distributed.optim.ZeroRedundancyOptimizer: each rank keeps the optimizer state of its own share of
the parameters (ZeRO stage 1). The shares are balanced greedily by size, largest parameters first within
each param group, with one running total per rank over all groups (torch's partition); step() runs the
local optimizer on this rank's share, then every parameter is broadcast from the rank that owns it, so all
replicas stay equal."""
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
        self._all_state_dicts = None
        self.optim = self._optim_constructor(self._partition(), **self._default_defaults)

    def _partition(self):
        """Assigns every parameter an owner rank; returns this rank's share as one param group per group (possibly
        empty, as torch's local optimizer has). The running totals span the groups, so a group added later leaves
        the earlier groups' owners as they were."""
        self._owner = {}
        sizes = [0] * self.world_size
        local_groups = []
        for group in self.param_groups:
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                r = min(range(self.world_size), key=lambda i: sizes[i])
                sizes[r] += p.numel()
                self._owner[p] = r
            local = {k: v for k, v in group.items() if k != "params"}
            local["params"] = [p for p in group["params"] if self._owner[p] == self.rank]
            local_groups.append(local)
        return local_groups

    def _sync_hyperparameters(self):
        # a scheduler changes lr on self.param_groups; the local optimizer steps with the same values
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in group.items():
                if k != "params":
                    local[k] = v

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if hasattr(self, "optim"):   # not while Optimizer.__init__ adds the first groups
            # the earlier groups keep their owners, so the local optimizer keeps its state and gains this rank's
            # share of the new group (rebuilding it would drop the moments of every step so far)
            self.optim.add_param_group(self._partition()[-1])

    @cthtorch.no_grad()
    def step(self, closure=None, **kwargs):
        self._sync_hyperparameters()
        loss = self.optim.step(closure=closure, **kwargs) if closure is not None else self.optim.step(**kwargs)
        if self.world_size > 1:
            for group in self.param_groups:
                for p in group["params"]:
                    src = self._owner[p]
                    if self.process_group is not dist.group.WORLD:
                        src = dist.get_global_rank(self.process_group, src)
                    dist.broadcast(p.data, src=src, group=self.process_group)
        return loss

    def consolidate_state_dict(self, to=0):
        """Collects the ranks' optimizer states on rank `to` for state_dict() (all ranks call it, as in torch)."""
        if self.world_size > 1:
            raise NotImplementedError("ZeroRedundancyOptimizer.consolidate_state_dict with several ranks is not "
                                      "supported by cthtorch yet")
        self._all_state_dicts = self.optim.state_dict()

    def state_dict(self):
        # as torch's: the global state exists only where consolidate_state_dict put it
        if self._all_state_dicts is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               "`consolidate_state_dict(to=%d)` on all ranks beforehand if you meant to save the "
                               "global state." % self.rank)
        return self._all_state_dicts

    def load_state_dict(self, state_dict):
        if self.world_size > 1:
            raise NotImplementedError("ZeroRedundancyOptimizer.load_state_dict with several ranks is not "
                                      "supported by cthtorch yet")
        self.optim.load_state_dict(state_dict)
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in local.items():
                if k != "params":
                    group[k] = v
