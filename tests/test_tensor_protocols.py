"""Python protocols of tensors: truth, numbers, hashing, len/iter, pickling, GC."""
import copy
import gc
import pickle
import weakref

import numpy as np
import pytest

import cthtorch as ct


def test_bool_float_int_index():
    assert bool(ct.tensor([1])) and not bool(ct.tensor(0.0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(ct.ones(2))
    with pytest.raises(RuntimeError):
        bool(ct.ones(0))
    assert float(ct.tensor([2.5])) == 2.5 and int(ct.tensor(3.9)) == 3
    with pytest.raises(RuntimeError, match="only one element tensors can be converted to Python scalars"):
        float(ct.ones(3))
    assert [10, 20, 30][ct.tensor(1)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        [1, 2][ct.tensor(1.0)]
    assert "%.1f" % ct.tensor(1.25) == "1.2"
    assert f"{ct.tensor(2.0):.2f}" == "2.00"


def test_hash_len_iter():
    a, b = ct.ones(2), ct.ones(2)
    assert hash(a) != hash(b) and len({a, b}) == 2 and {a: 1}[a] == 1
    assert len(ct.zeros(4, 2)) == 4
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ct.tensor(1))
    rows = list(ct.arange(6).view(3, 2))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(ct.tensor(1))


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bool", "float16", "bfloat16", "uint8"])
def test_pickle_and_deepcopy(dt):
    a = ct.arange(6).view(2, 3).to(getattr(ct, dt))
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert b.dtype == a.dtype and b.shape == a.shape and b.float().tolist() == a.float().tolist()
        assert b.data_ptr() != a.data_ptr()
    r = ct.ones(2, requires_grad=True)
    assert pickle.loads(pickle.dumps(r)).requires_grad
    assert copy.deepcopy(r).requires_grad
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(r * 2)


def test_weakref_and_gc_cycles():
    a = ct.ones(3)
    r = weakref.ref(a)
    assert r() is a
    del a
    assert r() is None
    # a cycle through a tensor attribute and .grad
    x = ct.ones(2, requires_grad=True)
    x.foo = x
    x.grad = ct.zeros(2)
    wr = weakref.ref(x)
    del x
    gc.collect()
    assert wr() is None


def test_subclass_attributes():
    class My(ct.Tensor):
        pass
    m = ct.Tensor._make_subclass(My, ct.ones(2), True)
    assert type(m) is My and m.requires_grad and isinstance(m, ct.Tensor)
    m.tag = "x"
    assert m.tag == "x"
