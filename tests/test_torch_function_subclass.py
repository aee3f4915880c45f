"""Tensor subclasses and __torch_function__ (torch's "Extending torch with a Tensor subclass"): results keep
the subclass, overrides see every op (functions, methods, operators, indexing) with torch's func and types,
nn.Parameter opts out, DisableTorchFunctionSubclass turns the hand-over off. Compared with torch 2.13."""
import pytest

import cthtorch
from oracle import require_torch


def _run(lib):
    class Logged(lib.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    class Plain(lib.Tensor):
        pass

    out = {}
    x = lib.arange(6.).reshape(2, 3).as_subclass(Logged)
    y = x + 1
    z = lib.relu(y - 2).sum(0)
    w = x[0] * 2
    m = x.max(1)
    c = lib.cat([x, x])
    x2 = x.clone()
    x2[0] = 5
    x2 += 1
    neg = -x
    eq = x == 3
    r = 10 - x
    out["types"] = [type(t).__name__ for t in (y, z, w, m.values, m.indices, c, x2, neg, eq, r)]
    out["values"] = [t.tolist() for t in (y, z, w, m.values, c, x2, neg, eq, r)]
    out["calls"] = list(Logged.calls)
    p = Plain(lib.ones(2)) if False else lib.ones(2).as_subclass(Plain)
    out["plain"] = [type(p * 2).__name__, type(p.sum()).__name__, type(lib.exp(p)).__name__,
                    repr(p + 1)]
    prm = lib.nn.Parameter(lib.ones(2))
    out["param"] = [type(prm * 2).__name__, type(prm.detach()).__name__, type(lib.tanh(prm)).__name__]
    with lib._C.DisableTorchFunctionSubclass():
        out["disabled"] = type(p + 1).__name__
    out["enabled"] = lib._C._is_torch_function_enabled()
    return out


def test_subclass_results_and_calls_match_torch():
    torch = require_torch()
    assert _run(cthtorch) == _run(torch)


def test_subclass_keeps_autograd():
    class S(cthtorch.Tensor):
        pass
    x = cthtorch.randn(3, requires_grad=True)
    s = x.as_subclass(S)
    y = (s * s).sum()
    assert type(y) is S
    y.backward()
    assert cthtorch.allclose(x.grad, 2 * x.detach())


def test_override_can_replace_the_result():
    class Const(cthtorch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is cthtorch.add:
                return "added"
            return super().__torch_function__(func, types, args, kwargs)
    c = cthtorch.zeros(2).as_subclass(Const)
    assert cthtorch.add(c, 1) == "added"
    assert type(cthtorch.mul(c, 2)) is Const


def test_disabled_impl_runs_func_plainly():
    class S(cthtorch.Tensor):
        pass
    s = cthtorch.ones(2).as_subclass(S)
    r = cthtorch._C._disabled_torch_function_impl(cthtorch.add, (S,), (s, 1), {})
    assert type(r) is cthtorch.Tensor and r.tolist() == [2.0, 2.0]


def _modes(lib):
    seen = []

    class Recording(lib.overrides.TorchFunctionMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((self.tag, func.__name__, [t.__name__ for t in types]))
            return func(*args, **(kwargs or {}))

    class Sub(lib.Tensor):
        pass

    class Twice(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            r = func(*args, **(kwargs or {}))
            return r * 2 if func is lib.add else r

    with Recording("outer"):
        with Recording("inner"):
            x = lib.ones(2)
            y = x + 1
            z = lib.relu(y).sum()
        s = lib.zeros(2).as_subclass(Sub)
        w = s * 3
    with Twice():
        doubled = lib.add(lib.ones(2), 1)
    with lib._C.DisableTorchFunction():
        with Recording("off"):
            lib.ones(1)
    return seen, z.item(), type(w).__name__, doubled.tolist(), lib._C._len_torch_function_stack()


def test_torch_function_modes_match_torch():
    torch = require_torch()
    assert _modes(cthtorch) == _modes(torch)


def test_mode_stack_is_restored_after_an_error():
    class Boom(cthtorch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        with Boom():
            cthtorch.ones(2)
    assert cthtorch._C._len_torch_function_stack() == 0
    assert cthtorch.ones(2).tolist() == [1.0, 1.0]


def test_the_library_itself_does_not_arm_the_hand_over():
    # training pays nothing until a user defines a subclass: nn.Parameter (and the lazy ones) opt out
    import subprocess
    import sys
    code = ("import cthtorch, cthtorch.nn, cthtorch.optim, cthtorch.vision, cthtorch.utils.data, cthtorch.fx\n"
            "m = cthtorch.nn.LazyLinear(3); m(cthtorch.ones(2, 4))\n"
            "print(cthtorch._C._tf_is_armed())\n"
            "class S(cthtorch.Tensor): pass\n"
            "print(cthtorch._C._tf_is_armed())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def _logging_tensor_doc_example(lib):
    # the LoggingTensor of torch's "Extending torch" notes: logging the args reprs the subclass, whose
    # own ops must not recurse back into the override
    lines = []

    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is not lib.Tensor.__repr__:
                lines.append(f"func: {func.__name__}, args: {args!r}, kwargs: {kwargs!r}")
            if kwargs is None:
                kwargs = {}
            return super().__torch_function__(func, types, args, kwargs)

    t = lib.tensor([1., 2.]).as_subclass(LoggingTensor)
    lines.append(repr(t * 2))
    lines.append(repr(t.sum()))
    lines.append(repr(lib.nn.functional.relu(t)))
    lines.append(repr(1 - t))
    return lines


def test_logging_tensor_example_matches_torch():
    torch = require_torch()
    assert _logging_tensor_doc_example(cthtorch) == _logging_tensor_doc_example(torch)


class _TaggedOurs(cthtorch.Tensor):
    pass


def _tagged_theirs(torch):
    """a torch.Tensor subclass that pickle finds by name in this module (made only where torch is installed)"""
    if "_TaggedTheirs" not in globals():
        globals()["_TaggedTheirs"] = type("_TaggedTheirs", (torch.Tensor,), {"__module__": __name__})
    return globals()["_TaggedTheirs"]


def _save_load_round_trip(lib, cls):
    import io
    s = lib.arange(4.).as_subclass(cls)
    s.tag = "hello"
    plain = lib.ones(2)
    plain.note = 3
    buf = io.BytesIO()
    lib.save({"s": s, "plain": plain, "view": s[1:], "bare": lib.zeros(1)}, buf)
    buf.seek(0)
    out = lib.load(buf, weights_only=False)
    return [(k, type(v).__name__.replace("Ours", "").replace("Theirs", ""), getattr(v, "tag", None),
             getattr(v, "note", None), v.tolist()) for k, v in out.items()]


def test_save_load_keeps_the_subclass_and_its_attributes_as_torch():
    """torch.save records a subclass instance (or a tensor with attributes) through _rebuild_from_type_v2: the
    type and the __dict__ come back (cthtorch's came back a plain tensor without them)"""
    torch = require_torch()
    ours = _save_load_round_trip(cthtorch, _TaggedOurs)
    assert ours == _save_load_round_trip(torch, _tagged_theirs(torch))
    assert ours[0][1:3] == ("_Tagged", "hello")


def _logged(lib, seen):
    """a subclass whose __torch_function__ records each func's name in seen and runs the default"""
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    return Logged


def _autograd_calls(lib):
    seen = []
    Logged = _logged(lib, seen)

    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append("mode " + func.__name__)
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, requires_grad=True)
    s = x.as_subclass(Logged)
    y = (s * s).sum()
    del seen[:]
    g = lib.autograd.grad(y, s, retain_graph=True)
    y.backward()
    out = [list(seen), type(g).__name__, [type(t).__name__ for t in g], type(x.grad).__name__, x.grad.tolist()]
    z = lib.ones(2, requires_grad=True)
    del seen[:]
    with Recording():
        (z * 2).sum().backward()
        gz = lib.autograd.grad((z * 3).sum(), [z])
    return out + [list(seen), z.grad.tolist(), gz[0].tolist()]


def test_autograd_grad_and_backward_are_handed_to_subclasses_and_modes_as_torch():
    """torch.autograd.grad/backward hand their call to a subclass's __torch_function__ or a mode (grad's results
    then are the subclass, as torch's; they were plain tensors and the calls unseen)"""
    torch = require_torch()
    assert _autograd_calls(cthtorch) == _autograd_calls(torch)


def _data_of_subclasses(lib):
    seen = []
    Logged = _logged(lib, seen)

    class Plain(lib.Tensor):
        pass

    class MyParam(lib.nn.Parameter):
        pass
    x = lib.ones(2).as_subclass(Logged)
    d = x.data
    return [list(seen), type(d).__name__, type(lib.ones(1).as_subclass(Plain).data).__name__,
            type(lib.nn.Parameter(lib.ones(1)).data).__name__, type(MyParam(lib.ones(1)).data).__name__]


def test_data_of_a_subclass_goes_through_its_torch_function_as_torch():
    """.data hands Tensor.data.__get__ to the subclass's __torch_function__, whose default keeps the subclass
    (it was a plain tensor); Parameters, which opt out, give plain tensors"""
    torch = require_torch()
    assert _data_of_subclasses(cthtorch) == _data_of_subclasses(torch)


def _size_queries(lib):
    """what a subclass and a mode see of the size/metadata queries: torch hands the methods over by name,
    len() as Tensor.__len__ with kwargs {}, and the properties as their __get__"""
    seen = []
    Logged = _logged(lib, seen)
    s = lib.ones(2, 3).as_subclass(Logged)
    del seen[:]
    values = [s.dim(), tuple(s.size()), s.size(1), len(s), tuple(s.shape), s.numel(), s.stride(), s.ndim,
              str(s.dtype), str(s.device), s.requires_grad, s.is_leaf, s.grad, s.grad_fn, s.data_ptr() != 0]
    out = [values, list(seen), type(s.shape).__name__]
    log = []

    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((func.__name__, kwargs))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, 3)
    with Recording():
        x.dim(), x.size(), len(x), x.shape, x.numel(), x.dtype, x.grad, x.data_ptr()
    return out + [log]


def test_size_and_metadata_queries_are_handed_over_as_torch():
    torch = require_torch()
    assert _size_queries(cthtorch) == _size_queries(torch)


def _functional_calls(lib):
    """a mode's log of common nn.functional calls on plain tensors: the library's own size queries inside
    them stay unseen, as torch's C++ ones are"""
    log = []

    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return func(*args, **(kwargs or {}))

    F = lib.nn.functional
    x, w, t, img = lib.ones(2, 3), lib.ones(4, 3), lib.tensor([0, 1]), lib.ones(1, 1, 4, 4)
    k = lib.ones(1, 1, 2, 2)
    out = []
    with Recording():
        for f in (lambda: F.linear(x, w), lambda: F.relu(x), lambda: F.softmax(x, dim=1),
                  lambda: F.cross_entropy(x, t), lambda: F.conv2d(img, k), lambda: F.max_pool2d(img, 2),
                  lambda: F.layer_norm(x, (3,)), lambda: F.mse_loss(x, x), lambda: F.dropout(x, 0.5, False),
                  lambda: lib.flatten(img, 1)):
            del log[:]
            f()
            out.append(list(log))
    return out


def test_functional_calls_do_not_show_internal_size_queries():
    torch = require_torch()
    assert _functional_calls(cthtorch) == _functional_calls(torch)


def _format_and_deepcopy(lib):
    import copy

    class Plain(lib.Tensor):
        pass

    class Off(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

    class KeepsType(lib.Tensor):
        def new_empty(self, *args, **kwargs):
            return super().new_empty(*args, **kwargs).as_subclass(KeepsType)

    def outcome(f):
        try:
            r = f()
            return "ok", (type(r).__name__, r.tolist()) if isinstance(r, lib.Tensor) else r
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, str(e)
    calls = [lambda: "{:.2f}".format(lib.tensor(1.5).as_subclass(Plain)),
             lambda: "{:.2f}".format(lib.tensor(1.5).as_subclass(Off)),
             lambda: "{:.2f}".format(lib.tensor(1.5, requires_grad=True)),
             lambda: "{:.2f}".format(lib.ones(2)),
             lambda: format(lib.tensor(7), "03d")]
    calls += [(lambda c: lambda: copy.deepcopy(lib.ones(2).as_subclass(c)))(c) for c in (Plain, Off, KeepsType)]
    calls += [lambda: copy.deepcopy(lib.nn.Parameter(lib.ones(2)))]
    return [outcome(f) for f in calls]


def test_format_and_deepcopy_of_subclasses_match_torch():
    """a 0-d subclass formats as an object (torch raises for a numeric spec); deepcopy of a non-wrapper subclass
    needs a new_empty that keeps the subclass, else torch's RuntimeError"""
    torch = require_torch()
    ours = _format_and_deepcopy(cthtorch)
    assert ours == _format_and_deepcopy(torch)
    assert ours[0][0] == "TypeError" and ours[5][0] == "RuntimeError" and ours[7][0] == "ok"


def _kwargs_handed_over(lib):
    """kwargs a mode's handler gets: None from a call without keywords to what torch writes in C (factories,
    linear, matmul, methods), the dict where keywords were given, {} from torch's Python functions"""
    log = []

    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((func.__name__, None if kwargs is None else {k: str(v) for k, v in kwargs.items()}))
            return func(*args, **(kwargs or {}))

    x, w = lib.ones(2, 3), lib.ones(4, 3)
    F = lib.nn.functional    # imported before the mode: its import makes tensors
    with Recording():
        F.linear(x, w)
        lib.zeros(2, dtype=lib.float64)
        lib.matmul(x, w.t())
        lib.arange(3)
        lib.einsum("ij->j", x)
        len(x)
    return log


def test_kwargs_of_bindings_are_none_as_torch():
    torch = require_torch()
    assert _kwargs_handed_over(cthtorch) == _kwargs_handed_over(torch)
