"""Complex fill values (torch's complex Scalar): full/full_like/new_full/fill_/torch.fill and item assignment
infer or keep the dtype as torch does; a real dtype takes a complex number only without an imaginary part,
with c10's overflow text naming the C++ type. Compared with torch 2.13."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def outcome(L, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a cast that warns and drops the imaginary part is a difference
        try:
            r = fn(L)
        except Exception as e:   # noqa: BLE001 - type and text are compared
            return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], np.asarray(r.tolist(), dtype=complex), tuple(r.shape)


def same(fn):
    c, t = outcome(ct, fn), outcome(torch, fn)
    assert c[0] == t[0], (c, t)
    if len(c) == 2:
        assert c[1] == t[1]
    else:
        np.testing.assert_array_equal(c[1], t[1])
        assert c[2] == t[2]


@pytest.mark.parametrize("value", [1 + 2j, 2j, 1 + 0j, -0.5 - 0j])
def test_full_infers_the_default_complex_dtype(value):
    same(lambda L: L.full((2, 3), value))
    same(lambda L: L.full((), value))
    same(lambda L: L.full((2,), L.tensor(value)))   # a 0-d complex tensor is a Scalar too
    same(lambda L: L.full((2,), L.tensor(value, dtype=L.complex128)))


def test_full_follows_the_default_dtype():
    for L in (ct, torch):
        L.set_default_dtype(L.float64)
    try:
        same(lambda L: L.full((2,), 1j))
    finally:
        for L in (ct, torch):
            L.set_default_dtype(L.float32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [1 + 2j, 3 + 0j])
def test_complex_values_into_each_dtype(dtype, value):
    same(lambda L: L.full((2,), value, dtype=getattr(L, dtype)))
    same(lambda L: L.full_like(L.zeros(2, 3, dtype=getattr(L, dtype)), value))
    same(lambda L: L.zeros(2, dtype=getattr(L, dtype)).new_full((3,), value))
    same(lambda L: L.zeros(2, dtype=getattr(L, dtype)).fill_(value))
    same(lambda L: L.fill(L.zeros(2, dtype=getattr(L, dtype)), value))


def test_full_like_dtype_argument_and_layout():
    same(lambda L: L.full_like(L.zeros(2), 1 + 2j, dtype=L.complex64))
    same(lambda L: L.full_like(L.zeros(3, 2, dtype=L.complex128).t(), 1 - 1j))
    assert ct.full_like(ct.zeros(3, 2, dtype=ct.complex64).t(), 1j).stride() == (1, 2)


def test_full_out_is_filled_in_place():
    for value in (2j, 2.5):
        same(lambda L: L.full((2,), value, out=L.empty(2, dtype=L.complex64)))
        same(lambda L: L.full((2,), value, out=L.empty(2, dtype=L.float64)))
    o = ct.empty(2, dtype=ct.complex64)
    assert ct.full((2,), 1 + 1j, out=o) is o
    same(lambda L: L.full((2,), 3, out=L.empty(2, dtype=L.float32), dtype=L.float64))


def test_item_assignment_of_a_complex_number():
    def put(L, dtype, index, value):
        x = L.zeros(3, dtype=getattr(L, dtype))
        x[index] = value
        return x
    for dtype in ("float32", "int64", "complex64", "bool"):
        for index in (0, [0, 2], slice(1, None)):
            for value in (1 + 2j, 4 + 0j):
                same(lambda L: put(L, dtype, index, value))


def test_other_tensors_stay_the_scalar_parameters_type_error():
    same(lambda L: L.full((2,), L.tensor([1j])))
    same(lambda L: L.full((2,), L.ones(2)))
    same(lambda L: L.full((2,), "a"))
    same(lambda L: L.full_like(L.ones(2), L.tensor([1j])))
