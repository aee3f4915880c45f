"""Batch norms (torch.nn.modules.batchnorm): _NormBase, _BatchNorm, BatchNorm1d/2d/3d, SyncBatchNorm and the
lazy forms (_LazyNormBase)."""
import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn import init
from cthtorch.nn.modules.lazy import LazyModuleMixin
from cthtorch.nn.modules.module import Module
from cthtorch.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _NormBase(Module):
    _version = 2  # 2 added num_batches_tracked

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(cthtorch.empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(cthtorch.empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", cthtorch.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", cthtorch.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", cthtorch.tensor(0, dtype=cthtorch.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        pass

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # files saved before version 2 (and files without versions) may lack num_batches_tracked: the module's
        # own counter stands in, as in torch
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            nbt = self.num_batches_tracked
            state_dict[key] = (nbt if nbt is not None and nbt.device.type != "meta"
                               else cthtorch.tensor(0, dtype=cthtorch.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={has_bias}, " \
               "track_running_stats={track_running_stats}".format(has_bias=self.bias is not None, **self.__dict__)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        return F.batch_norm(input, self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError("expected 2D or 3D input (got %dD input)" % input.dim())


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError("expected 4D input (got %dD input)" % input.dim())


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError("expected 5D input (got %dD input)" % input.dim())


class SyncBatchNorm(_BatchNorm):
    """Without an initialized process group (always, here) this is BatchNorm over the local batch, as in torch."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError("expected at least 2D input (got %dD input)" % input.dim())

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype) if bias else None
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = cthtorch.tensor(0, dtype=cthtorch.long)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1] if input.dim() > self._unbatched_dim else input.shape[0]
        with cthtorch.no_grad():
            for p in (self.weight, self.bias, self.running_mean, self.running_var):
                if p is not None and is_lazy(p):
                    p.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base, unbatched_dim, module=__name__):
    # as torch: LazyBatchNorm1d is a _BatchNorm (not a BatchNorm1d) that becomes a BatchNorm1d
    body = {k: v for k, v in vars(base).items() if not k.startswith("__")}
    body.update(cls_to_become=base, _unbatched_dim=unbatched_dim, __module__=module)
    return type(name, (_LazyNormBase, base.__bases__[0]), body)


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, 1)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, 1)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, 1)
