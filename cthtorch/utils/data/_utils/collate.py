"""default_collate / default_convert: samples -> batches, as PyTorch's.

`collate` walks containers (mappings, namedtuples, sequences) and hands the
leaves to the function registered for their type in `collate_fn_map`. In a
DataLoader worker, stacked tensors are written straight into a shared-memory
storage so sending the batch to the main process copies nothing.
"""
import collections
import copy
import re

import cthtorch

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                                  "found {}")


def _rebuild_container(data, elem_type, items):
    """A mapping or mutable sequence keeps its type (and extra attributes) when it can."""
    try:
        if isinstance(data, collections.abc.Mapping):
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(items)
                return clone
            return elem_type(items)
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return elem_type(items)
    except TypeError:
        return dict(items) if isinstance(data, collections.abc.Mapping) else list(items)


def default_convert(data):
    elem_type = type(data)
    if isinstance(data, cthtorch.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return cthtorch.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_container(data, elem_type, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]   # PyTorch turns plain tuples into lists
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_container(data, elem_type, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        items = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild_container(elem, elem_type, items)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        return _rebuild_container(elem, elem_type, [collate(s, collate_fn_map=collate_fn_map) for s in transposed])
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    out = None
    if elem.is_nested:
        raise RuntimeError("Batches of nested tensors are not currently supported by the default collate_fn; please "
                           "provide a custom collate_fn to handle them appropriately.")
    if elem.layout in (cthtorch.sparse_coo, cthtorch.sparse_csr, cthtorch.sparse_bsr, cthtorch.sparse_csc,
                       cthtorch.sparse_bsc):
        raise RuntimeError("Batches of sparse tensors are not currently supported by the default collate_fn; please "
                           "provide a custom collate_fn to handle them appropriately.")
    from cthtorch.utils.data.dataloader import get_worker_info
    if get_worker_info() is not None and all(b.shape == elem.shape for b in batch):
        # the batch leaves this process: build it in shared memory directly
        out = cthtorch._C._empty_shared((len(batch),) + tuple(elem.shape), elem.dtype)
    return cthtorch.stack(batch, 0, out=out)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([cthtorch.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return cthtorch.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return cthtorch.tensor(batch, dtype=cthtorch.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return cthtorch.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {cthtorch.Tensor: collate_tensor_fn}
try:
    import numpy as np
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
except ImportError:
    pass
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    return collate(batch, collate_fn_map=default_collate_fn_map)
