"""What torch.jit.script and torch.jit.trace return: ScriptFunction and
ScriptModule (RecursiveScriptModule for scripted modules, TracedModule /
TopLevelTracedModule for traced ones).

A ScriptModule is a real nn.Module (parameters, buffers and submodules are
ordinary attributes, so state_dict/train/eval/named_parameters work) plus,
per method, a Graph whose first input is `self`; attribute reads are
prim::GetAttr and submodule calls prim::CallMethod, as in torch's graphs.
Methods run through jit/_interpreter.py.
"""
import functools

import cthtorch
from cthtorch import nn
from cthtorch.nn.modules import module as _M

from . import _ir
from ._interpreter import GraphExecutor, ProfilingGraphExecutor
from ._python_printer import PythonPrinter

__all__ = ["ScriptFunction", "ScriptMethod", "ScriptModule", "ScriptClassObject", "RecursiveScriptModule", "TracedModule",
           "TopLevelTracedModule", "class_type_name", "graph_schema"]


def class_type_name(cls):
    """`__torch__.<module>.<Class>` as torch names a module's class type
    (classes of __main__ drop the module; cthtorch's read as torch's)."""
    mod = getattr(cls, "__module__", "__main__") or "__main__"
    if mod.startswith("cthtorch"):
        mod = "torch" + mod[len("cthtorch"):]
    qual = cls.__qualname__.replace(".<locals>.", ".").replace("<locals>", "")
    return "__torch__." + (qual if mod == "__main__" else mod + "." + qual)


def graph_schema(name, graph, self_first=False):
    """`name(Tensor x) -> Tensor` from a graph's inputs and outputs."""
    from ._schema import Argument, FunctionSchema
    ins = graph.inputs()[1:] if self_first else graph.inputs()
    args = [Argument(v.debugNameBase() if v.hasDebugName() else "x%d" % i, v.type(),
                     type_str=v.type().annotation_str) for i, v in enumerate(ins)]
    if self_first:
        s0 = graph.inputs()[0]
        args.insert(0, Argument("self", s0.type(), type_str=s0.type().annotation_str))
    rets = [Argument("", v.type(), type_str=v.type().annotation_str) for v in graph.outputs()]
    return FunctionSchema(name, "", args, rets)


def _code(graph, name, self_first):
    return PythonPrinter().function(graph, name, self_first=self_first)


def _code_with_constants(graph, name, self_first):
    consts = []
    text = PythonPrinter(consts).function(graph, name, self_first=self_first)
    return text, _ConstMap(consts)


class _ConstMap:
    """`code_with_constants[1]`: CONSTANTS.cN by name."""

    def __init__(self, consts):
        self.const_mapping = {"c%d" % i: c for i, c in enumerate(consts)}


class _GraphViews:
    """What a function or a method shows of its graph: schema, code,
    inlined_graph (a method's graph takes its module, `owner`, first)."""

    @property
    def schema(self):
        return graph_schema(self.name, self.graph, self_first=self._is_method)

    @property
    def code(self):
        return _code(self.graph, self.name, self._is_method)

    @property
    def code_with_constants(self):
        return _code_with_constants(self.graph, self.name, self._is_method)

    @property
    def inlined_graph(self):
        from ._passes import inline_calls
        return inline_calls(self.graph, self.owner if self._is_method else None)

    def graph_for(self, *args, **kwargs):
        """The graph the executor runs once optimized (fused groups in place):
        runs the function until it is, as torch's graph_for runs it."""
        self(*args, **kwargs)
        while not self._executor.optimized:
            self(*args, **kwargs)
        return self._executor.graph


class ScriptFunction(_GraphViews):
    """A compiled free function: `.graph`, `.code`, `.schema`, callable."""
    _is_method = False

    def __init__(self, graph, name, qualified_name=None, original_fn=None):
        self.graph = graph
        self.name = name
        self.qualified_name = qualified_name or "__torch__." + name
        self._original = original_fn
        self._executor = None
        if original_fn is not None:
            self.__doc__ = getattr(original_fn, "__doc__", None)
            self.__name__ = getattr(original_fn, "__name__", name)
            self.__qualname__ = getattr(original_fn, "__qualname__", name)
        else:
            self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind_kwargs(args, kwargs)
        if self._executor is None:
            self._executor = ProfilingGraphExecutor(self.graph)
        return self._executor(*args)

    def _bind_kwargs(self, args, kwargs):
        names = [a.name for a in self.schema.arguments]
        args = list(args)
        for nm in names[len(args):]:
            if nm not in kwargs:
                raise RuntimeError("%s() is missing value for argument '%s'." % (self.name, nm))
            args.append(kwargs.pop(nm))
        if kwargs:
            raise RuntimeError("%s() got an unexpected keyword argument '%s'." % (self.name, next(iter(kwargs))))
        return args

    def get_debug_state(self):
        return None

    def _reset_executor(self):
        self._executor = None

    def save(self, f, _extra_files=None):
        from . import save
        return save(self, f, _extra_files=_extra_files)

    def __repr__(self):
        return "<torch.jit.ScriptFunction object at 0x%x>" % id(self)


class ScriptMethod(_GraphViews):
    """One method of a ScriptModule: its graph takes the module first."""
    _is_method = True

    def __init__(self, owner, name, graph):
        self.owner = owner
        self.name = name
        self.graph = graph
        self._executor = None

    def __call__(self, *args, **kwargs):
        if kwargs:
            names = [a.name for a in self.schema.arguments[1:]]
            args = list(args)
            for nm in names[len(args):]:
                if nm in kwargs:
                    args.append(kwargs.pop(nm))
            if kwargs:
                raise RuntimeError("%s() got an unexpected keyword argument '%s'." % (self.name, next(iter(kwargs))))
        if self._executor is None:
            self._executor = ProfilingGraphExecutor(self.graph, self.owner)
        return self._executor(self.owner, *args)

    def _reset_executor(self):
        self._executor = None


class ScriptClassObject:
    """An object of a scripted class made by TorchScript code (prim::CreateObject): attributes in its
    __dict__, methods run as their graphs."""

    @classmethod
    def make(cls, script_class):   # not __init__: prim::CallMethod[name="__init__"] must find the script's
        o = object.__new__(cls)
        object.__setattr__(o, "_script_class", script_class)
        return o

    def __getattribute__(self, name):
        if name == "__init__":
            return ScriptClassObject.__getattr__(self, name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        cf = self.__dict__["_script_class"].methods.get(name) if "_script_class" in self.__dict__ else None
        if cf is None:
            raise AttributeError("'%s' object has no attribute '%s'"
                                 % (self.__dict__.get("_script_class").class_type.qualified_name(), name))
        ex = cf.__dict__.get("_executor")
        if ex is None:
            ex = cf._executor = GraphExecutor(cf.graph)
        return lambda *args: ex(self, *args)

    def _qualified_name(self):
        return self._script_class.class_type.qualified_name()

    def __repr__(self):
        return "<torch.ScriptObject object at 0x%x>" % id(self)


class ScriptModule(nn.Module):
    """A module whose methods are graphs. Subclasses say how it was made."""

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_methods", {})
        object.__setattr__(self, "_type", None)
        object.__setattr__(self, "original_name", type(self).__name__)

    def __init_subclass__(cls, **kwargs):
        # the legacy API (torch's ScriptMeta): a subclass's @torch.jit.script_method methods leave the class
        # (calls find the compiled ones in _methods) and compile when the most derived __init__ returns
        super().__init_subclass__(**kwargs)
        own = {k: v for k, v in vars(cls).items() if getattr(v, "_cthtorch_script_method", False)}
        stubs = {}
        for base in reversed(cls.__mro__[1:]):
            stubs.update(vars(base).get("_script_method_stubs", {}))
        if not own and not stubs:
            return
        for k in own:
            delattr(cls, k)
        stubs.update(own)
        cls._script_method_stubs = stubs
        original_init = cls.__init__

        @functools.wraps(original_init)
        def init_then_script(self, *args, **kw):
            original_init(self, *args, **kw)
            if type(self) is cls:
                from ._recursive import compile_script_methods
                compile_script_methods(self)

        cls.__init__ = init_then_script

    # -- methods
    def _define_method(self, name, graph):
        m = ScriptMethod(self, name, graph)
        self._methods[name] = m
        return m

    def _has_method(self, name):
        return name in self._methods

    def _get_method(self, name):
        return self._methods[name]

    def _method_names(self):
        return list(self._methods)

    def __getattr__(self, name):
        methods = self.__dict__.get("_methods")
        if methods is not None and name in methods:
            return methods[name]
        return super().__getattr__(name)

    def __call__(self, *args, **kwargs):
        # no hooks anywhere: straight to the graph (nn.Module's hook loops cost
        # more than a small frozen model's ops)
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d.get("_backward_hooks") or
                d.get("_backward_pre_hooks") or _M._global_forward_pre_hooks or _M._global_forward_hooks or
                _M._global_backward_hooks or _M._global_backward_pre_hooks):
            m = self._overload_for(args) if d.get("_forward_overloads") else self._methods.get("forward")
            if m is not None:
                return m(*args, **kwargs)
        return nn.Module.__call__(self, *args, **kwargs)

    def _overload_for(self, args):
        """Of forward's overloads (a recurrent layer's forward and forward__1), the one whose first
        argument's type fits args[0]: a NamedTuple (PackedSequence) by class, anything else by forward."""
        first = args[0] if args else None
        for name in self.__dict__["_forward_overloads"]:
            m = self._methods[name]
            t = m.graph.inputs()[1].type() if len(m.graph.inputs()) > 1 else None
            cls = getattr(t, "py_class", None)
            if isinstance(first, cls) if cls is not None else not hasattr(first, "_fields"):
                return m
        return self._methods.get("forward")

    # -- a scripted/traced Sequential, ModuleList or ModuleDict indexes like one
    def _container(self):
        if not self.__dict__.get("_is_container"):
            raise TypeError("'%s' object is not subscriptable" % type(self).__name__)
        return list(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, str):
            self._container()
            return self._modules[idx]
        return self._container()[idx]

    def __len__(self):
        return len(self._container())

    def __iter__(self):
        return iter(self._container())

    def __bool__(self):
        return True

    def forward(self, *args, **kwargs):
        m = self._overload_for(args) if self.__dict__.get("_forward_overloads") else self._methods.get("forward")
        if m is None:
            raise RuntimeError("Method 'forward' is not defined on %s: it was not called while tracing "
                               "(or not exported when scripting)" % self.original_name)
        return m(*args, **kwargs)

    # -- views of forward
    def _forward_method(self):
        m = self._methods.get("forward")
        if m is None:
            raise AttributeError("'%s' has no method 'forward'" % type(self).__name__)
        return m

    @property
    def graph(self):
        return self._forward_method().graph

    @property
    def inlined_graph(self):
        return self._forward_method().inlined_graph

    @property
    def code(self):
        return self._forward_method().code

    @property
    def code_with_constants(self):
        return self._forward_method().code_with_constants

    @property
    def _c(self):
        return self

    def _class_type(self):
        return self._type

    def save(self, f, _extra_files=None):
        from . import save
        return save(self, f, _extra_files=_extra_files)

    def extra_repr(self):
        return "original_name=%s" % self.original_name

    def _replicate_for_data_parallel(self):
        raise NotImplementedError("DataParallel replication of a ScriptModule is not supported")


class RecursiveScriptModule(ScriptModule):
    """A scripted nn.Module (built by jit/_recursive.py)."""

    def _construct_from(self, mod, type_name=None):
        _copy_module_state(self, mod, type(self))
        object.__setattr__(self, "original_name", type(mod).__name__)
        object.__setattr__(self, "_type", _ir.ClassType(type_name or class_type_name(type(mod))))
        return self


class TracedModule(ScriptModule):
    """A traced nn.Module: its parameters and buffers are the original's
    tensors (as torch.jit.trace shares them), its submodules TracedModules."""

    def __init__(self, orig=None, type_name=None):
        super().__init__()
        if orig is not None:
            _copy_module_state(self, orig, TracedModule)
            object.__setattr__(self, "original_name", type(orig).__name__)
            object.__setattr__(self, "_type", _ir.ClassType(type_name or class_type_name(type(orig))))

    def __repr__(self):
        return nn.Module.__repr__(self)


class TopLevelTracedModule(TracedModule):
    pass


def _copy_module_state(dst, src, sub_cls):
    """Parameters, buffers (the same tensors), training flag, constants and
    plain attributes of src onto dst; submodules become sub_cls instances."""
    dst.training = src.training
    object.__setattr__(dst, "_is_container", isinstance(src, (nn.Sequential, nn.ModuleList, nn.ModuleDict)))
    for name, p in src._parameters.items():
        dst._parameters[name] = p
    for name, b in src._buffers.items():
        dst._buffers[name] = b
    nonpersistent = getattr(src, "_non_persistent_buffers_set", None)
    if nonpersistent is not None and hasattr(dst, "_non_persistent_buffers_set"):
        dst._non_persistent_buffers_set.update(nonpersistent)
    for name, m in src._modules.items():
        if m is None:
            dst._modules[name] = None
        elif isinstance(m, ScriptModule):
            dst._modules[name] = m
        else:
            dst._modules[name] = sub_cls(m) if sub_cls is TracedModule else sub_cls()._construct_from(m)
    for k, v in src.__dict__.items():
        # private names too (Conv's _reversed_padding_repeated_twice is read by its forward);
        # the Module machinery's own private state is already in dst.__dict__
        if k == "training" or k in dst.__dict__:
            continue
        # lists of tensors too (an RNN's _flat_weights: the same Parameters, as torch's attribute holds)
        plain_list = isinstance(v, list) and (all(isinstance(x, (int, float, bool, str)) for x in v) or
                                              (v and all(isinstance(x, cthtorch.Tensor) for x in v)))
        if isinstance(v, (int, float, bool, str, tuple, type(None))) or isinstance(v, cthtorch.dtype) or plain_list:
            object.__setattr__(dst, k, list(v) if plain_list else v)
