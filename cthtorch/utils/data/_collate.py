"""default_collate / default_convert: samples -> batches, as PyTorch's."""
import collections
import re

import cthtorch

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                                  "found {}")


def default_convert(data):
    t = type(data)
    if isinstance(data, cthtorch.Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return cthtorch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return t({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return t(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return t([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    elem = batch[0]
    t = type(elem)
    if isinstance(elem, cthtorch.Tensor):
        return cthtorch.stack(batch, 0)
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ in ("ndarray", "memmap"):
            if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(default_collate_err_msg_format.format(elem.dtype))
            return default_collate([cthtorch.as_tensor(b) for b in batch])
        if elem.shape == ():
            return cthtorch.as_tensor(batch)
    if isinstance(elem, float):
        return cthtorch.tensor(batch, dtype=cthtorch.float64)
    if isinstance(elem, bool):
        return cthtorch.tensor(batch)
    if isinstance(elem, int):
        return cthtorch.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return t({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return t(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return t([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(t))
