"""The one dispatch point (src/python/Dispatch.h, cthtorch/_ops): every op
call, generated binding or registered composite, reaches one observer, and
the op registry refuses a name claimed twice."""
import json

import pytest

import cthtorch as ct
from cthtorch import _ops
from cthtorch._ops import dispatch
from oracle import require_torch


class Recorder:
    def __init__(self):
        self.calls = []
        self.depth = 0

    def enter(self, name):
        self.depth += 1
        return (name, self.depth)

    def exit(self, tok, name, schema, args, kwargs, result):
        assert tok[0] == name
        self.depth -= 1
        self.calls.append((tok[1], name, schema, args, kwargs, result))


def names(rec, depth=None):
    return [c[1] for c in rec.calls if depth is None or c[0] == depth]


def test_declared_ops_report_name_schema_inputs_and_result():
    x = ct.ones(2, 3)
    with dispatch.observing(Recorder()) as rec:
        y = x + 2
        z = x.sum(1, keepdim=True)
    assert names(rec) == ["aten::add", "aten::sum"]
    _, name, schema, args, kwargs, result = rec.calls[0]
    assert schema.startswith("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)")
    assert args[0] is x and args[1].item() == 2 and args[2] == 1 and kwargs is None
    assert result is y
    assert rec.calls[1][3][1:] == ((1,), True, None) and rec.calls[1][5] is z


def test_every_entry_path_reaches_the_dispatch_point():
    x = ct.arange(6.0).reshape(2, 3)
    with dispatch.observing(Recorder()) as rec:
        x[0]                    # indexing: aten::select
        x * x                   # an operator slot
        x.add_(1)               # in-place: aten::add_
        ct.zeros(2)             # a hand-written factory
        ct.matmul(x, x.t())     # a registered composite, which calls declared ops
    top = names(rec, depth=1)
    assert top == ["aten::select", "aten::mul", "aten::add_", "aten::zeros", "aten::t", "aten::matmul"]
    assert "aten::mm" in names(rec, depth=2)


def test_observer_does_not_change_results_or_errors():
    a, b = ct.randn(3, 4), ct.randn(4, 5)
    want = a @ b
    with dispatch.observing(Recorder()) as rec:
        got = a @ b
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            ct.mm(a, a)
    assert ct.equal(got, want)
    failed = [c for c in rec.calls if c[1] == "aten::mm" and c[5] is None]
    assert len(failed) == 1      # the failing call was reported, with no result


def test_an_observer_that_raises_surfaces_its_error():
    class Bad(Recorder):
        def exit(self, *a):
            raise ValueError("observer broke")
    with dispatch.observing(Bad()):
        with pytest.raises(ValueError, match="observer broke"):
            ct.ones(2) + 1
    assert ct.equal(ct.ones(2) + 1, ct.full((2,), 2.0))   # and nothing is left installed


def test_an_observer_without_enter_and_exit_is_refused_when_set():
    # it used to be accepted, and then every op raised AttributeError
    class OnlyEnter:
        def enter(self, name):
            return None
    class ExitNotCallable(OnlyEnter):
        exit = 3
    for bad in (object(), 3, OnlyEnter(), ExitNotCallable()):
        with pytest.raises(TypeError, match="enter and exit"):
            ct._C._set_dispatch_observer(bad)
        with pytest.raises(TypeError, match="enter and exit"):
            dispatch.add_observer(bad)
        assert ct._C._get_dispatch_observer() is None
    assert ct.equal(ct.ones(2) + 1, ct.full((2,), 2.0))
    ct._C._set_dispatch_observer(None)


def test_ops_run_by_the_observer_are_not_observed():
    class Busy(Recorder):
        def exit(self, tok, name, schema, args, kwargs, result):
            ct.ones(1) * 3      # would recurse if observed
            super().exit(tok, name, schema, args, kwargs, result)
    with dispatch.observing(Busy()) as rec:
        ct.ones(2).neg()
    assert names(rec) == ["aten::ones", "aten::neg"]


def test_two_observers_both_see_each_call():
    with dispatch.observing(Recorder()) as r1, dispatch.observing(Recorder()) as r2:
        ct.ones(2).exp()
    assert names(r1) == names(r2) == ["aten::ones", "aten::exp"]
    assert ct._C._get_dispatch_observer() is None


def test_registered_composites_bind_as_methods_and_keep_their_signature():
    import inspect
    m = ct.Tensor.matmul
    assert isinstance(m, ct._C._Op) and m._op_name == "aten::matmul"
    assert list(inspect.signature(m).parameters)[:2] == ["input", "other"]
    x = ct.eye(2)
    assert ct.equal(x.matmul(x), x)
    assert m.__name__ == "matmul" and m.__wrapped__.__module__ == "cthtorch._ops.blas"


def test_registry_refuses_duplicates():
    with pytest.raises(RuntimeError, match="registered twice"):
        _ops.op("Tensor", "matmul", lambda a, b: a, "test")
    with pytest.raises(RuntimeError, match="already a generated binding"):
        _ops.op("torch", "add", lambda a, b: a, "test")
    with pytest.raises(RuntimeError, match="does not exist"):
        _ops.extend("torch", "no_such_op_anywhere", lambda a: a, "test")
    assert not hasattr(ct, "no_such_op_anywhere")


def test_extended_bindings_are_listed_and_still_reach_the_binding():
    ext = _ops.extended()
    assert ("torch", "where") in ext
    c = ct.tensor([True, False, True])
    assert [t.tolist() for t in ct.where(c)] == [[0, 2]]
    assert ct.where(c, ct.ones(3), ct.zeros(3)).tolist() == [1.0, 0.0, 1.0]


def test_profiler_names_ops_as_torch_does(tmp_path):
    torch = require_torch()
    want = {"aten::randn", "aten::matmul", "aten::mm", "aten::relu", "aten::sum", "aten::cat", "aten::select"}
    seen = {}
    for lib in (torch, ct):
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            with lib.autograd.profiler.record_function("outer"):
                a = lib.randn(5, 5, requires_grad=True)
                y = (a @ lib.randn(5, 5)).relu().sum()
                lib.cat([a, a])
                a[0]
            y.backward()
        seen[lib] = {e.key for e in prof.key_averages()}
    assert want <= seen[torch] and want <= seen[ct]
    evs = {e.name: e for e in prof.function_events}
    assert evs["aten::matmul"].input_shapes == [[5, 5], [5, 5]]
    assert evs["aten::matmul"].cpu_parent.name == "outer"
    assert any(c.name == "aten::mm" for c in evs["aten::matmul"].cpu_children)
