"""torch.ops: ops by schema name (torch.ops.aten.add.Tensor), the profiler's
record-function ops, and FX tracing through them, against torch."""
import pickle

import numpy as np
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def _same(a, b):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("path,args", [
    ("aten.add.Tensor", lambda L: (L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]))),
    ("aten.add", lambda L: (L.tensor([1, 2]), 5)),
    ("aten.relu.default", lambda L: (L.tensor([-1.0, 2.0]),)),
    ("aten.mm.default", lambda L: (L.ones(2, 3), L.ones(3, 4))),
    ("aten.sum.dim_IntList", lambda L: (L.ones(2, 3), [1])),
    ("aten.linalg_inv.default", lambda L: (L.tensor([[2.0, 0.0], [0.0, 4.0]]),)),
    ("aten.special_expm1.default", lambda L: (L.tensor([0.5]),)),
    ("aten.conv2d.default", lambda L: (L.ones(1, 1, 4, 4), L.ones(1, 1, 3, 3))),
])
def test_aten_ops_compute_as_torch(path, args):
    def resolve(L):
        f = L.ops
        for part in path.split("."):
            f = getattr(f, part)
        return f
    _same(resolve(cthtorch)(*args(cthtorch)), resolve(torch)(*args(torch)))


def test_in_place_op_by_name():
    x, y = cthtorch.ones(3), torch.ones(3)
    assert cthtorch.ops.aten.add_.Tensor(x, x) is x
    torch.ops.aten.add_.Tensor(y, y)
    _same(x, y)


def test_names_and_printing_match_torch():
    pc, pt = cthtorch.ops.aten.add, torch.ops.aten.add
    assert (repr(pc), str(pc), pc.__name__, pc._qualified_op_name) == \
        (repr(pt), str(pt), pt.__name__, pt._qualified_op_name)
    oc, ot = pc.Tensor, pt.Tensor
    assert (repr(oc), str(oc), oc.__name__, oc.name(), oc._overloadname) == \
        (repr(ot), str(ot), ot.__name__, ot.name(), ot._overloadname)
    assert oc.overloadpacket is pc and cthtorch.ops.aten.add is pc
    assert pc.default.name() == pt.default.name() == "aten::add"
    assert repr(cthtorch.ops.profiler._record_function_enter) == repr(torch.ops.profiler._record_function_enter)


def test_unknown_op_is_attribute_error_with_torch_text():
    msgs = []
    for L in (cthtorch, torch):
        with pytest.raises(AttributeError) as e:
            L.ops.aten.no_such_op_here
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_overloads_pickle_by_name():
    o = pickle.loads(pickle.dumps(cthtorch.ops.aten.mul.Tensor))
    assert o.overloadpacket is cthtorch.ops.aten.mul and o._overloadname == "Tensor"
    assert pickle.loads(pickle.dumps(cthtorch.ops.aten.mul)) is cthtorch.ops.aten.mul


def test_record_function_ops_open_a_profiler_range():
    with cthtorch.profiler.profile() as prof:
        h = cthtorch.ops.profiler._record_function_enter("my_range")
        cthtorch.ones(3).relu()
        cthtorch.ops.profiler._record_function_exit(h)
    assert "my_range" in [e.name for e in prof.events()]


def _trace_with_profiler_ops(L):
    """pytorch/examples' fx/profiling_tracer.py: record_function's enter and
    exit become torch.ops.profiler calls in the graph"""
    class ProfilerTracer(L.fx.Tracer):
        def trace(self, root, concrete_args=None):
            rf = L.autograd.profiler.record_function
            orig = rf.__enter__, rf.__exit__
            tracer = self

            def enter(_self):
                _self._fx_profiler_ctx = tracer.create_proxy("call_function",
                                                             L.ops.profiler._record_function_enter,
                                                             (_self.name,), {})
                return _self._fx_profiler_ctx

            def exit_(_self, *exc):
                L.ops.profiler._record_function_exit(_self._fx_profiler_ctx)
            rf.__enter__, rf.__exit__ = enter, exit_
            try:
                return super().trace(root, concrete_args)
            finally:
                rf.__enter__, rf.__exit__ = orig

    class Foo(L.nn.Module):
        def forward(self, x):
            with L.profiler.record_function("foo"):
                return L.relu(x)

    t = ProfilerTracer()
    g = t.trace(Foo())
    return L.fx.GraphModule(t.root, g)


def test_fx_records_profiler_ops_as_torch():
    import torch.fx  # noqa: F401
    import cthtorch.fx  # noqa: F401
    gc, gt = _trace_with_profiler_ops(cthtorch), _trace_with_profiler_ops(torch)
    assert gc.code == gt.code
    _same(gc(cthtorch.tensor([-1.0, 2.0])), gt(torch.tensor([-1.0, 2.0])))
