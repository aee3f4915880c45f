"""torch.utils.dlpack: zero-copy exchange with other array libraries through DLPack capsules. The capsules
are made and consumed in C (src/python/DLPack.c: _C._to_dlpack, _C._from_dlpack); this module holds the
protocol's Python side: the device enum, Tensor.__dlpack__'s argument checks, and from_dlpack's negotiation
with the producer (max_version, copy, dl_device)."""
import enum

import cthtorch
from cthtorch import _C

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, "
                    "so you might have already constructed a tensor from it once.")


def _device_to_dl(device):
    """torch.device -> (DLDeviceType, index), as torch._C._torchDeviceToDLDevice"""
    if device.type == "cpu":
        return DLDeviceType.kDLCPU, 0
    if device.type == "cuda":
        return DLDeviceType.kDLCUDA, device.index if device.index is not None else cthtorch.cuda.current_device()
    raise BufferError("Cannot pack tensors on %s" % device.type)


def _dl_to_device(dl_device):
    kind, index = int(dl_device[0]), int(dl_device[1])
    if kind == DLDeviceType.kDLCPU:
        return cthtorch.device("cpu")
    if kind == DLDeviceType.kDLCUDA:
        return cthtorch.device("cuda", index)
    raise BufferError("Unsupported device_type: %d" % kind)


def dlpack_device(t):
    """Tensor.__dlpack_device__ (pinned host memory reports kDLCPU, as its capsule does)"""
    if t.device.type == "meta":
        raise ValueError("Unknown device type meta for Dlpack")
    return _device_to_dl(t.device)


def _export(t, versioned, dl_device=None, copy=None):
    copied = False
    if dl_device is not None:
        want = _dl_to_device(dl_device)
        if want.type != t.device.type or (want.type == "cuda" and want.index != t.device.index):
            if copy is False:
                raise ValueError("cannot move (i.e. copy=False) tensor from %s to %s without copying."
                                 % (t.device, want))
            t, copied = t.to(want), True
    if copy and not copied:
        t, copied = t.clone(), True
    return _C._to_dlpack(t, versioned, copied)


def dlpack(t, stream=-1, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__: a versioned capsule when the consumer reads DLPack >= 1.0, else a legacy one"""
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t.layout != cthtorch.strided:
        raise BufferError("Can't export tensors with layout other than torch.strided")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if t.device.type == "cpu" and stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    if t.device.type == "cuda" and stream != -1:
        # the consumer reads on its stream: finish our work first (a whole-device wait, not one event)
        cthtorch.cuda.synchronize(t.device)
    versioned = max_version is not None and max_version[0] >= 1
    return _export(t, versioned, dl_device, copy)


def to_dlpack(tensor):
    """the legacy capsule ("dltensor"); takes tensors requiring grad (their data), as torch's does"""
    if isinstance(tensor, cthtorch.Tensor) and tensor.layout != cthtorch.strided:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
    return _C._to_dlpack(tensor)


def _ask_producer(ext_tensor, kwargs):
    """calls ext_tensor.__dlpack__, dropping the keywords an older producer does not take (max_version, then
    copy, then dl_device); returns the capsule and whether the producer saw `copy`"""
    for drop in (None, "max_version", "copy", "dl_device"):
        kwargs.pop(drop, None)
        try:
            return ext_tensor.__dlpack__(**kwargs), "copy" in kwargs
        except TypeError:
            if drop == "dl_device":
                raise
    raise AssertionError("unreachable")


def from_dlpack(ext_tensor, *, device=None, copy=None):
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
        return _C._from_dlpack(ext_tensor)
    if isinstance(ext_tensor, cthtorch.Tensor) and ext_tensor.is_cuda and device is None and not copy:
        # reading GPU memory from a capsule is not implemented (DLPack.c); our own CUDA tensor needs no
        # capsule: the protocol's checks, then the same zero-copy alias the capsule would give
        dlpack(ext_tensor)
        return ext_tensor.detach()
    kwargs = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    ext_device = ext_tensor.__dlpack_device__()
    move_to = None
    if device is not None:
        if isinstance(device, str):
            device = cthtorch.device(device)
        if not isinstance(device, cthtorch.device):
            raise AssertionError(f"from_dlpack: unsupported device type: {type(device)}")
        target = _device_to_dl(device)
        if tuple(ext_device) != target:
            if copy is False:
                raise ValueError(f"cannot move DLPack tensor from device {tuple(ext_device)} to {target} without "
                                 "copying. Set copy=None or copy=True.")
            move_to = device
        else:
            kwargs["dl_device"] = target
    capsule, producer_copied = _ask_producer(ext_tensor, kwargs)
    t = _C._from_dlpack(capsule)
    if move_to is not None:
        return t.to(move_to)
    if copy and not producer_copied:
        t = t.clone()
    return t
