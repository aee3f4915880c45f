"""dtypes torch has and cthtorch does not compute in (complex32, uint16..64, float8,
quantized): programs that name them import, their attributes are torch's, and an op
given one raises NotImplementedError instead of computing in a default dtype."""
import pickle

import pytest

import cthtorch as ct
import oracle

NAMES = ["complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble", "uint16", "uint32", "uint64",
         "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
         "qint8", "quint8", "qint32", "quint4x2"]


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_torch(name):
    torch = oracle.require_torch()
    ours, ref = getattr(ct, name), getattr(torch, name)
    assert repr(ours) == repr(ref)
    for attr in ("itemsize", "is_complex", "is_floating_point", "is_signed"):
        try:
            want = getattr(ref, attr)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                getattr(ours, attr)
            continue
        assert getattr(ours, attr) == want, attr


def test_aliases_and_pickle():
    assert ct.cfloat is ct.complex64 and ct.cdouble is ct.complex128 and ct.chalf is ct.complex32
    assert pickle.loads(pickle.dumps(ct.complex64)) is ct.complex64
    assert ct.complex64 != ct.float32 and ct.complex64.to_real() is ct.float32
    assert ct.finfo(ct.complex128).eps == ct.finfo(ct.float64).eps


@pytest.mark.parametrize("call", [
    lambda d: ct.randn(3, dtype=d),
    lambda d: ct.zeros(2, 2, dtype=d),
    lambda d: ct.tensor([1.0], dtype=d),
    lambda d: ct.arange(3, dtype=d),
    lambda d: ct.ones(2).to(d),
    lambda d: ct.ones(2).to(dtype=d),
    lambda d: ct.ones(2).type(d),
    lambda d: ct.ones(2).sum(dtype=d),
])
@pytest.mark.parametrize("name", ["complex32", "uint16", "qint8"])
def test_ops_refuse_them(call, name):
    with pytest.raises(NotImplementedError, match="dtype torch.%s is not implemented" % name):
        call(getattr(ct, name))
