"""torch._dynamo without a compiler: cthtorch always runs eagerly (see
cthtorch.compiler), so programs that tune or reset dynamo (config knobs,
reset(), disable, mark_dynamic) run unchanged and nothing is ever being
compiled. What needs a real graph capture (explain, export) raises
NotImplementedError."""
from ..compiler import (allow_in_graph, assume_constant_result, disable, is_compiling,  # noqa: F401
                        list_backends, reset)
from . import config, eval_frame  # noqa: F401
from .eval_frame import OptimizedModule  # noqa: F401


def is_dynamo_supported():
    return False


def is_inductor_supported():
    return False


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None, disable=False,
             dynamic=None):
    """The decorator torch.compile builds on: here it leaves the function to run eagerly."""
    return lambda fn: fn


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    pass


def maybe_mark_dynamic(t, index):
    pass


def mark_static(t, index=None):
    pass


def mark_static_address(t, guard=True):
    pass


def graph_break(msg=""):
    pass


def explain(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("torch._dynamo.explain needs dynamo's graph capture, which cthtorch does not have "
                              "(it always runs eagerly)")


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("torch._dynamo.export needs dynamo's graph capture, which cthtorch does not have; "
                              "cthtorch.fx.symbolic_trace or cthtorch.jit.trace capture a graph")
