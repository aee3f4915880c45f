"""Join: training on inputs that run out at different times on different ranks.

Each iteration, a rank still training all-reduces a 1 (notify_join_context,
called from the first Joinable's forward). A rank that has left its loop
enters Join.__exit__ and all-reduces a 0 instead: the sum is the number of
ranks still training. While it is not zero, the joined rank runs every
Joinable's JoinHook.main_hook, which issues the same collectives the training
ranks issue in that iteration (for DDP: zero gradients), so nobody hangs. When
every rank has joined, each hook's post_hook runs (DDP: the last rank to join
broadcasts its model)."""
import warnings

import cthtorch

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    def main_hook(self):
        """One shadow iteration of a joined rank's collectives."""

    def post_hook(self, is_last_joiner):
        """Runs once every rank has joined."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable")

    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable, self.throw_on_early_termination = enable, throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


class Joinable:
    """A class whose instances take part in Join: implement join_hook,
    join_device and join_process_group, and call Join.notify_join_context(self)
    once per iteration before the iteration's collectives."""

    def __init__(self):
        self._join_config = _JoinConfig.construct_disabled_join_config()

    def join_hook(self, **kwargs):
        raise NotImplementedError

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for k, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, k == 0)
        self._process_group, self._device = None, None
        for j in joinables:
            if self._process_group is None:
                self._process_group = j.join_process_group
            elif self._process_group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if self._device is None:
                self._device = j.join_device
        import cthtorch.distributed as dist
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self):
        pass

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return   # an exception propagates as it is
        all_joined, is_last_joiner, rounds = False, True, 0
        while not all_joined:
            if rounds == 1000:
                warnings.warn("Detected uneven input skew of greater than 1000. This means that rank %d has at least "
                              "1000 fewer inputs than other currently-active ranks. This level of skew could lead "
                              "to performance degradation during training." % self._rank, stacklevel=2)
            if self._count_nonjoined() == 0:
                all_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_nonjoined(self):
        import cthtorch.distributed as dist
        n = cthtorch.zeros(1, device=self._device)
        dist.all_reduce(n, group=self._process_group)
        return n.item()

    def _notify_procs_to_terminate(self):
        import cthtorch.distributed as dist
        dist.all_reduce(cthtorch.ones(1, device=self._device), group=self._process_group)
        raise RuntimeError("Rank %d exhausted all inputs." % self._rank)

    @staticmethod
    def notify_join_context(joinable):
        """Called by a Joinable once per iteration: all-reduces a 1 so joined
        ranks can count the ranks still training. Returns that Work (only for
        the first Joinable of an enabled Join, else None)."""
        import cthtorch.distributed as dist
        if not hasattr(joinable, "_join_config"):
            raise AssertionError("Check that the %s constructor calls the ``Joinable`` constructor" % type(joinable))
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        ones = cthtorch.ones(1, device=device)
        work = dist.all_reduce(ones, group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = cthtorch.zeros(1, device=device)
            dist.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        work._ones = ones   # the count, for dividing by the ranks still training
        return work
