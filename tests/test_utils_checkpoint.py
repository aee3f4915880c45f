"""torch.utils.checkpoint's API against torch: keyword arguments and context_fn (use_reentrant=False), their
errors under use_reentrant=True, preserve_rng_state, detach_variable, check_backward_validity, the policy enum,
device states, the debug/early-stop switches."""
import contextlib
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like

torch = oracle.require_torch()


def grads(m, **kw):
    x = m.tensor(np.arange(4.0), requires_grad=True)
    y = m.utils.checkpoint.checkpoint(lambda a, b=1.0: (a * b).sin(), x, **kw)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def test_checkpoint_kwargs_and_errors():
    for kw in (dict(use_reentrant=False, b=2.0), dict(use_reentrant=True), dict(use_reentrant=False,
                                                                                 preserve_rng_state=False)):
        (yc, gc), (yt, gt) = grads(ct, **kw), grads(torch, **kw)
        np.testing.assert_allclose(yc, yt)
        np.testing.assert_allclose(gc, gt)
    for kw in (dict(use_reentrant=True, b=2.0), dict(use_reentrant=True, context_fn=lambda: (None, None)),
               dict(use_reentrant=True, debug=True), dict(use_reentrant=False, determinism_check="x")):
        raises_like(lambda: grads(ct, **kw), lambda: grads(torch, **kw))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grads(ct, b=2.0)   # use_reentrant=None means True


def test_checkpoint_context_fn_runs_forward_and_recompute_contexts():
    seen = []

    @contextlib.contextmanager
    def mark(tag):
        seen.append(tag)
        yield

    x = ct.ones(3, requires_grad=True)
    y = ct.utils.checkpoint.checkpoint(lambda a: a * 2, x, use_reentrant=False,
                                       context_fn=lambda: (mark("forward"), mark("recompute")))
    assert seen == ["forward"]
    y.sum().backward()
    assert seen == ["forward", "recompute"] and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_checkpoint_helpers():
    cu, tu = ct.utils.checkpoint, torch.utils.checkpoint
    x = ct.ones(2, requires_grad=True)
    d = cu.detach_variable((x, 3))
    assert d[0] is not x and d[0].requires_grad and d[0].grad_fn is None and d[1] == 3
    raises_like(lambda: cu.detach_variable([x]), lambda: tu.detach_variable([torch.ones(2)]))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        cu.check_backward_validity((ct.ones(1),))
    assert [(p.name, p.value) for p in cu.CheckpointPolicy] == [(p.name, p.value) for p in tu.CheckpointPolicy]
    assert issubclass(cu.CheckpointError, RuntimeError)
    assert cu.get_device_states(x) == tu.get_device_states(torch.ones(2)) == ([], [])
    assert cu.DefaultDeviceType.get_device_type() == tu.DefaultDeviceType.get_device_type()
    a, b = cu.noop_context_fn()
    with a, b:
        pass
    with cu.set_checkpoint_debug_enabled(True), cu.set_checkpoint_early_stop(False):
        np.testing.assert_allclose(grads(ct, use_reentrant=False)[1], grads(torch, use_reentrant=False)[1])
    with pytest.raises(NotImplementedError, match="selective activation checkpointing"):
        cu.create_selective_checkpoint_contexts([])


def test_reentrant_warns_when_no_input_requires_grad():
    """use_reentrant=True warns, as torch's, when none of the inputs requires grad (even under no_grad); not
    when one does, nor with use_reentrant=False"""
    def run(lib):
        seen = []
        for reentrant, grad_in, mode in ((True, False, True), (True, True, False), (True, True, True),
                                         (False, False, True)):
            x = lib.ones(2, requires_grad=grad_in)
            with warnings.catch_warnings(record=True) as w, lib.set_grad_enabled(mode):
                warnings.simplefilter("always")
                lib.utils.checkpoint.checkpoint(lambda a: a * 2, x, use_reentrant=reentrant)
            seen.append([str(m.message) for m in w])
        return seen
    assert run(ct) == run(torch)


def test_checkpoint_sequential_warns_and_refuses_unknown_keywords_as_torch():
    """without use_reentrant it warns as torch 2.13 does (from the caller's line); preserve_rng_state passes on,
    any other keyword is a ValueError before anything runs"""
    got = []
    for L in (ct, torch):
        seq = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.Tanh(), L.nn.Linear(3, 1))
        x = L.ones(2, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.utils.checkpoint.checkpoint_sequential(seq, 2, x)
        got.append([(str(m.message), m.filename) for m in w])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = L.utils.checkpoint.checkpoint_sequential(seq, 2, x, use_reentrant=False, preserve_rng_state=False)
        assert w == [] and y.shape == (2, 1)
    assert got[0] == got[1] and len(got[0]) == 1 and got[0][0][1] == __file__
    raises_like(lambda: ct.utils.checkpoint.checkpoint_sequential(ct.nn.Sequential(), 1, ct.ones(1), use_reentrant=True,
                                                                  foo=1, bar=2),
                lambda: torch.utils.checkpoint.checkpoint_sequential(torch.nn.Sequential(), 1, torch.ones(1),
                                                                     use_reentrant=True, foo=1, bar=2))
