"""finfo / iinfo: every attribute and the repr equal PyTorch's."""
import pytest

import oracle
import cthtorch as ct

torch = oracle.require_torch()

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FINFO_ATTRS = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]


@pytest.fixture(autouse=True)
def _reset_default_dtype():
    yield
    ct.set_default_dtype(ct.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    ours, ref = ct.finfo(getattr(ct, name)), torch.finfo(getattr(torch, name))
    for attr in FINFO_ATTRS:
        a, b = getattr(ours, attr), getattr(ref, attr)
        assert type(a) is type(b), attr
        assert a == b, attr
    assert repr(ours) == repr(ref)
    assert str(ours) == str(ref)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    ours, ref = ct.iinfo(getattr(ct, name)), torch.iinfo(getattr(torch, name))
    for attr in ["bits", "max", "min", "dtype"]:
        a, b = getattr(ours, attr), getattr(ref, attr)
        assert type(a) is type(b), attr
        assert a == b, attr
    assert repr(ours) == repr(ref)


def test_aliases_and_python_types():
    assert ct.finfo(ct.float) == ct.finfo(ct.float32)
    assert ct.finfo(ct.double).dtype == "float64"
    assert ct.finfo(ct.half).bits == 16
    assert ct.iinfo(ct.long).max == 2 ** 63 - 1
    assert repr(ct.finfo(float)) == repr(torch.finfo(float))
    assert repr(ct.iinfo(int)) == repr(torch.iinfo(int))


def test_torch_dtype_objects_are_accepted():
    # keyed on the dtype's spelling, so a torch.dtype works as well
    assert repr(ct.finfo(torch.bfloat16)) == repr(torch.finfo(torch.bfloat16))
    assert ct.iinfo(torch.int16).min == -32768


def test_finfo_default_dtype():
    assert repr(ct.finfo()) == repr(torch.finfo())
    ct.set_default_dtype(ct.float64)
    torch.set_default_dtype(torch.float64)
    assert ct.finfo().dtype == "float64"
    assert repr(ct.finfo()) == repr(torch.finfo())


def test_keyword_type():
    assert ct.finfo(type=ct.float16) == ct.finfo(ct.float16)
    assert ct.iinfo(type=ct.int8).max == 127


def _raises_like_torch(ours, ref, *args, **kwargs):
    with pytest.raises(Exception) as expected:
        ref(*args, **kwargs)
    with pytest.raises(type(expected.value)) as got:
        ours(*args, **kwargs)
    return str(got.value), str(expected.value)


@pytest.mark.parametrize("name", INTS + ["bool"])
def test_finfo_rejects_non_float(name):
    ours, ref = _raises_like_torch(ct.finfo, torch.finfo, getattr(torch, name))
    assert ours == ref
    with pytest.raises(TypeError):
        ct.finfo(getattr(ct, name))


@pytest.mark.parametrize("name", FLOATS + ["bool"])
def test_iinfo_rejects_non_int(name):
    ours, ref = _raises_like_torch(ct.iinfo, torch.iinfo, getattr(torch, name))
    assert ours == ref
    with pytest.raises(TypeError):
        ct.iinfo(getattr(ct, name))


@pytest.mark.parametrize("arg", ["float32", 1, None])
def test_bad_argument_types(arg):
    for ours, ref in ((ct.finfo, torch.finfo), (ct.iinfo, torch.iinfo)):
        got, expected = _raises_like_torch(ours, ref, arg)
        assert got == expected


def test_iinfo_needs_an_argument():
    got, expected = _raises_like_torch(ct.iinfo, torch.iinfo)
    assert got == expected


@pytest.mark.parametrize("args,kwargs", [
    ((torch.float32, 1), {}),
    ((torch.int32, 1, 2), {}),
    ((torch.int32,), {"foo": 1}),
    ((torch.int32,), {"type": torch.int32}),
])
def test_bad_argument_combinations(args, kwargs):
    for ours, ref in ((ct.finfo, torch.finfo), (ct.iinfo, torch.iinfo)):
        got, expected = _raises_like_torch(ours, ref, *args, **kwargs)
        assert got == expected


def test_equality_and_read_only():
    assert ct.finfo(ct.float32) == ct.finfo(ct.float32)
    assert ct.finfo(ct.float32) != ct.finfo(ct.float64)
    assert ct.iinfo(ct.int8) != ct.finfo(ct.float32)
    assert ct.finfo() != 1
    with pytest.raises(TypeError):
        hash(ct.finfo())
    info = ct.finfo()
    with pytest.raises(AttributeError):
        info.eps = 1.0
    with pytest.raises(AttributeError):
        info.anything = 1
    assert isinstance(info, ct.finfo)
    assert isinstance(ct.iinfo(ct.uint8), ct.iinfo)


def test_values_against_tensors():
    # eps is the gap above 1.0 and max is finite in the dtype itself
    for name in FLOATS:
        dt = getattr(ct, name)
        info = ct.finfo(dt)
        one = ct.ones(1, dtype=dt)
        assert ((one + info.eps) > one).item()
        assert ((one + info.eps / 4) == one).item()
        assert ct.tensor([info.max], dtype=dt).isfinite().item()
