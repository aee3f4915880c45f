"""torch.utils.dlpack: zero-copy exchange with other array libraries through DLPack capsules. CPU tensors
only; the capsule is numpy's (numpy implements the protocol), made from the tensor's zero-copy numpy view,
which keeps the tensor's storage alive for as long as the consumer holds it."""
import enum
import warnings

import cthtorch

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


def _check_protocol(t):
    """what Tensor.__dlpack__ (and so from_dlpack of a tensor) refuses in torch; its to_dlpack takes it"""
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")


def _exportable(t):
    if t.device.type != "cpu":
        raise NotImplementedError("cthtorch: DLPack export of %s tensors is not implemented" % t.device.type)
    if t.dtype in (cthtorch.bfloat16, cthtorch.complex32):
        raise NotImplementedError("cthtorch: DLPack export of %s is not implemented (numpy, which makes the "
                                  "capsule, has no such dtype)" % t.dtype)
    return t.detach().resolve_conj().resolve_neg().numpy()


def dlpack(t, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__"""
    _check_protocol(t)
    return _exportable(t).__dlpack__(stream=None, max_version=max_version, dl_device=dl_device, copy=copy)


def dlpack_device(t):
    """Tensor.__dlpack_device__"""
    if t.device.type != "cpu":
        raise NotImplementedError("cthtorch: DLPack export of %s tensors is not implemented" % t.device.type)
    return DLDeviceType.kDLCPU, 0


def to_dlpack(tensor):
    return _exportable(tensor).__dlpack__()


class _Capsule:
    """a bare capsule as a producer numpy can read"""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return DLDeviceType.kDLCPU, 0


def from_dlpack(ext_tensor, *, device=None, copy=None):
    import numpy as np   # interop: numpy reads the capsule
    if isinstance(ext_tensor, cthtorch.Tensor):
        _check_protocol(ext_tensor)
        r = ext_tensor.detach()
        r = r.clone() if copy else r
        return r if device is None else r.to(device)
    if hasattr(ext_tensor, "__dlpack__"):
        dev = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") else DLDeviceType.kDLCPU
        if int(dev) != DLDeviceType.kDLCPU:
            raise NotImplementedError("cthtorch: DLPack import from device type %d is not implemented" % int(dev))
        arr = np.from_dlpack(ext_tensor, copy=copy)
    elif type(ext_tensor).__name__ == "PyCapsule":
        try:
            arr = np.from_dlpack(_Capsule(ext_tensor))
        except Exception as e:
            raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                               "only once, so you might have already constructed a tensor from it once.") from e
    else:
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                           "once, so you might have already constructed a tensor from it once.")
    with warnings.catch_warnings():   # a producer may mark its memory read-only; torch shares it all the same
        warnings.simplefilter("ignore")
        t = cthtorch.from_numpy(arr) if arr.ndim else cthtorch.from_numpy(arr.reshape(1)).reshape(())
    return t if device is None else t.to(device)
