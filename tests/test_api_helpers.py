"""Small public helpers torch programs call, against torch: Tensor.cfloat/cdouble/chalf and complex(t),
torch.sym_* on numbers, nn.utils.rnn.invert_permutation."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like, same

torch = oracle.require_torch()


def test_complex_conversions():
    a = np.arange(6.0).reshape(2, 3)
    xc, xt = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for name in ("cfloat", "cdouble"):
        rc, rt = getattr(xc.t(), name)(), getattr(xt.t(), name)()
        assert str(rc.dtype) == str(rt.dtype) and rc.stride() == rt.stride()
        np.testing.assert_array_equal(np.asarray(rc.detach().numpy()), rt.detach().numpy())
        assert rc.grad_fn.name() == rt.grad_fn.name()
    assert complex(ct.tensor(2.5)) == complex(torch.tensor(2.5)) == 2.5 + 0j
    assert complex(ct.tensor([1 + 2j])) == complex(torch.tensor([1 + 2j]))
    raises_like(lambda: complex(ct.ones(2)), lambda: complex(torch.ones(2)))
    with pytest.raises(NotImplementedError, match="complex32"):
        ct.ones(2).chalf()


@pytest.mark.parametrize("name,args", [("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (5,)),
                                       ("sym_float", (3,)), ("sym_max", (2, 3.0)), ("sym_max", (3, 2.0)),
                                       ("sym_max", (3, 2)), ("sym_min", (2, 3.0)), ("sym_min", (4, 7)),
                                       ("sym_not", (1,)), ("sym_sqrt", (4,)), ("sym_ite", (False, 1, 2)),
                                       ("sym_sum", ([1, 2, 3],))])
def test_sym_helpers(name, args):
    rc, rt = getattr(ct, name)(*args), getattr(torch, name)(*args)
    assert rc == rt and type(rc) is type(rt)


def test_sym_max_refuses_tensors():
    raises_like(lambda: ct.sym_max(ct.tensor(1), ct.tensor(2)), lambda: torch.sym_max(torch.tensor(1), torch.tensor(2)))


def test_invert_permutation():
    p = [3, 0, 2, 1]
    same(ct.nn.utils.rnn.invert_permutation(ct.tensor(p)), torch.nn.utils.rnn.invert_permutation(torch.tensor(p)))
    assert ct.nn.utils.rnn.invert_permutation(None) is None


@pytest.fixture
def torch_validation_restored():
    # torch.cond goes through dynamo, which turns off torch's distribution argument validation for
    # the whole process; later tests compare distribution errors with torch's
    yield
    torch.distributions.Distribution.set_default_validate_args(True)


def test_cond_and_while_loop_eager(torch_validation_restored):
    for m in (ct, torch):
        m.xs = m.ones(2, requires_grad=True)
    for pred in (True, False):
        for wrap in (lambda m, p: p, lambda m, p: m.tensor(p), lambda m, p: m.tensor([float(p)])):
            rc = ct.cond(wrap(ct, pred), lambda x: x * 3, lambda x: x - 1, (ct.xs,))
            rt = torch.cond(wrap(torch, pred), lambda x: x * 3, lambda x: x - 1, (torch.xs,))
            same(rc, rt)   # (torch names a tensor pred's node CondAutogradOpBackward; here it is the branch's op)
            assert rc.requires_grad
    rc = ct.cond(True, lambda x: x * 3, lambda x: x, [ct.xs])
    rc.sum().backward()
    assert ct.xs.grad.tolist() == [3.0, 3.0]
    assert float(ct.cond(True, lambda: ct.ones(1), lambda: ct.zeros(1))) == 1.0
    raises_like(lambda: ct.cond(ct.tensor([True, False]), lambda x: x, lambda x: x, (ct.xs,)),
                lambda: torch.cond(torch.tensor([True, False]), lambda x: x, lambda x: x, (torch.xs,)))
    del ct.xs, torch.xs
    body = (lambda m: lambda i, x: (i + 1, x * 2))
    rc = ct.while_loop(lambda i, x: i < 3, body(ct), (ct.tensor(0), ct.ones(2)))
    rt = torch.while_loop(lambda i, x: i < 3, body(torch), (torch.tensor(0), torch.ones(2)))
    same(rc, rt)
    assert ct.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)) == (3,)
    same(ct.while_loop(lambda i: i < 3, lambda i: i + 1, (ct.tensor(0),)),
         torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),)))
