"""DLPack exchange (torch.from_dlpack, torch.utils.dlpack.to_dlpack, Tensor.__dlpack__/__dlpack_device__) with
numpy and with torch itself: zero copy both ways, strides, dtypes, 0-d, one-use capsules, errors, and the
lifetime of the memory behind a capsule (src/python/DLPack.c)."""
import ctypes
import gc
import warnings
import weakref

import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like

torch = oracle.require_torch()


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16", "complex64"])
def test_numpy_round_trip_shares_memory(dt):
    a = (np.arange(12) % 2).astype(dt).reshape(3, 4)
    t = ct.from_dlpack(a)
    assert str(t.dtype) == str(torch.from_dlpack(a).dtype) and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == a.ctypes.data
    b = np.from_dlpack(t.t())
    assert b.ctypes.data == a.ctypes.data and b.strides == a.T.strides
    np.testing.assert_array_equal(b, a.T)


def test_exchange_with_torch_and_capsules():
    c = ct.arange(6.0).reshape(2, 3)
    tt = torch.from_dlpack(c)   # torch reads cthtorch's capsule
    tt[0, 0] = 5.0
    assert c[0, 0].item() == 5.0
    back = ct.from_dlpack(torch.arange(4))   # and cthtorch reads torch's
    assert back.tolist() == [0, 1, 2, 3] and back.dtype == ct.int64
    assert ct.from_dlpack(torch.tensor(True)).item() is True and ct.from_dlpack(torch.tensor(True)).dim() == 0
    cap = ct.utils.dlpack.to_dlpack(c)
    assert ct.from_dlpack(cap)[0, 0].item() == 5.0
    raises_like(lambda: ct.from_dlpack(cap), lambda: torch.from_dlpack(_spent(torch)))   # a capsule is used once
    assert c.__dlpack_device__() == torch.ones(1).__dlpack_device__()
    assert ct.utils.dlpack.DLDeviceType.kDLCPU == torch.utils.dlpack.DLDeviceType.kDLCPU == 1


def _spent(m):
    cap = m.utils.dlpack.to_dlpack(m.ones(1))
    m.from_dlpack(cap)
    return cap


def test_dlpack_errors():
    raises_like(lambda: ct.ones(2, requires_grad=True).__dlpack__(), lambda: torch.ones(2, requires_grad=True).__dlpack__())
    raises_like(lambda: ct.from_dlpack(ct.ones(2, requires_grad=True)),
                lambda: torch.from_dlpack(torch.ones(2, requires_grad=True)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ct.from_dlpack(torch.ones(2))   # no read-only warning
        r = np.arange(3.0)
        r.flags.writeable = False   # numpy flags its capsule read-only; torch shares the memory all the same
        assert ct.from_dlpack(r).data_ptr() == r.ctypes.data == torch.from_dlpack(r).data_ptr()


def test_to_dlpack_takes_a_tensor_requiring_grad():
    """to_dlpack exports a tensor requiring grad as its data, as torch's does (__dlpack__ refuses it)"""
    for m in (ct, torch):
        x = m.arange(3.0).requires_grad_()
        y = m.from_dlpack(m.utils.dlpack.to_dlpack(x))
        assert y.tolist() == [0.0, 1.0, 2.0] and not y.requires_grad


# ---- the DLPack structs, mirrored with ctypes to build capsules by hand and read ours ----
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class _DLManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Producer:
    """a hand-made producer over a ctypes float buffer; counts its deleter's calls. Its capsules have no
    destructor (the spec leaves an unconsumed capsule's cleanup to its producer; this one keeps the structs)."""

    def __init__(self, n=8):
        self.buf = (ctypes.c_float * n)(*range(n))
        self.deleted = 0
        self.keep = []

    def capsule(self, shape, strides=None, code=2, bits=32, lanes=1, device=(1, 0), byte_offset=0,
                versioned=False, version=(1, 0)):
        shp = (ctypes.c_int64 * len(shape))(*shape)
        st = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None

        def on_delete(_):
            self.deleted += 1
        deleter = _DELETER(on_delete)
        m = (_DLManagedVersioned if versioned else _DLManaged)()
        t = m.dl_tensor
        t.data, t.device, t.ndim = ctypes.addressof(self.buf), _DLDevice(*device), len(shape)
        t.dtype, t.shape, t.strides, t.byte_offset = _DLDataType(code, bits, lanes), shp, st, byte_offset
        m.deleter = deleter
        if versioned:
            m.major, m.minor = version
        self.keep.append((m, shp, st, deleter))
        return _capsule_new(ctypes.addressof(m), b"dltensor_versioned" if versioned else b"dltensor", None)


def _read(cap, versioned):
    name = b"dltensor_versioned" if versioned else b"dltensor"
    return (_DLManagedVersioned if versioned else _DLManaged).from_address(_capsule_ptr(cap, name))


_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
           "complex64", "complex128"]


def _sample(m, dt):
    x = m.arange(-6, 6, dtype=m.float64).reshape(3, 4)
    x = x.to(getattr(m, dt)) if dt != "bool" else x > 0
    return x * (1 + 1j) if dt.startswith("complex") else x


@pytest.mark.parametrize("dt", _DTYPES)
def test_every_dtype_round_trips_with_torch_zero_copy(dt):
    c = _sample(ct, dt)
    tt = torch.from_dlpack(c)   # torch reads our capsule
    assert str(tt.dtype) == str(c.dtype) and tt.data_ptr() == c.data_ptr() and tt.tolist() == c.tolist()
    back = ct.from_dlpack(tt)   # and we read torch's
    assert back.dtype == c.dtype and back.data_ptr() == c.data_ptr() and back.tolist() == c.tolist()
    src = _sample(torch, dt)
    mine = ct.from_dlpack(src)
    assert str(mine.dtype) == str(src.dtype) and mine.data_ptr() == src.data_ptr() and mine.tolist() == src.tolist()
    one = torch.ones((), dtype=src.dtype)
    src[1, 2] = one   # writes show through both ways
    assert mine[1, 2].tolist() == one.tolist()
    mine[0, 0] = ct.zeros((), dtype=mine.dtype)
    assert src[0, 0].tolist() == torch.zeros((), dtype=src.dtype).tolist()


@pytest.mark.parametrize("dt", [d for d in _DTYPES if d != "bfloat16"])   # numpy has no bfloat16
def test_every_dtype_round_trips_with_numpy_zero_copy(dt):
    c = _sample(ct, dt)
    a = np.from_dlpack(c)
    assert a.dtype == np.dtype(dt) and a.ctypes.data == c.data_ptr() and a.tolist() == c.tolist()
    a2 = np.asarray(_sample(torch, dt))
    mine = ct.from_dlpack(a2)
    assert str(mine.dtype) == "torch." + dt and mine.data_ptr() == a2.ctypes.data and mine.tolist() == a2.tolist()


@pytest.mark.parametrize("view", ["t", "step", "offset", "col", "scalar", "empty", "empty2", "unit", "expand"])
def test_views_keep_their_strides_and_offset(view):
    def make(m):
        x = m.arange(24.0).reshape(4, 6)
        return {"t": lambda: x.t(), "step": lambda: x[::2, ::3], "offset": lambda: x[1:, 2:],
                "col": lambda: x[:, 3:4], "scalar": lambda: x[2, 5], "empty": lambda: x[:, 6:],
                "empty2": lambda: m.ones(3, 0, 4), "unit": lambda: x[1:2], "expand": lambda: x[0:1].expand(3, 6)}[view]()
    c, t = make(ct), make(torch)
    for theirs, mine in ((torch.from_dlpack(c), c), (ct.from_dlpack(t), t)):
        assert tuple(theirs.shape) == tuple(mine.shape) and theirs.tolist() == mine.tolist()
        assert theirs.stride() == mine.stride() and (theirs.data_ptr() == mine.data_ptr() or not mine.numel())
    assert ct.from_dlpack(c).stride() == torch.from_dlpack(t).stride()
    a = np.from_dlpack(c)
    assert a.strides == np.from_dlpack(t).strides and a.tolist() == c.tolist()
    assert ct.from_dlpack(a).tolist() == c.tolist()


def test_capsule_strides_null_means_contiguous_and_byte_offset_is_applied():
    p = _Producer(8)
    x = ct.from_dlpack(p.capsule([2, 4]))
    assert x.stride() == (4, 1) and x.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    y = ct.from_dlpack(p.capsule([2, 2], [4, 1], byte_offset=8))
    assert y.tolist() == [[2, 3], [6, 7]] and y.data_ptr() == ctypes.addressof(p.buf) + 8
    y[0, 0] = -1.0
    assert p.buf[2] == -1.0
    z = ct.from_dlpack(p.capsule([], versioned=True))
    assert z.dim() == 0 and z.item() == 0.0


def test_versioned_and_legacy_capsules():
    c = ct.arange(6.0).reshape(2, 3)
    for m in (ct, torch):
        x = m.arange(6.0).reshape(2, 3)
        assert _name(x.__dlpack__()) == "dltensor" == _name(x.__dlpack__(max_version=(0, 8)))
        assert _name(x.__dlpack__(max_version=(1, 0))) == "dltensor_versioned" == _name(
            x.__dlpack__(max_version=(2, 0)))
        assert _name(m.utils.dlpack.to_dlpack(x)) == "dltensor"
    v = c.__dlpack__(max_version=(1, 0))
    mv = _read(v, True)
    assert mv.major == 1 and mv.flags == 0 and mv.dl_tensor.device.device_type == 1
    assert (mv.dl_tensor.dtype.code, mv.dl_tensor.dtype.bits, mv.dl_tensor.dtype.lanes) == (2, 32, 1)
    assert [mv.dl_tensor.shape[i] for i in range(2)] == [2, 3] and mv.dl_tensor.data == c.data_ptr()
    cp = c.__dlpack__(max_version=(1, 0), copy=True)
    assert _read(cp, True).flags == 2   # DLPACK_FLAG_BITMASK_IS_COPIED: the consumer owns this copy
    copied = torch.from_dlpack(cp)
    assert copied.data_ptr() != c.data_ptr() and copied.tolist() == c.tolist()
    legacy = ct.utils.dlpack.to_dlpack(c)
    shared = torch.from_dlpack(v)
    assert _name(v) == "used_dltensor_versioned" and shared.data_ptr() == c.data_ptr()
    ct.from_dlpack(legacy)
    assert _name(legacy) == "used_dltensor"
    for cap in (legacy, v):   # a used capsule cannot be read again, by either library
        raises_like(lambda: ct.from_dlpack(cap), lambda: torch.from_dlpack(cap))


def _name(cap):
    return repr(cap).split('"')[1]


def test_from_dlpack_copy_and_device():
    for m in (ct, torch):
        x = m.arange(4.0)
        assert m.from_dlpack(x, copy=True).data_ptr() != x.data_ptr()
        assert m.from_dlpack(x, copy=False).data_ptr() == x.data_ptr()
        assert m.from_dlpack(x, device="cpu").data_ptr() == x.data_ptr()
        a = np.arange(3.0)
        assert m.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data
        assert m.from_dlpack(a, device=m.device("cpu")).data_ptr() == a.ctypes.data
    raises_like(lambda: ct.from_dlpack(np.ones(2), device="meta"), lambda: torch.from_dlpack(np.ones(2), device="meta"))
    raises_like(lambda: ct.from_dlpack(np.ones(2), device=3), lambda: torch.from_dlpack(np.ones(2), device=3))
    raises_like(lambda: ct.from_dlpack(ct.utils.dlpack.to_dlpack(ct.ones(1)), copy=True),
                lambda: torch.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(1)), copy=True))
    y = ct.arange(3.0)
    a = np.from_dlpack(y, copy=True)   # numpy asks us for a copy (copy=True, max_version >= 1)
    assert a.ctypes.data != y.data_ptr() and a.tolist() == y.tolist()
    assert np.from_dlpack(y, copy=False).ctypes.data == y.data_ptr()
    assert y.__dlpack_device__() == (ct.utils.dlpack.DLDeviceType.kDLCPU, 0)
    assert ct.from_dlpack(y.__dlpack__(dl_device=(1, 0))).data_ptr() == y.data_ptr()


def test_producers_without_new_keywords():
    """an older producer's __dlpack__ takes no max_version/copy: from_dlpack asks again without them, and copies
    itself when asked to"""
    class Old:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return ct.utils.dlpack.to_dlpack(self.t)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()
    x = ct.arange(3.0)
    assert ct.from_dlpack(Old(x)).data_ptr() == x.data_ptr()
    y = ct.from_dlpack(Old(x), copy=True)
    assert y.data_ptr() != x.data_ptr() and y.tolist() == x.tolist()


def test_capsule_errors_match_torch():
    cases = [dict(code=9), dict(code=2, bits=24), dict(code=0, bits=24), dict(code=1, bits=24),
             dict(code=4, bits=32), dict(code=5, bits=16), dict(code=6, bits=16), dict(code=3, bits=64),
             dict(lanes=2), dict(code=9, lanes=2), dict(device=(7, 0)), dict(device=(99, 0)),
             dict(versioned=True, version=(2, 0)), dict(shape=[-2]), dict(shape=[2, -1, 3])]
    for kw in cases:
        shape = kw.pop("shape", [2])
        p = _Producer()
        raises_like(lambda: ct.from_dlpack(p.capsule(shape, **kw)), lambda: torch.from_dlpack(p.capsule(shape, **kw)))
    raises_like(lambda: ct.from_dlpack(5), lambda: torch.from_dlpack(5))
    raises_like(lambda: ct.utils.dlpack.to_dlpack(5), lambda: torch.utils.dlpack.to_dlpack(5))
    raises_like(lambda: ct.ones(2).__dlpack__(stream=3), lambda: torch.ones(2).__dlpack__(stream=3))
    raises_like(lambda: ct.ones(2).__dlpack__(stream="a"), lambda: torch.ones(2).__dlpack__(stream="a"))
    raises_like(lambda: ct.ones(2).__dlpack__(1), lambda: torch.ones(2).__dlpack__(1))
    raises_like(lambda: ct.ones(2, device="meta").__dlpack__(), lambda: torch.ones(2, device="meta").__dlpack__())
    raises_like(lambda: ct.ones(2, device="meta").__dlpack_device__(),
                lambda: torch.ones(2, device="meta").__dlpack_device__())
    raises_like(lambda: ct.ones(2).to_sparse().__dlpack__(), lambda: torch.ones(2).to_sparse().__dlpack__())
    raises_like(lambda: ct.utils.dlpack.to_dlpack(ct.ones(2).to_sparse()),
                lambda: torch.utils.dlpack.to_dlpack(torch.ones(2).to_sparse()))
    raises_like(lambda: ct.ones(2).__dlpack__(dl_device=(2, 0), copy=False),
                lambda: torch.ones(2).__dlpack__(dl_device=(2, 0), copy=False))


def test_capsule_errors_torch_does_not_survive_or_lacks():
    p = _Producer()
    # torch aborts the process on a negative stride (c10::Error escapes); we raise its message
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4\] and strides=\[-1\]"):
        ct.from_dlpack(p.capsule([4], [-1], byte_offset=12))
    with pytest.raises(RuntimeError, match="at most 25 dimensions"):
        ct.from_dlpack(p.capsule([1] * 30))
    with pytest.raises(NotImplementedError, match="uint16"):   # dtypes torch has and cthtorch does not
        ct.from_dlpack(np.ones(2, dtype=np.uint16))
    with pytest.raises(NotImplementedError, match="float8_e5m2"):
        ct.from_dlpack(p.capsule([2], code=12, bits=8))
    with pytest.raises(NotImplementedError, match="complex32"):
        ct.from_dlpack(p.capsule([2], code=5, bits=32))
    with pytest.raises(NotImplementedError, match="GPU memory"):
        ct.from_dlpack(p.capsule([2], device=(2, 0)))
    with pytest.raises(BufferError, match="not aligned"):
        ct.from_dlpack(p.capsule([1], byte_offset=2))
    assert p.deleted == 0   # refused capsules stay their producer's
    raises_like(lambda: ct.from_dlpack(np.ones(2, dtype=">f4")), lambda: torch.from_dlpack(np.ones(2, dtype=">f4")))


def test_consumed_capsule_memory_lives_until_the_last_tensor():
    """the producer's deleter runs once, when the last tensor over the memory dies (views included)"""
    p = _Producer()
    for versioned in (False, True):
        before = p.deleted
        x = ct.from_dlpack(p.capsule([8], versioned=versioned))
        v = x[2:5]
        del x
        gc.collect()
        assert p.deleted == before and v.tolist() == [2.0, 3.0, 4.0]
        del v
        gc.collect()
        assert p.deleted == before + 1
    p2 = _Producer()   # another major version: only its deleter may be touched, and it is called
    with pytest.raises(RuntimeError, match="major version: 2"):
        ct.from_dlpack(p2.capsule([2], versioned=True, version=(2, 0)))
    assert p2.deleted == 1


def test_numpy_producer_freed_with_the_last_consumer():
    a = np.arange(1000.0)
    w = weakref.ref(a)
    t = ct.from_dlpack(a)
    v = t[10:20]
    del a, t
    gc.collect()
    assert w() is not None and v[0].item() == 10.0
    del v
    gc.collect()
    assert w() is None


def test_our_capsules_hold_the_storage_exactly():
    """a capsule holds one reference on the storage: dropping an unconsumed capsule (legacy or versioned)
    frees the memory, and a consumer keeps it alive until it dies"""
    gc.collect()
    base = ct._C._live_bytes()
    n = 1 << 20
    for make in (lambda t: ct.utils.dlpack.to_dlpack(t), lambda t: t.__dlpack__(max_version=(1, 0))):
        t = ct.empty(n // 4)
        cap = make(t)
        del t
        assert ct._C._live_bytes() - base >= n
        del cap   # never consumed: its destructor calls the deleter
        assert ct._C._live_bytes() - base < n
    t = ct.ones(n // 4)
    tt = torch.from_dlpack(ct.utils.dlpack.to_dlpack(t))
    del t
    gc.collect()
    assert ct._C._live_bytes() - base >= n and tt[5].item() == 1.0
    del tt
    gc.collect()
    assert ct._C._live_bytes() - base < n
    t = ct.ones(n // 4)
    mine = ct.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    del t
    assert ct._C._live_bytes() - base >= n
    del mine
    assert ct._C._live_bytes() - base < n


def test_conjugates_export_their_values():
    """cthtorch has no lazy conjugate or negative bits (conj() computes), so a conjugate exports its values,
    which is what torch exports once the bits are resolved (it refuses a tensor whose conjugate bit is set)"""
    x = ct.tensor([1 + 2j, -3j])
    assert torch.from_dlpack(x.conj()).tolist() == [1 - 2j, 3j]
    assert ct.from_dlpack(x.conj().imag).tolist() == [-2.0, 3.0]
    tx = torch.tensor([1 + 2j, -3j])
    assert ct.from_dlpack(tx.conj().resolve_conj()).tolist() == [1 - 2j, 3j]


def test_hostile_capsules_raise_instead_of_crashing():
    """a producer's struct is not trusted: a missing shape, NULL data under elements, sizes whose product or
    strides overflow, a negative ndim raise (torch crashes on several of these); a refused capsule stays its
    producer's (the two that are fine are consumed and deleted)"""
    p = _Producer()

    def edited(dims, strides=None, **fields):
        cap = p.capsule(dims, strides)
        t = _read(cap, False).dl_tensor
        for k, v in fields.items():
            setattr(t, k, v)
        return cap
    with pytest.raises(BufferError, match="2 dimensions and no shape"):
        ct.from_dlpack(edited([2, 2], shape=ctypes.POINTER(ctypes.c_int64)()))
    with pytest.raises(BufferError, match=r"data is NULL but its shape \[4\] has elements"):
        ct.from_dlpack(edited([4], data=None))
    assert tuple(ct.from_dlpack(edited([0, 3], data=None)).shape) == (0, 3)   # no elements: no data needed
    assert ct.from_dlpack(edited([1], shape=ctypes.POINTER(ctypes.c_int64)(), ndim=0)).item() == 0.0
    gc.collect()
    assert p.deleted == 2   # the two consumed above, freed with their tensors
    p.deleted = 0
    raises_like(lambda: ct.from_dlpack(edited([1 << 40] * 3)),
                lambda: torch.from_dlpack(_Producer().capsule([1 << 40] * 3)))
    # an empty tensor's compact strides overflow: the message shows every stride, none uninitialized
    with pytest.raises(RuntimeError, match=r"sizes=\[0, 1099511627776, 1099511627776, 1099511627776\] and "
                                           r"strides=\[0, 0, 1099511627776, 1\]"):
        ct.from_dlpack(edited([0] + [1 << 40] * 3))
    for strides in ([(1 << 63) - 1], [1 << 62]):   # the last byte's offset overflows
        with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
            ct.from_dlpack(edited([2], strides))
    with pytest.raises(RuntimeError, match="-1 dimensions"):
        ct.from_dlpack(edited([2], ndim=-1))
    assert p.deleted == 0
