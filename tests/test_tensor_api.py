"""cthtorch/_ops/tensor_api.py against torch: *_copy forms, angle/real/imag/
adjoint/fill, addr, igamma, nonzero_static, strided allocation helpers
and the global switches."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from test_torch_api import check, same

torch = oracle.require_torch()
RS = np.random.RandomState(1)
X = RS.randn(3, 4)
V = RS.randn(4)

COPIES = [
    ("as_strided_copy", lambda L, x: L.as_strided_copy(x, (2, 2), (1, 2), 1)),
    ("detach_copy", lambda L, x: L.detach_copy(x)), ("diagonal_copy", lambda L, x: L.diagonal_copy(x, 1)),
    ("expand_copy", lambda L, x: L.expand_copy(x[:1], (2, 4))),
    ("permute_copy", lambda L, x: L.permute_copy(x, (1, 0))), ("select_copy", lambda L, x: L.select_copy(x, 1, 2)),
    ("slice_copy", lambda L, x: L.slice_copy(x, 1, 1, None, 2)), ("slice_copy_0", lambda L, x: L.slice_copy(x)),
    ("squeeze_copy", lambda L, x: L.squeeze_copy(x[:1])), ("t_copy", lambda L, x: L.t_copy(x)),
    ("transpose_copy", lambda L, x: L.transpose_copy(x, 0, 1)), ("unfold_copy", lambda L, x: L.unfold_copy(x, 1, 2, 1)),
    ("unsqueeze_copy", lambda L, x: L.unsqueeze_copy(x, 1)), ("view_copy", lambda L, x: L.view_copy(x, (4, 3))),
    ("alias_copy", lambda L, x: L.alias_copy(x)), ("split_copy", lambda L, x: L.split_copy(x, 2, 1)),
    ("split_with_sizes_copy", lambda L, x: L.split_with_sizes_copy(x, [1, 3], 1)),
    ("unbind_copy", lambda L, x: L.unbind_copy(x, 1)),
]


@pytest.mark.parametrize("name,f", COPIES, ids=[c[0] for c in COPIES])
def test_copy_forms(name, f):
    check(f, X, grad=name != "detach_copy")
    x = ct.tensor(X)
    r = f(ct, x)
    for t in (r if isinstance(r, (list, tuple)) else [r]):
        assert t.is_contiguous() and t.data_ptr() != x.data_ptr()


MISC = [
    ("angle", lambda L, x: L.angle(x), np.append(X.ravel(), [0.0, np.nan])),
    ("angle_int", lambda L, x: L.angle(x), np.array([1, -2, 0])),
    ("real", lambda L, x: L.real(x), X), ("adjoint", lambda L, x: L.adjoint(x), X),
    ("adjoint_m", lambda L, x: x.adjoint(), X.reshape(2, 2, 3)),
    ("fill", lambda L, x: L.fill(x, 2.5), X), ("fill_t", lambda L, x: L.fill(x, L.tensor(3)), X),
    ("addr", lambda L, m, a, b: L.addr(m, a[:3], b), X, V, V), ("addr_ab", lambda L, m, a, b: m.addr(a[:3], b,
                                                                                                  beta=0.5, alpha=2),
                                                                X, V, V),
    ("addr_beta0", lambda L, m, a, b: L.addr(m, a[:3], b, beta=0), X, V, V),
    ("igamma", lambda L, a, x: L.igamma(a.detach(), x), np.abs(X) + 0.5, np.abs(X) * 2 + 0.1),
    ("igammac", lambda L, a, x: a.detach().igammac(x), np.abs(X) + 0.5, np.abs(X) * 2 + 0.1),
    ("nonzero_static", lambda L, x: L.nonzero_static(x > 0, size=20), X),
    ("nonzero_static_cut", lambda L, x: (x > 0).nonzero_static(size=2, fill_value=7), X),
]


@pytest.mark.parametrize("name,f,arrays", [(c[0], c[1], c[2:]) for c in MISC], ids=[c[0] for c in MISC])
def test_misc(name, f, arrays):
    check(f, *arrays, grad=all(a.dtype == np.float64 for a in arrays) and "fill" not in name)


def test_inplace_forms():
    for name, f in (("addr_", lambda L, x: x.addr_(L.ones(3, dtype=L.float64), L.arange(4, dtype=L.float64))),
                    ("addmv_", lambda L, x: x[0].addmv_(x.t(), L.ones(3, dtype=L.float64))),
                    ("addbmm_", lambda L, x: x[:, :3].addbmm_(L.ones(2, 3, 4, dtype=L.float64),
                                                              L.ones(2, 4, 3, dtype=L.float64))),
                    ("igamma_", lambda L, x: x.abs_().add_(0.5).igamma_(x.new_ones(()))),
                    ("addmv_fn", lambda L, x: L.addmv_(x[0], x.t(), L.ones(3, dtype=L.float64)))):
        cx, tx = ct.tensor(X), torch.tensor(X)
        f(ct, cx), f(torch, tx)
        same(cx, tx)


def test_errors_and_predicates():
    for L in (ct, torch):
        x = L.tensor(X)
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            L.imag(x)
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            x.imag
        a = L.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented"):
            L.igamma(a, L.tensor([1.0, 2.0])).sum().backward()
        assert L.real(x) is x
        assert not x.is_xpu and not x.is_mps and not x.is_sparse_csr and not L.is_distributed(x)
        assert x.const_data_ptr() == x.data_ptr() and x.to_dense() is x
        assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
        assert x.is_set_to(x) and not x.is_set_to(x.clone())
        e = x.new_empty_strided((2, 3), (1, 2))
        assert e.stride() == (1, 2) and e.dtype == x.dtype
        y = L.zeros(3)
        y.map2_(L.ones(3), L.arange(3.0), lambda a, b, c: a + b * 10 + c)
        assert y.tolist() == [10.0, 11.0, 12.0]


def test_global_switches():
    for L in (ct, torch):
        assert L.are_deterministic_algorithms_enabled() is False
        L.use_deterministic_algorithms(True, warn_only=True)
        try:
            assert L.are_deterministic_algorithms_enabled() and L.is_deterministic_algorithms_warn_only_enabled()
            assert L.get_deterministic_debug_mode() == 1
            L.set_deterministic_debug_mode("error")
            assert L.get_deterministic_debug_mode() == 2
        finally:
            L.use_deterministic_algorithms(False)
        assert L.get_deterministic_debug_mode() == 0
        prev = L.get_float32_matmul_precision()
        L.set_float32_matmul_precision("high")
        assert L.get_float32_matmul_precision() == "high"
        L.set_float32_matmul_precision(prev)
        assert L.is_warn_always_enabled() is False
        assert isinstance(L.get_num_interop_threads(), int)
        assert isinstance(L.set_flush_denormal(False), bool)


def test_float32_matmul_precision_is_allow_tf32_and_warns_on_bad_names_as_torch():
    """backends.cuda.matmul.allow_tf32 reads and writes the float32 matmul precision (True unless 'highest');
    an unknown name warns and changes nothing (an error here stopped a program torch runs on), a non-str raises"""
    import torch as T
    for L in (ct, T):
        prev = L.get_float32_matmul_precision()
        try:
            seen = []
            for p in ("high", "medium", "highest"):
                L.set_float32_matmul_precision(p)
                seen.append(L.backends.cuda.matmul.allow_tf32)
            L.backends.cuda.matmul.allow_tf32 = True
            seen.append(L.get_float32_matmul_precision())
            L.backends.cuda.matmul.allow_tf32 = False
            seen.append(L.get_float32_matmul_precision())
            with pytest.warns(UserWarning, match="^bad is not one of 'highest', 'high', or 'medium'; the "
                                                 "currentsetFloat32MatmulPrecision call has no effect."):
                L.set_float32_matmul_precision("bad")
            seen.append(L.get_float32_matmul_precision())
            with pytest.raises(RuntimeError, match="^set_float32_matmul_precision expects a str, but got int$"):
                L.set_float32_matmul_precision(3)
            assert seen == [True, True, False, "high", "highest", "highest"]
        finally:
            L.set_float32_matmul_precision(prev)


def test_module_load_matches_torch():
    import torch as T
    for L in (ct, T):
        a, b = L.zeros(3), L.arange(3.0)
        r = a.module_load(b)
        assert r.tolist() == a.tolist() == [0.0, 1.0, 2.0] and r is not a and r is not b
        p = L.nn.Parameter(L.zeros(2))
        r = p.module_load(L.ones(2, requires_grad=True), assign=True)
        assert type(r) is L.Tensor and r.tolist() == [1.0, 1.0] and not r.requires_grad
