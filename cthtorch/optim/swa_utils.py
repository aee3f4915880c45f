"""Stochastic weight averaging and EMA: AveragedModel, SWALR, update_bn and
the averaging functions (torch.optim.swa_utils)."""
import itertools
import math
from copy import deepcopy

import cthtorch
from cthtorch.nn import Module
from cthtorch.optim.lr_scheduler import LRScheduler
from cthtorch.optim.lr_scheduler import _per_group, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError("Invalid decay value %s provided. Please provide a value in [0,1] range." % decay)


def get_ema_multi_avg_fn(decay=0.999):
    _check_decay(decay)

    @cthtorch.no_grad()
    def ema_update(ema_params, current_params, _):
        for e, c in zip(ema_params, current_params):
            if e.is_floating_point():
                e.lerp_(c, 1 - decay)
            else:
                e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    @cthtorch.no_grad()
    def swa_update(averaged, current, num_averaged):
        w = float(1 / (num_averaged + 1))
        for a, c in zip(averaged, current):
            if a.is_floating_point():
                a.lerp_(c, w)
            else:
                a.add_((c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    @cthtorch.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    @cthtorch.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of model whose parameters are the running average (SWA by default) of model's."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", cthtorch.tensor(0, dtype=cthtorch.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        mine_d, theirs_d = [], []
        first = bool(self.n_averaged == 0)
        for pa, pm in zip(mine, theirs):
            pm = pm.detach()
            mine_d.append(pa.detach())
            theirs_d.append(pm)
            if first:
                pa.detach().copy_(pm)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(mine_d, theirs_d, self.n_averaged)
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for pa, pm in zip(mine_d, theirs_d):
                    pa.copy_(fn(pa, pm, self.n_averaged))
        if not self.use_buffers:
            # buffers (BatchNorm statistics) are copied, not averaged; update_bn recomputes them
            for bs, bm in zip(self.module.buffers(), model.buffers()):
                bs.detach().copy_(bm.detach())
        self.n_averaged += 1


@cthtorch.no_grad()
def update_bn(loader, model, device=None):
    """One pass over loader recomputing every BatchNorm's running statistics as a plain average."""
    from cthtorch.nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None   # cumulative average over the pass
    for inp in loader:
        if isinstance(inp, (list, tuple)):
            inp = inp[0]
        if device is not None:
            inp = inp.to(device)
        model(inp)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs, then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, g in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got %s" % anneal_strategy)
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError("anneal_epochs must be equal or greater than 0, got %s" % anneal_epochs)
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, strategy):
        self._anneal_strategy = strategy
        self.anneal_func = self._cosine_anneal if strategy == "cos" else self._linear_anneal

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # recover the lr before annealing from the current one, then anneal one step further
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
