"""AccumulateGrad takes a first gradient without copying it when nothing
else can see it (as torch does); these check it never aliases a tensor that
something else holds, so later accumulation can't write into it."""
import numpy as np

import cthtorch as ct


def test_grad_shared_by_two_leaves_is_not_aliased():
    a, b = ct.ones(4, requires_grad=True), ct.ones(4, requires_grad=True)
    (a * 3 + b).sum().backward()            # AddBackward hands one tensor to b and to MulBackward
    (a * 3 + b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(4, 6.0, np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 2.0, np.float32))
    c, d = ct.ones(3, requires_grad=True), ct.ones(3, requires_grad=True)
    (c * 2 + d * 2).sum().backward()
    assert c.grad.data_ptr() != d.grad.data_ptr()


def test_grad_kept_by_a_hook_is_not_aliased():
    x = ct.ones(5, requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(5, 4.0, np.float32))
    np.testing.assert_array_equal(kept[0].numpy(), np.full(5, 2.0, np.float32))


def test_user_gradient_and_views_of_one_gradient_are_not_aliased():
    x = ct.ones(6, requires_grad=True)
    g = ct.arange(6.0)
    x.view(2, 3).backward(g.view(2, 3))     # a view of the user's tensor
    x.view(2, 3).backward(g.view(2, 3))
    np.testing.assert_array_equal(g.numpy(), np.arange(6.0, dtype=np.float32))
    p, q = ct.ones(2, requires_grad=True), ct.ones(3, requires_grad=True)
    y = ct.cat([p * 1, q * 1])
    y.backward(ct.arange(5.0))             # CatBackward: views of one gradient
    p.grad.add_(100)
    np.testing.assert_array_equal(q.grad.numpy(), np.array([2.0, 3.0, 4.0], np.float32))


def test_stolen_grad_is_a_plain_tensor_with_its_own_version():
    x = ct.nn.Parameter(ct.ones(3))
    (x * 2).sum().backward()
    assert type(x.grad) is ct.Tensor and not x.grad.requires_grad and x.grad.grad_fn is None
    v = x.grad._version
    x.grad.mul_(2)
    assert x.grad._version == v + 1
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 4.0, np.float32))
