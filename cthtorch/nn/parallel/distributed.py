"""nn.parallel.DistributedDataParallel: one process per model replica. At
construction rank 0's parameters and buffers are broadcast; each forward
(optionally) re-broadcasts the buffers; backward all-reduces the gradients in
buckets that overlap the rest of backward (cthtorch/distributed/_reducer.py),
so after backward every rank holds the gradient averaged over the ranks."""
import inspect
import warnings
from contextlib import contextmanager

import cthtorch
import cthtorch.distributed as dist
from cthtorch.distributed.algorithms.join import Join, Joinable, JoinHook
from cthtorch.nn.modules.module import Module
from cthtorch.nn.parallel.data_parallel import _to_device

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _find_tensors(obj):
    """The tensors in a forward's output (lists, tuples, dicts, dataclasses)."""
    if isinstance(obj, cthtorch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    if hasattr(obj, "__dataclass_fields__"):
        return [t for f in obj.__dataclass_fields__ for t in _find_tensors(getattr(obj, f))]
    return []


class _DDPJoinHook(JoinHook):
    """What a rank that has run out of inputs does each time the others run
    an iteration: the same collectives, with zeros for gradients."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        ddp._check_and_sync_module_buffers()
        should_sync_backwards = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync_backwards
        if not should_sync_backwards:
            return
        ddp._match_all_reduce_for_bwd_pass()
        if ddp.find_unused_parameters:
            ddp._match_unused_params_allreduce()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        Joinable.__init__(self)
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError("cthtorch: DistributedDataParallel(%s=...) is not implemented" % name)
        if process_group is None:
            if not dist.is_initialized():
                raise ValueError("Default process group has not been initialized, please make sure to call "
                                 "init_process_group.")
            process_group = dist.group.WORLD
        self.process_group = process_group
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self._module_parameters = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        device_types = {p.device.type for p in self._module_parameters}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of devices, but input "
                             "module parameters locate in %s." % device_types)
        self.device_type = next(iter(device_types))
        self.is_multi_device_module = len({p.device for p in self._module_parameters}) > 1
        if not device_ids or self.device_type == "cpu" or self.is_multi_device_module:
            if device_ids or output_device:
                raise ValueError(
                    "DistributedDataParallel device_ids and output_device arguments only work with single-device/"
                    "multiple-device GPU modules or CPU modules, but got device_ids %s, output_device %s, and module "
                    "parameters %s." % (device_ids, output_device, {p.device for p in self._module_parameters}))
            self.device_ids = None
            self.output_device = None
        else:
            self.device_ids = [d.index if isinstance(d, cthtorch.device) else int(d) for d in device_ids]
            self.output_device = self.device_ids[0] if output_device is None else output_device
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please "
                          "avoid using it.", FutureWarning, stacklevel=2)
        self.static_graph = False
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        if broadcast_buffers is not None:
            if forward_sync_buffers is not None:
                warnings.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` "
                              "is deprecated and its value is ignored when `forward_sync_buffers` is provided.",
                              FutureWarning, stacklevel=2)
            else:
                warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                              "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If "
                              "you rely on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                              "`broadcast_buffers=False` until `init_sync_buffers` is available.",
                              FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_sync_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = init_sync_buffers = broadcast_buffers if broadcast_buffers is not None else True
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.mixed_precision = None
        self.broadcast_bucket_size = 250 * _MB
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        # as torch: a smaller first bucket (the last layers' gradients) starts communication sooner
        first_bytes = dist._reducer.DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self.bucket_bytes_cap_default = bucket_cap_mb is None
        self._divide_by_initial_world_size = True
        params, owners = self._build_params_for_reducer()
        if init_sync:
            dist._reducer.verify_params_across_processes(self.process_group, params)
            self._sync_module_states(0, init_sync_buffers)
        self.reducer = dist._reducer.Reducer(params, self.process_group, self.bucket_bytes_cap, first_bytes,
                                             find_unused_parameters, gradient_as_bucket_view, owners)
        if gradient_as_bucket_view:
            self._grads_into_bucket_views()
        self._comm_hooks = []
        if static_graph:
            self._set_static_graph()

    def _build_params_for_reducer(self):
        """The parameters to average: each one once, requiring grad, not ignored;
        and the module each belongs to (the reducer keeps a module's together)."""
        seen, params, owners = set(), [], []
        for mname, m in self.module.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                fqn = mname + "." + pname if mname else pname
                if p.requires_grad and fqn not in self.parameters_to_ignore and id(p) not in seen:
                    seen.add(id(p))
                    params.append(p)
                    owners.append(mname)
        self._assign_modules_buffers()
        return params, owners

    def _grads_into_bucket_views(self):
        """Gradients that already exist move into their bucket views."""
        r = self.reducer
        with cthtorch.no_grad():
            for i, p in enumerate(r.params):
                if p.grad is not None:
                    b, pos = r.slot[i]
                    b.views[pos].copy_(p.grad)
                    p.grad = b.views[pos]

    def _assign_modules_buffers(self):
        named = [(n, b) for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        self.modules_buffers = [b for _, b in named]
        self.named_module_buffers = dict(named)

    def _sync_module_states(self, src, broadcast_buffers):
        states = [p.detach() for n, p in self.module.named_parameters() if n not in self.parameters_to_ignore]
        if broadcast_buffers:
            states += [b.detach() for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        if states:
            dist._reducer.broadcast_coalesced(states, src, self.process_group)

    @property
    def broadcast_buffers(self):
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.")
            return
        self.static_graph = True
        self.reducer.static_graph = True
        if self.find_unused_parameters:
            warnings.warn("You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` "
                          "will detect unused parameters automatically, so you do not need to set "
                          "find_unused_parameters=true, just be sure these unused parameters will not change during "
                          "training loop while calling `_set_static_graph`.")

    # ---- forward ----
    @contextmanager
    def no_sync(self):
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _pre_forward(self, *inputs, **kwargs):
        if cthtorch.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_forward()
        work = Join.notify_join_context(self)
        self.reducer._join_enabled = self._join_config.enable
        if work:
            self.reducer._set_forward_pass_work_handle(work, self._divide_by_initial_world_size)
        if self.will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        if self.device_ids:
            device = cthtorch.device(self.device_type, self.device_ids[0])
            return _to_device(inputs, device), _to_device(kwargs, device)
        return inputs, kwargs

    def _post_forward(self, output):
        if cthtorch.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            need_outputs = self.find_unused_parameters or (self.static_graph and self.reducer._static_counts is None)
            self.reducer.prepare_for_backward(_find_tensors(output) if need_outputs else [])
        else:
            self.require_forward_param_sync = False
        return output

    def forward(self, *inputs, **kwargs):
        with cthtorch.autograd.profiler.record_function("DistributedDataParallel.forward"):
            inputs, kwargs = self._pre_forward(*inputs, **kwargs)
            return self._post_forward(self.module(*inputs, **kwargs))

    def train(self, mode=True):
        super().train(mode)
        return self

    # ---- buffers ----
    def will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.forward_sync_buffers and len(self.modules_buffers) > 0

    @property
    def _distributed_rank(self):
        return dist.get_rank(self.process_group)

    def _find_common_rank(self, input_rank, rank_cond):
        """The highest rank for which rank_cond holds (Join: the ranks still training)."""
        rank_to_use = cthtorch.tensor([input_rank if rank_cond else -1], device=self.device)
        dist.all_reduce(rank_to_use, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a bug in "
                             "PyTorch, please report an issue.")
        return rank_to_use.item()

    def _sync_buffers(self):
        with cthtorch.no_grad():
            src = self._find_common_rank(self._distributed_rank, True) if self._join_config.enable else 0
            self._assign_modules_buffers()
            self._sync_module_buffers(src)

    def _sync_module_buffers(self, authoritative_rank):
        if self.modules_buffers:
            dist._reducer.broadcast_coalesced([b.detach() for b in self.modules_buffers], authoritative_rank,
                                              self.process_group)

    def _check_and_sync_module_buffers(self):
        if self.will_sync_module_buffers():
            self._sync_module_buffers(self._find_common_rank(self._distributed_rank, False))

    # ---- Join ----
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, divide_by_initial_world_size=kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        """Ranks still training say whether this iteration syncs gradients
        (no_sync()); a joined rank learns it from the sum."""
        flag = (cthtorch.ones if not is_joined_rank and self.require_backward_grad_sync else cthtorch.zeros)(
            1, device=self.device)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def _match_all_reduce_for_bwd_pass(self):
        self.reducer._shadow_all_reduces()

    def _match_unused_params_allreduce(self):
        dist.all_reduce(self.reducer._get_local_used_map(), group=self.process_group)

    def _sync_final_model(self, is_last_joiner):
        self._authoritative_rank = self._find_common_rank(self._distributed_rank, is_last_joiner)
        self._sync_module_states(self._authoritative_rank, self.forward_sync_buffers)

    # ---- communication hooks ----
    def register_comm_hook(self, state, hook):
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        ann = sig.parameters["bucket"].annotation if "bucket" in sig.parameters else inspect.Parameter.empty
        if ann is not inspect.Parameter.empty and ann is not dist.GradBucket and ann != "dist.GradBucket":
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if hook.__name__ in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            # as torch: bfloat16 all-reduce is offered on NCCL/XCCL only
            raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hooks.append((hook, state))
        self.reducer.comm_hook = (hook, state)

    def __getstate__(self):
        raise NotImplementedError("cthtorch: pickling a DistributedDataParallel module is not implemented; save "
                                  "ddp.module.state_dict() instead")
