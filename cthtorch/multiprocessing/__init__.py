"""cthtorch.multiprocessing: multiprocessing whose pickling shares tensors.

A tensor sent through a Queue/Pipe travels as a POSIX shared-memory handle:
a tensor not yet shared moves its storage into a segment first
(share_memory_), so sender and receiver see the same memory from then on
(Hogwild: model.share_memory(), then hand the model to the processes). The
segment counts its pending handles, so its name disappears once the sender's
storage is gone and every handle has been attached; the mappings keep the
memory as long as any process uses it.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403
from multiprocessing.reduction import ForkingPickler

import cthtorch
from cthtorch import _C

__all__ = list(getattr(multiprocessing, "__all__", []))


def _rebuild_tensor(name, nbytes, dtype_name, size, stride, offset, requires_grad, cls):
    t = _C._tensor_from_shm(name, nbytes, getattr(cthtorch, dtype_name), size, stride, offset)
    if cls is not cthtorch.Tensor:
        if cls.__name__ == "Parameter":
            t = cls(t, requires_grad)
        else:
            t = cthtorch.Tensor._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
    _C._share_memory_(t)
    name, nbytes = _C._shm_handle(t)
    dt = str(t.dtype).split(".")[1]
    return (_rebuild_tensor, (name, nbytes, dt, tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad,
                              type(t)))


def init_reductions():
    ForkingPickler.register(cthtorch.Tensor, reduce_tensor)
    from cthtorch.nn.parameter import Parameter   # pickling dispatch is by exact type
    ForkingPickler.register(Parameter, reduce_tensor)


def _register_subclass(cls):
    ForkingPickler.register(cls, reduce_tensor)


init_reductions()


def get_sharing_strategy():
    return "file_system"


def set_sharing_strategy(new_strategy):
    if new_strategy not in ("file_system", "file_descriptor"):
        raise ValueError("unknown sharing strategy %s" % new_strategy)


def get_all_sharing_strategies():
    return {"file_system"}


from cthtorch.multiprocessing.spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: E402,F401
                                            ProcessRaisedException, spawn, start_processes)
