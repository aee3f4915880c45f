"""Sparse COO tensors against PyTorch: construction, printing, coalescing,
products and their gradients, sums, softmax, arithmetic, conversions, error
types, and a pygcn-style GCN trained the same under both libraries."""
import copy
import operator
import pickle

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:torch.sparse.SparseTensor"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support")]

I = [[0, 1, 1, 0], [2, 0, 2, 2]]       # uncoalesced: (0, 2) twice
V = [3., 4., 5., 1.]
D = np.random.RandomState(0).randn(3, 2).astype(np.float32)
G = np.arange(4, dtype=np.float32).reshape(2, 2)   # weights for the loss, so every grad entry differs


def S(L, **kw):
    return L.sparse_coo_tensor(L.tensor(I), L.tensor(V), (2, 3), **kw)


def _np(x):
    return x.detach().numpy() if x.dtype != x.dtype.__class__ else x


def check_same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            check_same(a, b)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs
        return
    assert isinstance(ours, ct.Tensor)
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    assert ours.is_sparse == theirs.is_sparse
    if theirs.is_sparse:
        assert repr(ours) == repr(theirs)
        assert ours.is_coalesced() == theirs.is_coalesced()
        np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
        ours, theirs = ours._values(), theirs._values()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


CASES = {
    "construct": lambda L: S(L),
    "construct_double_grad": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V, dtype=L.float64), (2, 3),
                                                           requires_grad=True),
    "construct_int_values": lambda L: L.sparse_coo_tensor(L.tensor(I), [1, 2, 3, 4], (2, 3)),
    "construct_dtype": lambda L: L.sparse_coo_tensor(I, V, (2, 3), dtype=L.float64),
    "construct_infer_size": lambda L: L.sparse_coo_tensor(L.tensor([[0, 5]]), L.tensor([1., 2.])),
    "construct_empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)),
    "construct_size_only": lambda L: L.sparse_coo_tensor(size=(2, 3)),
    "construct_one_entry": lambda L: L.sparse_coo_tensor(L.tensor([[0]]), L.tensor([1.]), (3,)),
    "construct_hybrid": lambda L: L.sparse_coo_tensor(L.tensor([[0, 2]]), L.arange(6.).view(2, 3), (4, 3)),
    "legacy_float": lambda L: L.sparse.FloatTensor(L.tensor(I), L.tensor(V), L.Size([2, 3])),
    "legacy_double_values": lambda L: L.sparse.FloatTensor(L.tensor(I), L.tensor(V, dtype=L.float64), L.Size([2, 3])),
    "legacy_empty": lambda L: L.sparse.FloatTensor(2, 3),
    "print_long": lambda L: L.sparse_coo_tensor(L.stack([L.arange(30), L.arange(30)]), L.arange(30.) / 7, (30, 30)),
    "print_summarised": lambda L: _big(L),
    "print_summarised_coalesced": lambda L: _big(L).coalesce(),
    "print_hybrid_grad": lambda L: L.sparse_coo_tensor(L.tensor([[0, 2], [1, 1]]), L.arange(6.).view(2, 3) - 2.5,
                                                       (4, 3, 3), requires_grad=True),
    "print_other_dtypes": lambda L: (L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([True, False]), (3,)),
                                     L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1, 2], dtype=L.int32), (3,)),
                                     L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1e-8, 1e8]), (3,))),
    "t_1d": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1., 2.]), (3,), requires_grad=True).t(),
    "coalesce": lambda L: S(L).coalesce(),
    "coalesce_indices_values": lambda L: (S(L).coalesce().indices(), S(L).coalesce().values()),
    "to_dense": lambda L: S(L).to_dense(),
    "to_dense_hybrid": lambda L: L.sparse_coo_tensor(L.tensor([[0, 2]]), L.arange(6.).view(2, 3), (4, 3)).to_dense(),
    "to_sparse": lambda L: L.tensor([[0., 1., 2.], [3., 0., 0.]]).to_sparse(),
    "to_sparse_dim1": lambda L: L.tensor([[0., 0.], [3., 0.]]).to_sparse(1),
    "t": lambda L: S(L).t(),
    "t_coalesced": lambda L: S(L).coalesce().t(),
    "transpose": lambda L: S(L).transpose(0, 1),
    "mul_scalar": lambda L: (S(L) * 2, 2.5 * S(L), S(L).coalesce() * 3, S(L) * L.tensor(2.)),
    "mul_dense": lambda L: S(L) * L.arange(3.),
    "div_neg": lambda L: (S(L) / 4, -S(L), S(L).neg()),
    "unary_coalescing": lambda L: (S(L).abs(), L.relu(-S(L)), S(L).sqrt(), S(L) ** 2, S(L).pow(3)),
    "add_sparse": lambda L: _ab(L)[0] + _ab(L)[1],
    "add_sparse_coalesced": lambda L: _ab(L)[0].coalesce() + _ab(L)[1].coalesce(),
    "sub_sparse": lambda L: _ab(L)[0] - _ab(L)[1],
    "add_alpha": lambda L: L.add(_ab(L)[0], _ab(L)[1], alpha=3),
    "dense_plus_sparse": lambda L: (L.ones(2, 3) + S(L), L.ones(2, 3) - S(L), L.add(L.zeros(2, 3), S(L), alpha=2)),
    "dense_inplace": lambda L: _inplace(L),
    "sum_all": lambda L: (L.sparse.sum(S(L)), S(L).sum(), L.sum(S(L)), L.sparse.sum(S(L), dtype=L.float64)),
    "sum_dims": lambda L: (L.sparse.sum(S(L), 0), L.sparse.sum(S(L), 1), L.sparse.sum(S(L), -1),
                           L.sparse.sum(S(L), (0, 1))),
    "sum_keepdim": lambda L: S(L).sum(0, keepdim=True),
    "sum_hybrid": lambda L: (L.sparse.sum(_h(L), 0), L.sparse.sum(_h(L), 1)),
    "sum_int": lambda L: L.sparse.sum(S(L).long()),
    "softmax": lambda L: (L.sparse.softmax(S(L), 1), L.sparse.softmax(S(L), 0)),
    "log_softmax": lambda L: L.sparse.log_softmax(S(L), 1).to_dense(),
    "mm": lambda L: L.mm(S(L), L.tensor(D)),
    "spmm": lambda L: L.spmm(S(L), L.tensor(D)),
    "sparse_mm": lambda L: L.sparse.mm(S(L), L.tensor(D)),
    "matmul_ops": lambda L: (S(L) @ L.tensor(D), L.matmul(S(L), L.tensor(D)), S(L).mm(L.tensor(D)),
                             S(L) @ L.ones(3)),
    "dense_mm_sparse": lambda L: (L.ones(4, 2) @ S(L), L.mm(L.ones(4, 2), S(L)), L.ones(4, 2).mm(S(L))),
    "mm_int": lambda L: L.mm(S(L).long(), L.ones(3, 2, dtype=L.long)),
    "addmm": lambda L: L.sparse.addmm(L.ones(2, 2), S(L), L.tensor(D), beta=0.5, alpha=2),
    "sparse_sparse_mm": lambda L: (L.sparse.mm(S(L), _b(L)), L.mm(S(L), _b(L)), S(L) @ _b(L),
                                   L.sparse.mm(L.sparse_coo_tensor([[0, 1], [0, 1]], [1., -1.], (2, 2)),
                                               L.sparse_coo_tensor([[0, 1], [1, 1]], [1., 1.], (2, 2))),
                                   L.sparse.mm(S(L), L.sparse_coo_tensor(size=(3, 4))),
                                   L.sparse.mm(_big(L), _big(L).t())),
    "addmm_torch": lambda L: L.addmm(L.ones(2, 2), S(L), L.tensor(D)),
    "conversions": lambda L: (S(L).double(), S(L).to(L.float64), S(L).coalesce().double(), S(L).long(),
                              S(L).to("cpu", L.float64)),
    "zeros_like": lambda L: L.zeros_like(S(L)),
    "cat": lambda L: L.cat([S(L), S(L).coalesce()]),
    "detach_clone": lambda L: (S(L, requires_grad=True).detach(), S(L).clone()),
    "props": lambda L: (S(L).is_sparse, str(S(L).layout), S(L).is_coalesced(), S(L)._nnz(), tuple(S(L).shape),
                        tuple(S(L).size()), S(L).size(1), S(L).dim(), S(L).ndim, S(L).sparse_dim(),
                        S(L).dense_dim(), S(L).numel(), str(S(L).dtype), str(S(L).device), S(L).is_leaf,
                        S(L).requires_grad, S(L).type(), S(L).double().type(), S(L).stride(), len(S(L)),
                        S(L).is_cuda, S(L).is_floating_point(), S(L).element_size()),
    "torch_functions": lambda L: (L.numel(S(L)), L.is_floating_point(S(L)), L.is_floating_point(S(L).long()),
                                  L.is_tensor(S(L))),
    "props_dense": lambda L: (L.ones(2).is_sparse, str(L.ones(2).layout), L.ones(2, 3).sparse_dim(),
                              L.ones(2, 3).dense_dim()),
    "isinstance": lambda L: (isinstance(S(L), L.Tensor), L.is_tensor(S(L)), isinstance(S(L), L.sparse.FloatTensor),
                             isinstance(S(L), L.FloatTensor), isinstance(L.ones(2), L.sparse.FloatTensor),
                             isinstance(S(L).double(), L.sparse.DoubleTensor), S(L).layout == L.sparse_coo,
                             S(L).layout == L.strided),
    "identity_conversions": lambda L: (S(L).float() is S(L), _same(L, lambda s: s.float()),
                                       _same(L, lambda s: s.cpu()), _same(L, lambda s: s.to("cpu")),
                                       _same(L, lambda s: s.coalesce()) is False,
                                       _same(L, lambda s: s.coalesce().coalesce(), coalesced=True)),
}


def _ab(L):
    return (L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1., 2.]), (3,)),
            L.sparse_coo_tensor(L.tensor([[1, 2]]), L.tensor([10., 20.]), (3,)))


def _inplace(L):
    out = []
    for op in (operator.iadd, operator.isub, operator.imul):   # d += s and friends keep d
        d = L.ones(2, 3) * 3
        r = op(d, S(L))
        out += [r, r is d]
    out.append(L.ones(2, 3).add_(S(L), alpha=2))
    return tuple(out)


def _b(L):
    return L.sparse_coo_tensor([[2, 0, 1, 2], [0, 1, 1, 0]], [1., -4., 2., 1.], (3, 2))


def _big(L):
    rs = np.random.RandomState(0)
    idx = rs.randint(0, 500, (2, 2000))
    return L.sparse.FloatTensor(L.from_numpy(idx), L.from_numpy(rs.rand(2000).astype(np.float32)), L.Size([500, 500]))


def _h(L):
    return L.sparse_coo_tensor(L.tensor([[0, 2]]), L.arange(6.).view(2, 3), (4, 3))


def _same(L, f, coalesced=False):
    s = S(L).coalesce() if coalesced else S(L)
    return f(s) is s if not coalesced else f(s) is f(s)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    check_same(CASES[name](ct), CASES[name](torch))


# ---------------------------------------------------------------- gradients

def _grads(L, op, leaf=True):
    s = S(L, requires_grad=True)
    d = L.tensor(D, requires_grad=True)
    out = op(L, s, d)
    name = out.grad_fn.name()
    (out * L.tensor(G)).sum().backward()
    return name, s.grad, d.grad


PRODUCTS = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),     # sparse gradient on the coalesced pattern
    "mm": lambda L, s, d: L.mm(s, d),                    # a sparse leaf gets torch.mm's dense gradient
    "spmm": lambda L, s, d: L.spmm(s, d),
    "matmul": lambda L, s, d: L.matmul(s, d),
    "operator": lambda L, s, d: s @ d,
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_product_gradients(name):
    ours, theirs = _grads(ct, PRODUCTS[name]), _grads(torch, PRODUCTS[name])
    assert ours[0] == theirs[0]
    check_same(ours[1:], theirs[1:])


def test_gradient_of_dense_operand_only():
    def run(L):
        d = L.tensor(D, requires_grad=True)
        out = L.spmm(S(L), d)
        (out * L.tensor(G)).sum().backward()
        return out, out.grad_fn.name(), d.grad
    check_same(run(ct), run(torch))


SPARSE_LEAF_GRADS = {
    "to_dense": lambda L, s: s.to_dense().pow(2).sum(),
    "sparse_sum": lambda L, s: L.sparse.sum(s),
    "sparse_sum_dim": lambda L, s: (L.sparse.sum(s, 1).to_dense() * L.tensor([1., 2.])).sum(),
    "coalesce_values": lambda L, s: (s.coalesce().values() * L.tensor([1., 2., 3.])).sum(),
    "mul_then_mm": lambda L, s: (L.sparse.mm(s * 2, L.tensor(D)) * L.tensor(G)).sum(),
    "softmax": lambda L, s: (L.sparse.softmax(s, 1).to_dense() * L.arange(6.).view(2, 3)).sum(),
    "t_mm": lambda L, s: L.sparse.mm(s.t(), L.ones(2, 2)).sum(),
}


@pytest.mark.parametrize("name", sorted(SPARSE_LEAF_GRADS))
def test_sparse_leaf_gradients(name):
    # compared coalesced: the order of the entries (and the is_coalesced flag)
    # of a sparse gradient depend on torch's backward formulas
    def run(L):
        s = S(L, requires_grad=True)
        loss = SPARSE_LEAF_GRADS[name](L, s)
        loss.backward()
        return loss, s.grad.coalesce()
    check_same(run(ct), run(torch))


def test_gradient_flows_to_values_and_dense_sources():
    def run(L):
        w = L.tensor(V, requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor(I), w * 1, (2, 3))
        x = L.tensor([[0., 1., 2.], [3., 0., 0.]], requires_grad=True)
        xs = x.to_sparse()
        loss = (L.sparse.mm(s, L.tensor(D)) * L.tensor(G)).sum() + (L.mm(xs, L.tensor(D)) * L.tensor(G)).sum()
        loss.backward()
        return (repr(s).replace("MulBackward0", "X"), s.is_leaf, s.grad_fn.name(), xs.grad_fn.name(), w.grad,
                x.grad, repr(L.sparse_coo_tensor(L.tensor(I), w, (2, 3))))
    check_same(run(ct), run(torch))


def test_double_backward_through_product():
    def run(L):
        d = L.tensor(D, requires_grad=True)
        out = L.sparse.mm(S(L), d * d)
        g, = L.autograd.grad((out * L.tensor(G)).sum(), d, create_graph=True)
        g.pow(2).sum().backward()
        return g, d.grad
    check_same(run(ct), run(torch))


def test_grad_reset_and_accumulate():
    s = S(ct, requires_grad=True)
    for _ in range(2):
        ct.sparse.sum(s).backward()
    assert s.grad._values().tolist() == [2., 2., 2.]
    s.grad = None
    assert s.grad is None


# ---------------------------------------------------------------- errors

ERRORS = {
    "mm_dtype": lambda L: L.mm(S(L), L.tensor(D, dtype=L.float64)),
    "mm_shape": lambda L: L.mm(S(L), L.ones(4, 2)),
    "sparse_mm_shape": lambda L: L.sparse.mm(S(L), L.ones(4, 2)),
    "mm_1d": lambda L: L.mm(S(L), L.ones(3)),
    "matmul_3d": lambda L: S(L) @ L.ones(2, 3, 2),
    "sparse_plus_dense": lambda L: S(L) + L.ones(2, 3),
    "sparse_plus_scalar": lambda L: S(L) + 1,
    "dense_plus_sparse_broadcast": lambda L: L.ones(3) + S(L),
    "add_size_mismatch": lambda L: S(L) + L.sparse_coo_tensor(L.tensor(I), L.tensor(V), (3, 3)),
    "div_by_dense": lambda L: S(L) / L.ones(2, 3),
    "dense_idiv_sparse": lambda L: L.ones(2, 3).div_(S(L)),
    "rdiv": lambda L: 2 / S(L),
    "exp": lambda L: L.exp(S(L)),
    "exp_method": lambda L: S(L).exp(),
    "view": lambda L: S(L).view(6),
    "eq": lambda L: S(L) == S(L),
    "mean": lambda L: S(L).mean(),
    "numpy": lambda L: S(L).numpy(),
    "tolist": lambda L: S(L).tolist(),
    "item": lambda L: S(L).item(),
    "contiguous": lambda L: S(L).contiguous(),
    "indices_uncoalesced": lambda L: S(L).indices(),
    "values_uncoalesced": lambda L: S(L).values(),
    "t_3d": lambda L: L.sparse_coo_tensor(L.tensor([[0], [1], [2]]), L.tensor([1.]), (2, 3, 4)).t(),
    "nnz_mismatch": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V[:3]), (2, 3)),
    "size_len": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor(V), (2, 3, 4)),
    "check_negative": lambda L: L.sparse_coo_tensor(L.tensor([[0, -1]]), L.tensor([1., 2.]), (3,),
                                                    check_invariants=True),
    "check_bounds": lambda L: L.sparse_coo_tensor(L.tensor([[0, 5]]), L.tensor([1., 2.]), (3,),
                                                  check_invariants=True),
    "grad_int": lambda L: L.sparse_coo_tensor(L.tensor(I), L.tensor([1, 2, 3, 4]), requires_grad=True),
    "grad_int_method": lambda L: S(L).long().requires_grad_(),
    "sum_dup_dims": lambda L: L.sparse.sum(S(L), (0, 0)),
    "sum_bad_dim": lambda L: L.sparse.sum(S(L), 2),
    "cat_dense": lambda L: L.cat([S(L), L.ones(2, 3)]),
    "dense_coalesce": lambda L: L.ones(2).coalesce(),
    "dense_is_coalesced": lambda L: L.ones(2).is_coalesced(),
    "dense_indices": lambda L: L.ones(2).indices(),
    "dense_nnz": lambda L: L.ones(2)._nnz(),
    "bool": lambda L: bool(S(L)),
    "sparse_sparse_dtype": lambda L: L.sparse.mm(S(L), _b(L).double()),
    "sparse_sparse_shape": lambda L: L.sparse.mm(S(L), S(L)),
    "sparse_sparse_long": lambda L: L.sparse.mm(S(L).long(), _b(L).long()),
    "ones_like": lambda L: L.ones_like(S(L)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](ct)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    if not isinstance(theirs.value, NotImplementedError):
        assert str(ours.value) == str(theirs.value)


def test_not_implemented_says_so():
    s = S(ct)
    for f in (lambda: S(ct, requires_grad=True) @ s.t(), lambda: s[0, 1], lambda: s.backward(), lambda: ct.ones(2).to_sparse_csr(),
              lambda: ct.zeros(2, 3, layout=ct.sparse_coo), lambda: ct.ones(2).to_sparse(layout=ct.sparse_csr)):
        with pytest.raises(NotImplementedError, match="cthtorch|SparseCPU"):
            f()


def test_indices_outside_the_size_refused():
    # PyTorch leaves this undefined when invariant checks are off; cthtorch's scatter would write out of bounds
    for idx in ([[0, 5]], [[0, -1]]):
        s = ct.sparse_coo_tensor(idx, [1., 2.], (3,))
        with pytest.raises(RuntimeError, match="outside its size"):
            s.to_dense()


# ---------------------------------------------------------------- protocols

def test_pickle_deepcopy_and_warning():
    s = S(ct).coalesce().requires_grad_()
    for t in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert repr(t) == repr(s) and t.is_coalesced() and t.requires_grad and t is not s
    check_same(pickle.loads(pickle.dumps(S(ct))), S(torch))


def test_check_sparse_tensor_invariants_context():
    for L in (ct, torch):
        with L.sparse.check_sparse_tensor_invariants():
            assert L.sparse.check_sparse_tensor_invariants.is_enabled()
            with pytest.raises(RuntimeError, match="size is inconsistent"):
                L.sparse_coo_tensor(L.tensor([[0, 5]]), L.tensor([1., 2.]), (3,))
        assert not L.sparse.check_sparse_tensor_invariants.is_enabled()


_LEGACY_WARNINGS = """
import sys, warnings
import {lib} as L
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as w:
    L.sparse.FloatTensor(L.tensor([[0, 1]]), L.tensor([1., 2.]), L.Size([3]))
    legacy = [str(x.message)[:40] for x in w]
with warnings.catch_warnings(record=True) as w:
    L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1., 2.]), (3,))
    modern = [str(x.message)[:40] for x in w]
print(legacy, modern)
"""


@pytest.mark.parametrize("lib", ["cthtorch", "torch"])
def test_legacy_constructor_never_warns_invariants_unset(lib):
    """pygcn's torch.sparse.FloatTensor gives only the deprecation warning; sparse_coo_tensor then gives the
    invariant one (once per process, so each library runs in a fresh interpreter)"""
    import os
    import subprocess
    import sys
    if lib == "torch":
        oracle.require_torch()
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", _LEGACY_WARNINGS.format(lib=lib)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['torch.sparse.SparseTensor(indices, value'] ['Sparse invariant checks are implicitly d']"


def test_legacy_constructor_checks_under_the_global_flag():
    for L in (ct, oracle.require_torch()):
        with L.sparse.check_sparse_tensor_invariants():
            with pytest.raises(RuntimeError, match="size is inconsistent"):
                L.sparse.FloatTensor(L.tensor([[0, 5]]), L.tensor([1., 2.]), L.Size([3]))


def test_sparse_buffer_in_module():
    def run(L):
        m = L.nn.Linear(3, 2)
        m.register_buffer("adj", S(L))
        m.double()
        return m.adj, sorted(m.state_dict())
    check_same(run(ct), run(torch))


# ---------------------------------------------------------------- pygcn

def test_pygcn_training_matches_torch():
    """tests/programs/gcn_small.py (pygcn's model and training loop on a seeded
    random graph) prints the same weights, losses and accuracies under both."""
    from test_programs_match_torch import numbers, run
    ours, theirs = numbers(run("gcn_small.py", "cthtorch")), numbers(run("gcn_small.py", "torch"))
    assert len(ours) == len(theirs) > 100
    assert ours == pytest.approx(theirs, rel=1e-4, abs=1e-5)


def test_save_load_both_ways(tmp_path):
    ours, theirs = str(tmp_path / "ours.pt"), str(tmp_path / "theirs.pt")
    ct.save({"adj": S(ct), "c": S(ct).coalesce().double(), "size": ct.Size([2, 3])}, ours)
    torch.save({"adj": S(torch), "c": S(torch).coalesce().double(), "size": torch.Size([2, 3])}, theirs)
    for a, b in ((ct.load(theirs), torch.load(theirs)), (ct.load(ours, weights_only=True), torch.load(ours))):
        check_same(a["adj"], b["adj"])
        check_same(a["c"], b["c"])
        assert tuple(a["size"]) == tuple(b["size"]) == (2, 3)


_MUL_CASES = {
    "uncoalesced_both": ([[0, 1, 1, 2], [1, 0, 2, 2]], [1., 2, 3, 4], [[1, 2, 0, 1], [2, 2, 0, 2]], [10., 20, 30, 5]),
    "one_entry_x": ([[0], [0]], [2.], [[1, 2, 1], [1, 2, 0]], [10., 20, 30]),
    "one_entry_y": ([[1, 2, 1], [1, 2, 0]], [10., 20, 30], [[0], [0]], [2.]),
    "duplicates": ([[1, 1, 0], [1, 1, 0]], [1., 2, 3], [[1, 2, 1], [1, 2, 0]], [10., 20, 30]),
    "empty": ([[0, 1, 1, 2], [1, 0, 2, 2]], [1., 2, 3, 4], [[], []], []),
}


@pytest.mark.parametrize("case", sorted(_MUL_CASES))
@pytest.mark.parametrize("coalesce", ["none", "x", "y", "both"])
def test_sparse_times_sparse_follows_torchs_intersection(case, coalesce):
    """sparse * sparse (GNN masks, DistMult-style products of adjacency): the result keeps torch's pattern (the
    uncoalesced source's entries with 0 where the other has none, or the coalesced intersection), dtype,
    coalesced flag and the gradient of the values"""
    xi, xv, yi, yv = _MUL_CASES[case]
    out = []
    for L in (ct, torch):
        xval = L.tensor(xv, requires_grad=True)
        x = L.sparse_coo_tensor(L.tensor(xi, dtype=L.int64).reshape(2, -1), xval, (3, 3))
        y = L.sparse_coo_tensor(L.tensor(yi, dtype=L.int64).reshape(2, -1), L.tensor(yv, dtype=L.float64), (3, 3))
        if coalesce in ("x", "both"):
            x = x.coalesce()
        if coalesce in ("y", "both"):
            y = y.coalesce()
        r = x * y
        r2 = L.mul(y.detach(), x.detach())
        L.sparse.sum(r).backward()
        out.append((r._indices().tolist(), r._values().tolist(), str(r.dtype), r.is_coalesced(),
                    r2._indices().tolist(), r2._values().tolist(), xval.grad.tolist()))
    assert out[0] == out[1]


def test_sparse_times_sparse_hybrid_and_shape_error():
    out = []
    for L in (ct, torch):
        i = L.tensor([[0, 1, 1], [1, 0, 0]])
        h = L.sparse_coo_tensor(i, L.arange(6.).view(3, 2), (2, 2, 2))
        r = h * h.coalesce()
        with pytest.raises(RuntimeError) as e:
            h * L.sparse_coo_tensor(i, L.ones(3, 2), (2, 3, 2))
        out.append((r._indices().tolist(), r._values().tolist(), r.to_dense().tolist(), str(e.value)))
    assert out[0] == out[1]


_SELECT_CASES = [
    lambda L, B, h: B.index_select(0, L.tensor([2, 1, 2])),
    lambda L, B, h: B.coalesce().index_select(1, L.tensor([1, 0])),
    lambda L, B, h: L.index_select(B, 1, L.tensor([3])),
    lambda L, B, h: h.index_select(2, L.tensor([0, 0])),
    lambda L, B, h: B.unsqueeze(0),
    lambda L, B, h: B.coalesce().unsqueeze(1),
    lambda L, B, h: h.unsqueeze(3),
    lambda L, B, h: h.unsqueeze(2),
    lambda L, B, h: L.stack([B, B], 1),
    lambda L, B, h: L.stack([B, B.coalesce()]),
    lambda L, B, h: B.select(0, 1),
    lambda L, B, h: B.coalesce().select(1, 1),
    lambda L, B, h: B[1],
    lambda L, B, h: B[-1],
    lambda L, B, h: h.select(2, 1),
]


@pytest.mark.parametrize("k", range(len(_SELECT_CASES)))
def test_sparse_index_select_select_unsqueeze_stack_like_torch(k):
    """GNN subgraph code (adj.index_select(0, nodes), adj[i], torch.stack of adjacencies): entries in torch's
    order, its coalesced flag (fewer than two entries count as coalesced), hybrid values"""
    out = []
    for L in (ct, torch):
        ei = L.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]])
        B = L.sparse_coo_tensor(ei, L.arange(5.), (4, 4))
        h = L.sparse_coo_tensor(ei, L.arange(15.).view(5, 3), (4, 4, 3))
        r = _SELECT_CASES[k](L, B, h)
        out.append((r._indices().tolist(), r._values().tolist(), tuple(r.shape), r.is_coalesced()))
    assert out[0] == out[1]


def test_sparse_index_select_and_select_errors_like_torch():
    for f in (lambda L, B: B.index_select(0, L.tensor([[0]])), lambda L, B: B.index_select(0, L.tensor([5])),
              lambda L, B: B.index_select(2, L.tensor([0]))):
        oracle.raises_like(lambda: f(ct, S(ct)), lambda: f(torch, S(torch)))


def test_sparse_index_select_wraps_negative_indices_like_torch():
    """along a sparse dim torch's kernel wraps negative indices (adj.index_select(0, torch.tensor([-1])))"""
    out = []
    for L in (ct, torch):
        B = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]]), L.arange(5.), (4, 4))
        r = B.index_select(0, L.tensor([-1, 1, -4]))
        out.append((r._indices().tolist(), r._values().tolist(), tuple(r.shape), r.is_coalesced()))
    assert out[0] == out[1]


def test_sparse_index_select_index_errors_like_torch():
    """torch's sparse kernel takes only a 1-D int64 index and names the first index out of range"""
    for f in (lambda L, B: B.index_select(0, L.tensor([0], dtype=L.int32)),
              lambda L, B: B.index_select(0, L.tensor(0)), lambda L, B: B.index_select(0, L.tensor([0.])),
              lambda L, B: B.index_select(1, L.tensor([-4])), lambda L, B: B.index_select(1, L.tensor([1, 7, -9]))):
        oracle.raises_like(lambda: f(ct, S(ct)), lambda: f(torch, S(torch)))
