"""cthtorch.save / cthtorch.load.

The file is a zip archive like PyTorch's: `<root>/data.pkl` (the object,
pickled, with every tensor reduced to a persistent storage reference plus
offset/sizes/strides) and one record `<root>/data/<key>` per storage, so
tensors that shared a storage share it again after loading and views stay
views. The names written are PyTorch's (torch._utils._rebuild_tensor_v2,
torch.FloatStorage, torch.float16...), so torch.load reads cthtorch's files,
and cthtorch.load reads PyTorch's (and earlier cthtorch files).

load is safe by default (weights_only=True): the unpickler reconstructs only
an allowlist of types and never calls any other global; every
size/stride/offset is validated against its storage's byte count (in C, with
overflow-checked arithmetic); truncated or corrupted files raise RuntimeError.
save is atomic for paths: it writes a temporary file beside the target and
renames it into place.
"""
import _compat_pickle
import codecs
import collections
import io
import os
import pickle
import sys
import tempfile
import zipfile

import cthtorch
from cthtorch import _C

DEFAULT_PROTOCOL = 2
_DTYPE_OF_STORAGE = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16", "BFloat16Storage": "bfloat16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
    "ByteStorage": "uint8", "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "QUInt8Storage": "quint8", "QInt8Storage": "qint8", "QInt32Storage": "qint32",
}


# ---- reconstruction functions (the only callables a file may name) ----
def _rebuild_tensor(storage, storage_offset, size, stride, dtype_name, requires_grad=False, device=None):
    t = _C._tensor_from_storage(storage, getattr(cthtorch, dtype_name), int(storage_offset), tuple(size), tuple(stride))
    if device is not None and device.type != "cpu":
        # storages load on the host and each tensor moves on its own: views of
        # one CUDA storage come back as separate copies
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from cthtorch.nn import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils' record of a Parameter that has Python attributes: they are set again"""
    from cthtorch._tensor import _set_obj_state
    return _set_obj_state(_rebuild_parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    from cthtorch._tensor import _rebuild_from_type_v2 as rebuild
    return rebuild(func, new_type, args, state)


def _parameter_class():
    from cthtorch.nn import Parameter
    return Parameter


def _dtype(name):
    d = getattr(cthtorch, name, None)
    if not isinstance(d, cthtorch.dtype):
        raise RuntimeError("unknown dtype %r" % (name,))
    return d


class _TypedStorageRef:
    """What a persistent id resolves to: a storage plus the dtype its elements have."""

    def __init__(self, storage, dtype_name, device=None):
        self.storage = storage
        self.dtype_name = dtype_name
        self.device = device    # where the tensors over it go (map_location applied); None: the host


def _get_layout(name):
    """torch.serialization._get_layout: 'torch.sparse_coo' -> the layout object."""
    layout = getattr(cthtorch, str(name).split(".")[-1], None)
    if not isinstance(layout, cthtorch.layout):
        raise pickle.UnpicklingError("unknown layout %r" % (name,))
    return layout


def _rebuild_sparse_tensor(layout, data):
    """PyTorch's reconstruction of a sparse tensor (torch._utils._rebuild_sparse_tensor)."""
    if layout is cthtorch.sparse_csr:   # (crow_indices, col_indices, values, size)
        return cthtorch.sparse_csr_tensor(*data, check_invariants=False)
    if layout is cthtorch.sparse_csc:   # (ccol_indices, row_indices, values, size)
        return cthtorch.sparse_csc_tensor(*data, check_invariants=False)
    if layout is not cthtorch.sparse_coo:
        raise NotImplementedError("cthtorch: loading a %s tensor is not implemented (only sparse COO, CSR and CSC)"
                                  % layout)
    indices, values, size = data[:3]
    return cthtorch.sparse_coo_tensor(indices, values, size, check_invariants=False,
                                      is_coalesced=data[3] if len(data) > 3 else None)


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad=False,
                     backward_hooks=None):
    """PyTorch's reconstruction of a quantized tensor (torch._utils._rebuild_qtensor): the integers from a
    QUInt8/QInt8/QInt32 storage, and (scheme, scale, zero_point) or (scheme, scales, zero_points, axis)."""
    from cthtorch import _quantized_tensor as qt
    qdtype = getattr(cthtorch, storage.dtype_name)
    ints = _rebuild_tensor(storage.storage, storage_offset, size, stride, qt._STORAGE[storage.dtype_name][0])
    scheme = quantizer_params[0]
    if scheme == cthtorch.per_tensor_affine:
        return qt._make(ints, qdtype, scheme, float(quantizer_params[1]), int(quantizer_params[2]))
    if scheme in (cthtorch.per_channel_affine, cthtorch.per_channel_affine_float_qparams):
        scales, zero_points, axis = quantizer_params[1:]
        if zero_points.is_floating_point():   # torch records float-qparams tensors as per_channel_affine too
            return qt._make(ints, qdtype, cthtorch.per_channel_affine_float_qparams, scales.float(),
                            zero_points.float(), int(axis))
        return qt._make(ints, qdtype, cthtorch.per_channel_affine, scales.double(), zero_points.long(), int(axis))
    raise RuntimeError("Can't deserialize quantized tensor with qscheme %s" % scheme)


def _qscheme(name):
    from cthtorch import _qscheme
    return getattr(_qscheme, name)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    """PyTorch's reconstruction (torch._utils._rebuild_tensor_v2): offsets in elements. The storage is what a
    checkpoint's storage record resolved to, or a TypedStorage (a tensor pickled by torch's pickle.dumps
    carries one, made by torch.storage._load_from_bytes)."""
    if isinstance(storage, _TypedStorageRef):
        return _rebuild_tensor(storage.storage, storage_offset, size, stride, storage.dtype_name, requires_grad,
                               storage.device)
    from cthtorch.storage import TypedStorage
    if not isinstance(storage, TypedStorage):
        raise TypeError("_rebuild_tensor_v2(): storage must be a TypedStorage, not %s" % type(storage).__name__)
    return _rebuild_tensor(storage.untyped(), storage_offset, size, stride, str(storage.dtype).split(".")[1],
                           requires_grad)


class _Unsafe(pickle.UnpicklingError):
    pass


class _WeightsOnlyRefused(pickle.UnpicklingError):
    """find_class's refusal; load() words it as torch.load does (_wo_message)"""


def _unsupported_global(module, name):
    full = "%s.%s" % (module, name)
    if module == "builtins":   # torch names a builtin bare: GLOBAL frozenset
        full = name
    return _WeightsOnlyRefused(
        "Unsupported global: GLOBAL %s was not an allowed global by default. Please use "
        "`torch.serialization.add_safe_globals([%s])` or the `torch.serialization.safe_globals([%s])` context "
        "manager to allowlist this global if you trust this class/function." % (full, full, full))


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")


def _wo_message(message):
    """torch.load's text for a refused weights_only load (torch/serialization.py's _get_wo_message)."""
    return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            "\n\t(1) %s\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
            "steps in the following error message.\n\tWeightsUnpickler error: %s"
            "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
            "weights_only https://pytorch.org/docs/stable/generated/torch.load.html." % (_UNSAFE_MESSAGE, message))


# torch's weights_only allowlist (torch/_weights_only_unpickler.py's _get_allowed_globals): numpy, frozenset,
# slice, range and defaultdict are refused there, so here too (add_safe_globals allows them in both)
_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict, ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set, ("builtins", "complex"): complex, ("_codecs", "encode"): codecs.encode,
    ("builtins", "bytearray"): bytearray,
    ("cthtorch.serialization", "_rebuild_tensor"): _rebuild_tensor,
    ("cthtorch.serialization", "_rebuild_parameter"): _rebuild_parameter,
    ("cthtorch.serialization", "_dtype"): _dtype,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_qtensor"): _rebuild_qtensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Tensor"): cthtorch.Tensor,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _get_layout,
    ("torch", "Size"): cthtorch.Size,
    ("torch", "device"): cthtorch.device,   # torch's weights_only unpickler allows it too
}


_extra_safe = {}    # (module, name) -> object, under both its cthtorch.* and torch.* spelling
_safe_list = []     # what the user passed, in order (get_safe_globals)


def _torch_module_name(module):
    """cthtorch.nn.modules.linear -> torch.nn.modules.linear: the name a file written for torch uses."""
    return "torch" + module[len("cthtorch"):] if module == "cthtorch" or module.startswith("cthtorch.") else module


def _cthtorch_module_name(module):
    return "cthtorch" + module[len("torch"):] if module == "torch" or module.startswith("torch.") else module


def add_safe_globals(objs):
    """Allows more globals in weights_only loads (as torch.serialization.add_safe_globals): each an object,
    or (object, "module.name") for one saved under another name. cthtorch's classes are also allowed under
    their torch.* names, which is how files saved by torch (or by cthtorch) name them."""
    for entry in objs:
        if isinstance(entry, tuple):
            if len(entry) != 2 or not isinstance(entry[1], str):
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), but got %r"
                                 % (entry,))
            o, full = entry
            module, _, name = full.rpartition(".")
        else:
            o, module, name = entry, entry.__module__, entry.__qualname__
        for m in {module, _torch_module_name(module)}:
            _extra_safe[(m, name)] = o
        if entry not in _safe_list:
            _safe_list.append(entry)


def get_safe_globals():
    return list(_safe_list)


def clear_safe_globals():
    _extra_safe.clear()
    del _safe_list[:]


class safe_globals:
    """Context manager: the given globals are allowed in weights_only loads inside the block
    (as torch.serialization.safe_globals); the allowlist is restored on exit."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = (dict(_extra_safe), list(_safe_list))
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc_value, tb):
        clear_safe_globals()
        _extra_safe.update(self._saved[0])
        _safe_list.extend(self._saved[1])


class _TorchGlobal:
    """A global that PyTorch's (and cthtorch's) loader knows by name, such as
    torch._utils._rebuild_tensor_v2 or torch.FloatStorage: written as a bare
    module/name reference, so files saved here load in PyTorch too."""

    _interned = {}

    def __new__(cls, module, name):
        # one object per name, so the pickler's memo writes each global once and BINGETs it after, as torch's
        # pickler does for the function/class objects it names
        obj = cls._interned.get((module, name))
        if obj is None:
            obj = cls._interned[(module, name)] = super().__new__(cls)
            obj.module, obj.name = module, name
        return obj

    def __call__(self, *args, **kwargs):   # pickle's save_reduce insists on a callable
        raise TypeError("%s.%s is a name written for the loader, not a function" % (self.module, self.name))


class _StorageOf:
    """A tensor's storage as torch.save records it: typed by the tensor's dtype.
    A CUDA tensor's is recorded as its host copy (bytes) under torch's location tag 'cuda:N'."""

    def __init__(self, storage, dtype_name, location="cpu", host_bytes=None):
        self.storage, self.dtype_name = storage, dtype_name
        self.location, self.host_bytes = location, host_bytes


_STORAGE_OF_DTYPE = {v: k for k, v in _DTYPE_OF_STORAGE.items()}
_QSCHEMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
             "per_channel_affine_float_qparams")


class _Pickler(pickle._Pickler):
    """Writes PyTorch's layout: tensors as torch._utils._rebuild_tensor_v2 over
    persistent ("storage", torch.<Type>Storage, key, "cpu", numel) records."""

    # TorchScript archives (torch.jit.save) record parameters as plain tensors that require grad
    parameters_as_tensors = False

    def __init__(self, f, protocol, storages, legacy=False):
        super().__init__(f, protocol)
        self.storages = storages   # key -> storage
        self._keys = {}
        # the format before the zip archive keys a storage by its address and adds a view_metadata slot
        self.legacy = legacy
        self.itemsizes = {}   # key -> bytes per element of the dtype it was saved as

    def persistent_id(self, obj):
        if isinstance(obj, _StorageOf):
            st = obj.storage
            key = self._keys.get(st._key())
            if key is None:
                key = self._keys[st._key()] = str(st._key()) if self.legacy else str(len(self.storages))
                self.storages[key] = st if obj.host_bytes is None else obj.host_bytes
            itemsize = getattr(cthtorch, obj.dtype_name).itemsize
            self.itemsizes.setdefault(key, itemsize)
            record = ("storage", _TorchGlobal("torch", _STORAGE_OF_DTYPE[obj.dtype_name]), key, obj.location,
                      st.nbytes() // itemsize)
            if self.legacy:   # torch formats the address anew for every tensor: the pickle repeats it, unmemoized
                return record[:2] + (str(st._key()),) + record[3:] + (None,)
            return record
        return None

    def save_global(self, obj, name=None):
        orig = obj
        if isinstance(obj, cthtorch.dtype):
            obj = _TorchGlobal("torch", str(obj).split(".")[1])
        if not isinstance(obj, _TorchGlobal):
            module = getattr(obj, "__module__", None)
            qualname = name or getattr(obj, "__qualname__", None)
            if module is None or _torch_module_name(module) == module or qualname is None:
                return super().save_global(obj, name)
            # cthtorch's classes and functions (nn.Linear, F.relu, ...) are written under torch's name, as
            # torch.save writes them: torch.load reads the model, and load maps the name back to cthtorch
            found = sys.modules.get(module)
            for part in qualname.split("."):
                found = getattr(found, part, None)
            if found is not obj:
                return super().save_global(obj, name)
            obj = _TorchGlobal(_torch_module_name(module), qualname)
        memo = self.memo.get(id(orig))
        if memo is not None:   # reached by a direct call (TorchScript's typed lists), not through save()
            self.write(self.get(memo[0]))
            return
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(orig)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_TorchGlobal] = save_global

    def reducer_override(self, obj):
        if isinstance(obj, cthtorch.Tensor) and obj.is_sparse:   # PyTorch's form: layout, (indices, values, size, coalesced)
            return (_TorchGlobal("torch._utils", "_rebuild_sparse_tensor"),
                    (obj.layout, (obj._indices(), obj._values(), obj.shape, obj.is_coalesced())))
        if isinstance(obj, cthtorch.Tensor) and obj.layout is cthtorch.sparse_csc:   # layout, (ccol, row, values, size)
            return (_TorchGlobal("torch._utils", "_rebuild_sparse_tensor"),
                    (obj.layout, (obj.ccol_indices(), obj.row_indices(), obj.values().detach(), obj.shape)))
        if isinstance(obj, cthtorch.Tensor) and obj.is_sparse_csr:   # layout, (crow, col, values, size)
            return (_TorchGlobal("torch._utils", "_rebuild_sparse_tensor"),
                    (obj.layout, (obj.crow_indices(), obj.col_indices(), obj.values().detach(), obj.shape)))
        if isinstance(obj, cthtorch.layout):
            return (_TorchGlobal("torch.serialization", "_get_layout"), (str(obj),))
        if type(obj) is cthtorch.Size:
            return (_TorchGlobal("torch", "Size"), (tuple(obj),))
        if type(obj) is cthtorch.device:   # torch's name, not _copyreg's plain-pickle rebuild
            return (_TorchGlobal("torch", "device"), (str(obj),))
        if isinstance(obj, cthtorch.Tensor) and obj.is_quantized:   # torch's record: the integers, the parameters
            ints = obj.int_repr()
            if obj.qscheme() == cthtorch.per_tensor_affine:
                params = (obj.qscheme(), obj.q_scale(), obj.q_zero_point())
            else:
                params = (cthtorch.per_channel_affine, obj.q_per_channel_scales(), obj.q_per_channel_zero_points(),
                          obj.q_per_channel_axis())
            return (_TorchGlobal("torch._utils", "_rebuild_qtensor"),
                    (_StorageOf(ints.untyped_storage(), str(obj.dtype).split(".")[1]), ints.storage_offset(),
                     tuple(ints.shape), ints.stride(), params, False, collections.OrderedDict()))
        if isinstance(obj, cthtorch.Tensor):
            if type(obj).__name__ == "Parameter" and not self.parameters_as_tensors:
                base = cthtorch.Tensor._make_subclass(cthtorch.Tensor, obj.detach(), False)
                state = {k: v for k, v in getattr(obj, "__dict__", {}).items() if k != "_retain_handle"}
                if state:   # its Python attributes, as torch's Parameter.__reduce_ex__ writes them
                    return (_TorchGlobal("torch._utils", "_rebuild_parameter_with_state"),
                            (base, obj.requires_grad, collections.OrderedDict(), state))
                return (_TorchGlobal("torch._utils", "_rebuild_parameter"),
                        (base, obj.requires_grad, collections.OrderedDict()))
            dt = str(obj.dtype).split(".")[1]
            st = obj.untyped_storage()
            ref = _StorageOf(st, dt)
            if obj.is_cuda:   # the bytes are read once per storage, never through numpy or memoryview
                ref = _StorageOf(st, dt, "cuda:%d" % obj.get_device(),
                                 None if st._key() in self._keys else _C._cuda._storage_to_host(obj))
            rebuild = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
            args = (ref, obj.storage_offset(), tuple(obj.shape), obj.stride(), obj.requires_grad,
                    collections.OrderedDict())
            state = {k: v for k, v in getattr(obj, "__dict__", {}).items() if k != "_retain_handle"}
            if type(obj) is not cthtorch.Tensor or state:   # a subclass keeps its type and attributes, as torch's
                return (_TorchGlobal("torch._tensor", "_rebuild_from_type_v2"), (rebuild, type(obj), args, state))
            return (rebuild, args)
        if isinstance(obj, cthtorch.dtype):
            return str(obj).split(".")[1]   # a global: torch.<dtype>
        return NotImplemented


def _cthtorch_global(module, name):
    """torch.nn.modules.linear.Linear -> cthtorch.nn.modules.linear.Linear (None where cthtorch has no such
    module or name): torch's files, and cthtorch's, name cthtorch's classes by their torch path."""
    ours = _cthtorch_module_name(module)
    if ours == module:
        return None
    try:
        import importlib
        obj = importlib.import_module(ours)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _new_file_mode():
    try:
        with open("/proc/self/status") as st:   # reads the umask without setting it (os.umask's swap races threads)
            for line in st:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj (tensors, state dicts, containers) to a path or a binary file object."""
    buf = io.BytesIO()
    storages = {}
    p = _Pickler(buf, pickle_protocol, storages, legacy=not _use_new_zipfile_serialization)
    p.dump(obj)

    def write(out, archive="archive"):
        if p.legacy:
            _write_legacy(out, buf.getvalue(), storages, p.itemsizes, pickle_protocol)
        else:
            _write_zip(out, buf.getvalue(), storages, archive, not _disable_byteorder_record)
    if _is_path(f):
        path = os.fspath(f)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".cthtorch", dir=d)
        try:
            # mkstemp's file is private (0600); the saved file gets the mode open(path, "wb") would give, as torch's
            os.fchmod(fd, _new_file_mode())
            with os.fdopen(fd, "wb") as out:
                write(out, _archive_name(f))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    else:
        write(f)


_ALIGNMENT = 64   # torch's kFieldAlignment: every record's bytes start at a multiple of it inside the file


def _archive_name(f):
    """The archive's root folder as torch's PyTorchStreamWriter names it: the file's name without its folder
    and last extension for a path ('temp.p' -> 'temp'), 'archive' for a file object."""
    if not _is_path(f):
        return "archive"
    name = os.fspath(f)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rpartition(".")[0] if "." in base else base
    return stem or "archive"


def _write_zip(out, pkl, storages, archive="archive", byteorder_first=True):
    """Writes the records as torch.save does (caffe2's PyTorchStreamWriter over miniz): the same records in
    the same order, stored uncompressed with zeroed times, each local header padded by an 'FB' extra field so
    the bytes start 64-aligned, a data descriptor after each, and zip64 end records; so a file is the size
    torch's is and every record but the random serialization id has torch's bytes."""
    import struct
    import zlib
    records = [("data.pkl", pkl), (".format_version", b"1"), (".storage_alignment", b"%d" % _ALIGNMENT)]
    if byteorder_first:
        records.append(("byteorder", sys.byteorder.encode()))
    records += [("data/%s" % key, memoryview(st).cast("B")) for key, st in storages.items()]
    # from the OS, never the random module: a save must not move a program's seeded Python stream
    serialization_id = "%020d%020d" % tuple(int.from_bytes(os.urandom(8), "little") for _ in range(2))
    records.append(("version", b"3\n"))
    if not byteorder_first:   # torch's writer still adds the record when it closes the archive, after version
        records.append(("byteorder", sys.byteorder.encode()))
    records.append((".data/serialization_id", serialization_id.encode()))
    if sum(len(data) + 200 for _, data in records) >= 0xFFFFFFFF:
        # past 4 GiB torch's headers grow zip64 extras; Python's zipfile writes those (without the alignment)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, data in records:
                z.writestr("%s/%s" % (archive, name), bytes(data))
        return
    central = []
    pos = 0
    for name, data in records:
        fname = ("%s/%s" % (archive, name)).encode("utf-8")
        start = pos + 30 + len(fname) + 4
        pad = -start % _ALIGNMENT
        crc = zlib.crc32(data) & 0xFFFFFFFF
        size = len(data)
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0x0808, 0, 0, 0, 0, 0, 0, len(fname), pad + 4)
        out.write(header + fname + b"FB" + struct.pack("<H", pad) + b"Z" * pad)
        out.write(data)
        out.write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, 0x0808, 0, 0, 0, crc, size, size,
                                   len(fname), 0, 0, 0, 0, 0, pos) + fname)
        pos = start + pad + size + 16
    cd = b"".join(central)
    n = len(records)
    out.write(cd)
    eocd64 = pos + len(cd)
    out.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x002D, 0, 0, n, n, len(cd), pos))
    out.write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), pos, 0))


def _write_legacy(out, pkl, storages, itemsizes, protocol):
    """torch's _legacy_save: pickles of the magic number, the protocol version and the system's sizes, the
    object, the sorted storage keys, then each storage as its element count (int64) and its bytes."""
    import struct
    for header in (_LEGACY_MAGIC, _LEGACY_PROTOCOL, {"protocol_version": _LEGACY_PROTOCOL,
                   "little_endian": sys.byteorder == "little", "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(header, out, protocol=protocol)
    out.write(pkl)
    keys = sorted(storages)
    pickle.dump(keys, out, protocol=protocol)
    for key in keys:
        data = memoryview(storages[key]).cast("B")
        out.write(struct.pack("=q", len(data) // itemsizes[key]))
        out.write(data)


class _Unpickler(pickle.Unpickler):
    def __init__(self, f, zf, root, weights_only, map_location=None):
        super().__init__(f)
        self.map_location = map_location
        self.zf = zf
        self.root = root
        self.records = "%s/data" % root   # where storage records live (a TorchScript archive's constants: constants/)
        self.weights_only = weights_only
        self.loaded = {}
        self.allowed = dict(_ALLOWED)
        self.allowed[("torch.nn.parameter", "Parameter")] = _parameter_class()
        self.allowed.update(_extra_safe)

    def find_class(self, module, name):
        # protocol 2 (torch.save's) spells builtins the Python 2 way (__builtin__.xrange): pickle's own renames
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        if (module, name) in self.allowed:
            return self.allowed[(module, name)]
        if module == "torch" and name in _DTYPE_OF_STORAGE:
            return _DTYPE_OF_STORAGE[name]
        if module == "torch" and name.startswith("per_") and name in _QSCHEMES:   # a quantized tensor's scheme
            return _qscheme(name)
        if module in ("torch", "cthtorch") and type(vars(cthtorch).get(name)).__name__ in (
                "dtype", "_UnimplementedDtype"):   # quantized models save torch.qint8 in their state_dict
            return vars(cthtorch)[name]
        if module == "builtins" and name == "getattr" and not self.weights_only:
            return getattr
        if not self.weights_only:
            found = _cthtorch_global(module, name)
            if found is not None:
                return found
        if self.weights_only:
            raise _unsupported_global(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError("unsupported persistent id %r" % (pid,))
        if len(pid) == 3:                      # ours: ("storage", key, nbytes)
            _, key, nbytes = pid
            dtype_name = None
            location = "cpu"
        elif len(pid) == 5:                    # PyTorch's: ("storage", type, key, location, numel)
            _, stype, key, location, numel = pid
            dtype_name = stype if isinstance(stype, str) else str(stype).split(".")[-1]
            itemsize = getattr(cthtorch, dtype_name).itemsize
            nbytes = int(numel) * itemsize
        else:
            raise pickle.UnpicklingError("unsupported storage reference %r" % (pid,))
        key = str(key)
        if key not in self.loaded:
            name = "%s/%s" % (self.records, key)
            try:
                info = self.zf.getinfo(name)
            except KeyError:
                raise RuntimeError("corrupted file: the record for storage %s is missing" % key) from None
            if not isinstance(nbytes, int) or nbytes < 0 or info.file_size != nbytes:
                raise RuntimeError("corrupted file: storage %s should have %s bytes but its record has %d"
                                   % (key, nbytes, info.file_size))
            st = _C.UntypedStorage(nbytes)
            st.copy_from_buffer(self.zf.read(name))
            self.loaded[key] = st
        st = self.loaded[key]
        if not dtype_name:
            return st
        return _TypedStorageRef(st, dtype_name, _target_device(location, self.map_location))


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads what save wrote (or PyTorch's torch.save). Safe by default; see the module docstring."""
    if weights_only is None:
        weights_only = True
    _check_map_location(map_location)
    try:
        if _is_path(f):
            with open(f, "rb") as fh:
                data = fh.read()
        else:
            data = f.read()
        if not zipfile.is_zipfile(io.BytesIO(data)) and _is_legacy(data):
            return _legacy_load(data, weights_only, map_location)
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = zf.namelist()
        pkls = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if not pkls:
            raise RuntimeError("not a cthtorch/PyTorch archive: no data.pkl record")
        root = pkls[0][: -len("/data.pkl")] if "/" in pkls[0] else ""
        up = _Unpickler(io.BytesIO(zf.read(pkls[0])), zf, root, weights_only, map_location)
        obj = up.load()
    except zipfile.BadZipFile as e:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: %s (the file is truncated or "
                           "not a checkpoint)" % e) from None
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError, AttributeError,
            zipfile.LargeZipFile, OverflowError, MemoryError, UnicodeDecodeError) as e:
        if isinstance(e, _WeightsOnlyRefused):
            raise pickle.UnpicklingError(_wo_message(e)) from None
        raise RuntimeError("failed to load the file: %s: %s" % (type(e).__name__, e)) from None
    return _fix_refs(obj)


def _fix_refs(obj):
    """torch.save(storage) loads as a TypedStorage, as in torch (storages inside containers are not unwrapped)."""
    if isinstance(obj, _TypedStorageRef):
        from cthtorch.storage import TypedStorage
        return TypedStorage(wrap_storage=obj.storage, dtype=getattr(cthtorch, obj.dtype_name), _internal=True)
    return obj


# ---- the format before the zip archive (torch.save(..., _use_new_zipfile_serialization=False), checkpoints
# from torch < 1.6, and the bytes inside a tensor that torch's pickle.dumps wrote): pickles of a magic number,
# the protocol version and system info, then the object pickled with ("storage", type, key, location, numel,
# view) references, then the sorted list of storage keys, then each storage as an int64 element count and its
# raw bytes.
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PROTOCOL = 1001


class _PlainUnpickler(pickle.Unpickler):
    """The legacy header and key list: plain values only, no globals."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("unexpected global %s.%s in a checkpoint header" % (module, name))


def _is_legacy(data):
    try:
        return _PlainUnpickler(io.BytesIO(data)).load() == _LEGACY_MAGIC
    except Exception:  # noqa: BLE001 - anything unreadable is simply not the legacy format
        return False


class _LegacyUnpickler(_Unpickler):
    def __init__(self, f, weights_only, map_location):
        super().__init__(f, None, "", weights_only, map_location)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 6 or pid[0] != "storage":
            raise pickle.UnpicklingError("unsupported persistent id %r" % (pid,))
        _, stype, key, location, numel, view = pid
        if view is not None:
            raise NotImplementedError("cthtorch.load: storage views of the pre-0.4 checkpoint format are not "
                                      "supported; load and re-save the file with a newer torch")
        dtype_name = stype if isinstance(stype, str) else str(stype).split(".")[-1]
        key = str(key)
        if key not in self.loaded:
            if not isinstance(numel, int) or numel < 0:
                raise RuntimeError("corrupted file: storage %s has element count %r" % (key, numel))
            self.loaded[key] = (_C.UntypedStorage(numel * getattr(cthtorch, dtype_name).itemsize), dtype_name)
        return _TypedStorageRef(self.loaded[key][0], dtype_name, _target_device(location, self.map_location))


def _legacy_load(data, weights_only, map_location):
    f = io.BytesIO(data)
    header = _PlainUnpickler(f)
    header.load()
    version = header.load()
    if version != _LEGACY_PROTOCOL:
        raise RuntimeError("Invalid protocol version: %s" % (version,))
    header.load()    # sys info: byte order and C type sizes, which only matter to other platforms
    up = _LegacyUnpickler(f, weights_only, map_location)
    obj = up.load()
    keys = _PlainUnpickler(f).load()
    for key in keys:
        if str(key) not in up.loaded:
            raise RuntimeError("corrupted file: storage %s is listed but never used" % key)
        st, dtype_name = up.loaded[str(key)]
        head = f.read(8)
        itemsize = getattr(cthtorch, dtype_name).itemsize
        if len(head) != 8 or int.from_bytes(head, "little") * itemsize != st.nbytes():
            raise RuntimeError("corrupted file: storage %s has the wrong size" % key)
        raw = f.read(st.nbytes())
        if len(raw) != st.nbytes():
            raise RuntimeError("corrupted file: storage %s is truncated" % key)
        st.copy_from_buffer(raw)
    return _fix_refs(obj)    # a storage alone: torch.save(storage), and the bytes inside a pickled tensor


_NO_CUDA_LOAD = ("Attempting to deserialize object on a CUDA device but cthtorch.cuda.is_available() is "
                 "False. If you are running on a CPU-only machine, please use torch.load with "
                 "map_location=torch.device('cpu') to map your storages to the CPU.")


def _target_device(location, ml):
    """Where tensors saved at `location` ('cpu', 'cuda:0') load, given torch.load's map_location
    (None, a device or its name, a dict of location renames, or a callable(storage, location)
    whose returned storage stays on the host). None: the host."""
    loc = str(location)
    if isinstance(ml, dict):
        loc = str(ml.get(loc, loc))
    elif ml is not None and not callable(ml):
        loc = str(ml)
    dev = cthtorch.device(loc)
    if dev.type == "cpu":
        return None
    if not cthtorch.cuda.is_available():
        raise RuntimeError(_NO_CUDA_LOAD)
    return dev


def _check_map_location(ml):
    if ml is None or callable(ml) or cthtorch.cuda.is_available():
        return
    if isinstance(ml, dict):
        for v in ml.values():
            _check_map_location(v)
        return
    dev = cthtorch.device(ml) if isinstance(ml, str) else ml
    if isinstance(dev, cthtorch.device) and dev.type != "cpu":
        raise RuntimeError(_NO_CUDA_LOAD)
