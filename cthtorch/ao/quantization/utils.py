"""Helpers of torch.ao.quantization.utils: the integer range of a quantized dtype and the checks observers
make before computing parameters."""
import warnings

import cthtorch

__all__ = ["calculate_qmin_qmax", "check_min_max_valid", "validate_qmin_qmax", "is_per_tensor", "is_per_channel"]


def _resize_to_saved(module, state_dict, prefix, names):
    """Buffers whose shape depends on what was observed (per-channel ones start empty) take the saved
    shapes, so load_state_dict can copy into them."""
    for name in names:
        if prefix + name in state_dict:
            getattr(module, name).resize_(state_dict[prefix + name].shape)


def is_per_tensor(qscheme):
    return qscheme in (cthtorch.per_tensor_affine, cthtorch.per_tensor_symmetric)


def is_per_channel(qscheme):
    return qscheme in (cthtorch.per_channel_affine, cthtorch.per_channel_affine_float_qparams,
                       cthtorch.per_channel_symmetric)


def validate_qmin_qmax(quant_min, quant_max):
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """(quant_min, quant_max) an observer quantizes to: the user's range (halved by reduce_range), or the
    dtype's 8-bit (7-bit with reduce_range) one."""
    q8, u8, q32 = (cthtorch.qint8, cthtorch.int8), (cthtorch.quint8, cthtorch.uint8), (cthtorch.qint32, cthtorch.int32)
    if has_customized_qrange:
        lo, hi = (0, 2 ** 32 - 1) if dtype in q32 else (0, 255)
        if quant_min is not None and quant_max is not None:
            lo, hi = quant_min, quant_max
        qrange_len = hi - lo + 1
        if dtype in q8 and not 0 < qrange_len <= 256:
            raise AssertionError("quantization range should be positive and not exceed the maximum bit range (=256).")
        if dtype in q32 and not 0 < qrange_len <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed the maximum bit range "
                                 "(=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in q8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in u8:
        return (0, 127) if reduce_range else (0, 255)
    if dtype in q32:
        return -(2 ** 31), 2 ** 31 - 1
    if dtype == cthtorch.int16:
        return -(2 ** 15), 2 ** 15 - 1
    return 0, 15


def check_min_max_valid(min_val, max_val):
    """False (with torch's warning) when the observer saw nothing; AssertionError when min > max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.", stacklevel=2)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if min_val == float("inf") and max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.",
                          stacklevel=2)
            return False
        if min_val > max_val:
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif cthtorch.any(min_val > max_val):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True
