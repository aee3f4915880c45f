"""torch.jit.save / torch.jit.load: TorchScript archives, PyTorch's zip layout.

    <root>/data.pkl          the module object tree: `__torch__.<qualname>` objects (protocol 2,
                             NEWOBJ + BUILD with a dict of attributes), tensors as persistent ids
    <root>/data/<key>        one record per storage (shared with torch.save's layout)
    <root>/constants.pkl     the tuple of code constants (`CONSTANTS.c0`), tensors in constants/<key>
    <root>/code/__torch__/<module path>.py   TorchScript source of each class and function
    <root>/version, <root>/byteorder, <root>/.data/serialization_id, <root>/extra/<name>

Loading never unpickles Python objects: `__torch__.*` globals become script
objects (RecursiveScriptModule for `class X(Module)`), and everything else
must be a tensor record, a container or a primitive. Every method of the
archive's code/ compiles with the script frontend into graphs that the
interpreter runs; code that does not compile fails the load, as in PyTorch.
Archives written by PyTorch load here, and archives written here load in
PyTorch.
"""
import collections
import io
import os
import pickle
import random
import re
import sys
import textwrap
import types
import zipfile

import cthtorch
from cthtorch import serialization as _ser
from cthtorch.nn import Module, Parameter
from cthtorch.jit import _archive_classes as _code
from cthtorch.jit import _ir
from cthtorch.jit import _module as _jm
from cthtorch.jit._script import _with_defaults

_ARCHIVE_VERSION = "3\n"


class _PickledObject:
    """A `__torch__.X` object as data.pkl records it, before the loader turns it into a script object."""
    _qualified_name = None

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise NotImplementedError("cthtorch.jit.load: %s has a custom __setstate__ state; objects with "
                                      "__getstate__/__setstate__ are not implemented" % self._qualified_name)
        self.__dict__["_state"] = state


def _build_list(xs):
    return list(xs)


def _restore_type_tag(value, type_str):
    return value


_JIT_PICKLE = {"build_intlist": _build_list, "build_tensorlist": _build_list, "build_doublelist": _build_list,
               "build_boollist": _build_list, "build_tensor_from_id": None, "restore_type_tag": _restore_type_tag}


class _ArchiveUnpickler(_ser._Unpickler):
    """data.pkl / constants.pkl: tensors, containers, primitives, and `__torch__` objects (as _PickledObject)."""

    def __init__(self, data, zf, root, records, map_location):
        super().__init__(io.BytesIO(data), zf, root, True, map_location)
        self.records = "%s/%s" % (root, records)
        self._classes = {}

    def find_class(self, module, name):
        if module == "__torch__" or module.startswith("__torch__."):
            qual = "%s.%s" % (module, name)
            cls = self._classes.get(qual)
            if cls is None:
                cls = self._classes[qual] = type(name, (_PickledObject,), {"_qualified_name": qual})
            return cls
        if module == "torch.jit._pickle" and _JIT_PICKLE.get(name) is not None:
            return _JIT_PICKLE[name]
        if module == "torch" and name == "device":
            return cthtorch.device
        try:
            return super().find_class(module, name)
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError("a TorchScript archive may only hold TorchScript types; %s.%s is not one"
                                         % (module, name)) from e


class _LoadedMethod(_with_defaults(_jm.ScriptMethod)):
    """A method compiled from an archive's code/: the defaults its code declares fill missing arguments,
    and an exception its code raises comes out as torch.jit.Error with TorchScript's text, as torch's
    loaded modules raise it."""

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except Exception as e:
            cls = getattr(e, "_script_class", None)
            if cls is None:
                raise
            raise cthtorch.jit.Error("The following operation failed in the TorchScript interpreter.\n"
                                     "Traceback of TorchScript (most recent call last):\n"
                                     '  File "code/%s.py", in %s\n%s: %s\n'
                                     % (self.owner._qualified_name.rpartition(".")[0].replace(".", "/"),
                                        self.name, cls, e)) from None


class ScriptObject:
    """An object of a TorchScript class (`class X(object)` in code/) loaded from an archive; its methods
    are graphs compiled from that code."""

    def __init__(self, cdef):
        self.__dict__["_c_def"] = cdef
        self.__dict__["_methods"] = {}

    @property
    def _qualified_name(self):
        return self._c_def.qualname

    def _script_attr(self, name):
        return getattr(self, name)

    def _script_setattr(self, name, value):
        self.__dict__[name] = value

    def _define_method(self, name, graph, defaults=None):
        self._methods[name] = _LoadedMethod(self, name, graph)
        self._methods[name]._defaults = defaults or {}

    def __getattr__(self, name):
        methods = self.__dict__.get("_methods")
        if methods is not None and name in methods:
            return methods[name]
        cdef = self.__dict__.get("_c_def")
        raise AttributeError("'%s' object has no attribute '%s'" % (cdef.qualname if cdef else "ScriptObject", name))


class RecursiveScriptModule(_jm.RecursiveScriptModule):
    """A TorchScript module loaded from an archive: parameters, buffers and submodules as an nn.Module's
    (state_dict, train/eval, named_parameters work), methods run from the archive's code/."""

    def __init__(self, cdef):
        _jm.RecursiveScriptModule.__init__(self)
        object.__setattr__(self, "original_name", cdef.name)
        object.__setattr__(self, "_type", _ir.ClassType(cdef.qualname))
        self.__dict__["_c_def"] = cdef
        self.__dict__["_attr_order"] = []

    def forward(self, *args, **kwargs):
        m = self._methods.get("forward")
        if m is None:   # e.g. a scripted nn.LSTM: only its overloads forward__0/forward__1 are methods
            raise AttributeError("'RecursiveScriptModule' object has no attribute 'forward'")
        return m(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return _jm.ScriptModule.__getattr__(self, name)
        except AttributeError:
            cdef = self.__dict__.get("_c_def")
            if cdef is not None and name in cdef.constants:
                return cdef.constants[name]
            raise

    @property
    def _qualified_name(self):
        return self._c_def.qualname

    def _define_method(self, name, graph, defaults=None):
        self._methods[name] = _LoadedMethod(self, name, graph)
        self._methods[name]._defaults = defaults or {}
        return self._methods[name]

    @property
    def code(self):
        """forward's TorchScript source as the archive holds it (torch prints the same text from its graph)."""
        return self._c_def.method_source("forward")

    @property
    def graph(self):
        m = self._methods.get("forward")
        if m is None:
            raise AttributeError("'RecursiveScriptModule' object has no attribute 'forward'")
        return m.graph


def _method_source(cdef, name):
    node = cdef.methods.get(name)
    if node is None:
        raise AttributeError("'%s' has no method '%s'" % (cdef.qualname, name))
    import ast
    path = cdef.qualname.rsplit(".", 1)[0].replace(".", "/")
    text = ast.get_source_segment(cdef.unit.sources[path], node, padded=True)
    lines = textwrap.dedent(text).split("\n")
    header = node.body[0].lineno - node.lineno   # the signature's lines, continued 4 deep as torch prints
    lines[1:header] = ["  " + ln for ln in lines[1:header]]
    return _SELF_ANNOTATION.sub(r"\1self\2", "\n".join(lines), count=1) + "\n"


_SELF_ANNOTATION = re.compile(r"^(def \w+\()self: [\w.]+([,)])")


_code.ClassDef.method_source = _method_source


# ---- load ----
def _read_bytes(f):
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.exists(path):
            raise ValueError("The provided filename %s does not exist" % path)
        if os.path.isdir(path):
            raise ValueError("The provided filename %s is a directory" % path)
        with open(path, "rb") as fh:
            return fh.read()
    return f.read()


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Loads a TorchScript archive written by torch.jit.save (PyTorch's or cthtorch's)."""
    _ser._check_map_location(map_location)
    data = _read_bytes(f)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = zf.namelist()
        roots = [n[: -len("/data.pkl")] for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not roots:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found "
                               "(not a TorchScript archive)")
        root = roots[0]
        if "%s/constants.pkl" % root not in names:
            raise RuntimeError("PytorchStreamReader failed locating file constants.pkl: file not found "
                               "(a TorchScript archive has one)")
        # archives that need a newer reader (operator upgraders, version 10) keep it in .data/version
        vrec = [r for r in ("%s/version" % root, "%s/.data/version" % root) if r in names]
        if not vrec:
            raise RuntimeError("PytorchStreamReader failed locating file version: file not found "
                               "(a TorchScript archive has one)")
        version = zf.read(vrec[0]).decode("ascii", "replace").strip()
        if not version.isdigit() or not 1 <= int(version) <= 10:
            raise RuntimeError("the archive's version record %r is not one cthtorch reads" % version)
        prefix = "%s/code/" % root
        sources = {n[len(prefix):-3]: zf.read(n).decode("utf-8") for n in names
                   if n.startswith(prefix) and n.endswith(".py")}
        constants = _ArchiveUnpickler(zf.read("%s/constants.pkl" % root), zf, root, "constants",
                                      map_location).load()
        if not isinstance(constants, tuple):
            raise RuntimeError("constants.pkl holds %s, not a tuple" % type(constants).__name__)
        unit = _code.CodeUnit(sources)
        tree = _ArchiveUnpickler(zf.read("%s/data.pkl" % root), zf, root, "data", map_location).load()
        builder = _Builder(unit)
        module = builder.build(tree)
        if not isinstance(module, RecursiveScriptModule):
            raise RuntimeError("data.pkl does not hold a module (%s)" % type(module).__name__)
        _compile_methods(sources, constants, builder.objects)
        module.__dict__["_archive"] = {"root": root, "sources": sources, "constants": constants}
        if _extra_files is not None:
            for k in list(_extra_files):
                rec = "%s/extra/%s" % (root, k)
                if rec in names:
                    _extra_files[k] = zf.read(rec)
    except zipfile.BadZipFile as e:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: %s (the file is truncated or not a "
                           "TorchScript archive)" % e) from None
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError, TypeError, AttributeError,
            zipfile.LargeZipFile, OverflowError, MemoryError, UnicodeDecodeError, _code.CodeError) as e:
        raise RuntimeError("cthtorch.jit.load: malformed TorchScript archive: %s: %s" % (type(e).__name__, e)) \
            from None
    return module


class _Builder:
    """Turns data.pkl's _PickledObjects into script modules/objects (shared objects stay shared)."""

    def __init__(self, unit):
        self.unit = unit
        self.memo = {}
        self.objects = []   # every script module/object built, to give its methods

    def build(self, obj):
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        if isinstance(obj, _PickledObject):
            out = self._object(obj)
        elif isinstance(obj, list):
            out = self.memo[key] = []
            out.extend(self.build(x) for x in obj)
        elif isinstance(obj, tuple):
            out = tuple(self.build(x) for x in obj)
        elif isinstance(obj, dict):
            out = self.memo[key] = type(obj)()
            for k, v in obj.items():
                out[self.build(k)] = self.build(v)
        elif isinstance(obj, _ser._TypedStorageRef):
            raise RuntimeError("a storage appears outside a tensor")
        else:
            out = obj
        self.memo[key] = out
        return out

    def _object(self, obj):
        cdef = self.unit.class_def(obj._qualified_name)
        state = obj.__dict__.get("_state", {})
        if not cdef.is_module:
            so = ScriptObject(cdef)
            self.objects.append(so)
            self.memo[id(obj)] = so
            for k, v in state.items():
                so.__dict__[k] = self.build(v)
            return so
        m = RecursiveScriptModule(cdef)
        self.objects.append(m)
        self.memo[id(obj)] = m
        for k, v in state.items():
            if not isinstance(k, str):
                raise RuntimeError("%s has a non-string attribute name" % cdef.qualname)
            m._attr_order.append(k)
            v = self.build(v)
            if k == "training":
                m.training = bool(v)
            elif k in cdef.parameters:
                if v is not None and not isinstance(v, cthtorch.Tensor):
                    raise RuntimeError("parameter %s of %s is not a tensor" % (k, cdef.qualname))
                if v is not None and not isinstance(v, Parameter):
                    p = self.memo.get(("param", id(v)))
                    if p is None:
                        p = self.memo[("param", id(v))] = Parameter(v, v.requires_grad)
                    v = p
                m.register_parameter(k, v)
            elif k in cdef.buffers:
                m.register_buffer(k, v)
            elif isinstance(v, Module):
                m.add_module(k, v)
            else:
                if isinstance(v, list):    # tensors a list shares with parameters are those Parameters
                    v[:] = [self.memo.get(("param", id(x)), x) for x in v]
                object.__setattr__(m, k, v)
        return m


def _compile_methods(sources, constants, objects):
    """Compiles the archive's code/ with the script frontend (the one TorchScript compiler) and gives
    each loaded module/object its classes' methods as graphs, which the interpreter runs."""
    from cthtorch.jit import frontend
    srcs = [(text, path.replace("/", "."), "code/%s.py" % path) for path, text in sorted(sources.items())]
    consts = _ConstantsTable(constants)

    def resolver(name):
        if name == "CONSTANTS":
            return consts
        if name in ("inf", "nan"):   # torch's code printer writes these floats as bare names
            return float(name)
        raise KeyError(name)
    compiled = frontend.compile_sources(srcs, resolver)   # code that does not compile fails the load, as torch's
    for o in objects:
        sc = compiled.get(o._qualified_name)
        if sc is None:
            raise _code.CodeError("the archive has no code for class %s" % o._qualified_name)
        for name, cf in sc.methods.items():
            o._define_method(name, cf.graph, cf.defaults)


class _ConstantsTable(types.ModuleType):
    """`CONSTANTS.cN` of TorchScript source: constants.pkl's values by name (nothing else); a module to the
    frontend, so `CONSTANTS.c0` is read as the constant it holds."""

    def __init__(self, values):
        super().__init__("CONSTANTS")
        self.__dict__["_values"] = values

    def __getattr__(self, name):
        vals = self.__dict__["_values"]
        if not name.startswith("c") or not name[1:].isdigit() or int(name[1:]) >= len(vals):
            raise AttributeError("the archive has no constant %s" % name)
        return vals[int(name[1:])]


# ---- save ----
class _ObjectRecord:
    """A `__torch__.<qualname>` object to write: GLOBAL, NEWOBJ, then BUILD with its attribute dict."""

    def __init__(self, qualname, state):
        self.qualname, self.state = qualname, state


class _TypedList:
    """A list attribute of one element type, written as torch's pickler writes it
    (`torch.jit._pickle.build_tensorlist((items,))` and the int/float/bool forms), so torch's loader
    reads it back as that list type (a plain pickled list is a GenericList it will not pass as Tensor[])."""

    BUILDERS = ((bool, "build_boollist"), (int, "build_intlist"), (float, "build_doublelist"))

    def __init__(self, items):
        self.items = items

    @classmethod
    def wrap(cls, v):
        if not v:
            return v
        if all(isinstance(x, cthtorch.Tensor) for x in v):
            return cls.Tensor(v)
        for py, builder in cls.BUILDERS:
            if all(type(x) is py for x in v):
                out = cls(v)
                out.builder = builder
                return out
        return v


class _TensorList(_TypedList):
    builder = "build_tensorlist"


_TypedList.Tensor = _TensorList


class _ArchivePickler(_ser._Pickler):
    parameters_as_tensors = True

    def save_typed_list(self, obj):
        self.save_global(_ser._TorchGlobal("torch.jit._pickle", obj.builder))
        self.save((list(obj.items),))
        self.write(pickle.REDUCE)
        self.memoize(obj)

    def save_object_record(self, obj):
        qualname, state = (obj.qualname, obj.state) if isinstance(obj, _ObjectRecord) else \
            (obj._qualified_name, {k: v for k, v in obj.__dict__.items() if k not in ("_c_def", "_methods")})
        module, name = qualname.rsplit(".", 1)
        self.save_global(_ser._TorchGlobal(module, name))
        self.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
        self.memoize(obj)
        self.save(state)
        self.write(pickle.BUILD)

    dispatch = dict(_ser._Pickler.dispatch)
    dispatch[_ObjectRecord] = save_object_record
    dispatch[ScriptObject] = save_object_record   # a TorchScript class's object: its attributes
    dispatch[_TypedList] = save_typed_list
    dispatch[_TensorList] = save_typed_list


def _qualname_of(m):
    """The class type a module is saved as: its own for script modules, else torch's name of its class."""
    if isinstance(m, RecursiveScriptModule):
        return m._qualified_name
    t = m.__dict__.get("_type") if isinstance(m, _jm.ScriptModule) else None
    return t.qualified_name() if t is not None else _jm.class_type_name(type(m))


_CONSTANT_REF = re.compile(r"\bCONSTANTS\.c(\d+)\b")
_SIMPLE_ATTR_TYPES = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


class _Writer:
    """Collects the object records and the code/ files of a module tree."""

    def __init__(self, methods_source):
        self.methods_source = methods_source   # module -> its methods' TorchScript source (.code form), or None
        self.records = {}
        self.files = collections.OrderedDict()   # code path -> {qualname: class source}
        self.constants = []                      # CONSTANTS.cN of all methods, renumbered
        self.param_data = {}                     # id(Parameter) -> (it, its pickled tensor)
        self.functions = set()                   # qualified names of the free functions written
        self.archive = None

    def _methods_text(self, m):
        if self.methods_source is not None:
            return self.methods_source(m)
        if not isinstance(m, _jm.ScriptModule):
            raise NotImplementedError("cthtorch.jit.save: %s is a Python module, not a TorchScript one; script or "
                                      "trace it first (torch.jit.script / torch.jit.trace)" % type(m).__name__)
        return "".join(self._with_constants(*m._get_method(name).code_with_constants) for name in m._method_names())

    def _with_constants(self, text, cmap):
        """A method's code with its CONSTANTS.cN renumbered into the archive's one constants table."""
        base = len(self.constants)
        consts = cmap.const_mapping
        self.constants.extend(consts["c%d" % i] for i in range(len(consts)))
        return _CONSTANT_REF.sub(lambda mo: "CONSTANTS.c%d" % (base + int(mo.group(1))), text)

    def _record_called_functions(self, graphs):
        """The compiled free functions that graphs call (`__torch__.m.f(x)`), and those they call, as
        top-level defs of their module's code/ file, where torch's loader and ours resolve them."""
        todo = list(graphs)
        while todo:
            g = todo.pop()
            for n in g.findAllNodes("prim::PythonOp"):
                raise RuntimeError("Could not export Python function call '%s'. Remove calls to Python functions "
                                   "before export. Did you forget to add @script or @script_method annotation? If "
                                   "this is a nn.ModuleList, add it to __constants__." % n.s("name"))
            for n in g.findAllNodes("prim::CallFunction"):
                fn_value = n.inputs()[0]
                if type(fn_value.type()).__name__ != "FunctionType" or fn_value.node().kind() != "prim::Constant":
                    continue
                fn = fn_value.node().ival("value")
                qualname = fn_value.type().annotation_str
                if qualname in self.functions:
                    continue
                if not isinstance(fn, _jm.ScriptFunction):
                    raise NotImplementedError("cthtorch.jit.save: %s is left to Python (@torch.jit.ignore) and "
                                              "cannot be saved" % qualname)
                self.functions.add(qualname)
                path = qualname.rsplit(".", 1)[0]
                text = self._with_constants(*fn.code_with_constants)
                self.files.setdefault(path.replace(".", "/"), collections.OrderedDict())[qualname] = text
                todo.append(fn.graph)

    def _record_named_tuples(self, graphs):
        """The NamedTuple types (PackedSequence) the graphs' values have, as torch writes them:
        `class PackedSequence(NamedTuple):` with one annotated line per field, in their module's file."""
        def visit(t):
            if isinstance(t, _ir.NamedTupleType):
                qualname = t.annotation_str
                path, name = qualname.rsplit(".", 1)
                fields = "".join("  %s : %s\n" % (k, e.annotation_str) for k, e in zip(t.names(), t.elements()))
                self.files.setdefault(path.replace(".", "/"), collections.OrderedDict())[qualname] = \
                    "class %s(NamedTuple):\n%s" % (name, fields)
            for e in t.containedTypes():
                visit(e)
        for g in graphs:
            for v in list(g.inputs()) + list(g.outputs()) + [o for n in _ir._walk(g.block(), True) for o in n.outputs()]:
                visit(v.type())

    def record_function(self, fn):
        """A ScriptFunction is saved as torch saves one: the forward of a `__torch__.PlaceholderModule`."""
        self._record_called_functions([fn.graph])
        text = self._with_constants(*_jm._code_with_constants(fn.graph, "forward", False))
        sep = ",\n    " if fn.graph.inputs() else ""      # laid out as a module's method, self first
        text = text.replace("def forward(", "def forward(self" + sep, 1)
        qualname = "__torch__.PlaceholderModule"
        lines = ["class PlaceholderModule(Module):", "  __parameters__ = []", "  __buffers__ = []",
                 "  training : bool"]
        lines.extend("  " + ln if ln else ln for ln in text.rstrip("\n").split("\n"))
        self.files.setdefault("__torch__", collections.OrderedDict())[qualname] = "\n".join(lines) + "\n"
        return _ObjectRecord(qualname, {"training": True})

    def record(self, m):
        if id(m) in self.records:
            return self.records[id(m)]
        if not isinstance(m, Module):
            raise RuntimeError("cthtorch.jit.save: cannot save a %s inside a TorchScript module"
                               % type(m).__name__)
        loaded = isinstance(m, RecursiveScriptModule)
        qualname = _qualname_of(m)
        state = {}   # written as a plain dict: torch's unpickler takes BUILD's state as a generic dict
        rec = self.records[id(m)] = _ObjectRecord(qualname, state)
        if loaded:
            names = list(m._attr_order)
        else:
            names = ["training"] + list(m._parameters) + list(m._buffers) + list(m._modules) + \
                list(self._simple_attributes(m))
            for sub in m._modules.values():     # the submodules' class types first: their names may be mangled
                if sub is not None:
                    self.record(sub)
            rec.qualname = self._class_source(m, qualname)
        for k in names:
            v = m.training if k == "training" else getattr(m, k)
            if isinstance(v, Module):
                v = self.record(v)
            elif isinstance(v, Parameter):
                v = self._param_data(v)
            elif isinstance(v, list):    # a list of parameters (an RNN's _flat_weights) keeps sharing them
                v = _TypedList.wrap([self._param_data(x) if isinstance(x, Parameter) else x for x in v])
            state[k] = v
        return rec

    def _param_data(self, p):
        """One pickled tensor per Parameter, wherever the module tree holds it."""
        d = self.param_data.get(id(p))
        if d is None:
            d = self.param_data[id(p)] = (p, p.detach().requires_grad_(p.requires_grad))
        return d[1]

    @staticmethod
    def _simple_attributes(m):
        """Plain attributes a script module keeps (ints, floats, bools, strings), and the other attributes its
        compiled methods read (lists such as Conv's _reversed_padding_repeated_twice): name -> TorchScript type."""
        out = {}
        for k, v in m.__dict__.items():
            if k.startswith("_") or k in ("training", "original_name"):
                continue
            for py, ts in _SIMPLE_ATTR_TYPES:
                if type(v) is py:
                    out[k] = ts
        ctype = m.__dict__.get("_type")
        declared = ctype.attributes() if isinstance(ctype, _ir.ClassType) else {}
        for k, t in declared.items():
            if k in out or k == "training" or k in m._parameters or k in m._buffers or k in m._modules:
                continue
            if isinstance(m.__dict__.get(k), list):
                out[k] = t.annotation_str
        return out

    def _class_source(self, m, qualname):
        methods = textwrap.dedent(self._methods_text(m)).rstrip("\n")
        if isinstance(m, _jm.ScriptModule):
            self._record_called_functions([m._get_method(k).graph for k in m._method_names()])
            self._record_named_tuples([m._get_method(k).graph for k in m._method_names()])
        path, name = qualname.rsplit(".", 1)
        lines = ["class %s(Module):" % name,
                 "  __parameters__ = [%s]" % "".join('"%s", ' % k for k in m._parameters),
                 "  __buffers__ = [%s]" % "".join('"%s", ' % k for k in m._buffers)]
        for k, v in list(m._parameters.items()) + list(m._buffers.items()):
            lines.append("  %s : %s" % (k, "Tensor" if v is not None else "NoneType"))
        lines.append("  training : bool")
        for k, t in self._simple_attributes(m).items():
            lines.append("  %s : %s" % (k, t))
        for k, sub in m._modules.items():
            rec = self.records.get(id(sub))
            t = rec.qualname if rec is not None else _qualname_of(sub)
            lines.append(("  %s : %s" if k.isidentifier() else '  __annotations__["%s"] = %s') % (k, t))
        lines.extend("  " + ln if ln else ln for ln in methods.split("\n"))
        text = "\n".join(lines) + "\n"
        # two modules of one class whose layouts differ (the ModuleLists of a Transformer's encoder and
        # decoder hold different layer types) are two class types: the later ones get torch's mangled name
        base, mangle = path, 0
        while self.files.get(path.replace(".", "/"), {}).get("%s.%s" % (path, name), text) != text:
            path = "%s.___torch_mangle_%d" % (base, mangle)
            mangle += 1
        qualname = "%s.%s" % (path, name)
        self.files.setdefault(path.replace(".", "/"), collections.OrderedDict())[qualname] = text
        return qualname


def save(m, f, _extra_files=None, _methods_source=None):
    """Writes m (a loaded, scripted or traced module) as a TorchScript archive PyTorch's torch.jit.load reads."""
    writer = _Writer(_methods_source)
    if isinstance(m, _jm.ScriptFunction):
        top, archive = writer.record_function(m), None
    elif isinstance(m, Module):
        archive = m.__dict__.get("_archive")
        top = writer.record(m)
    else:
        raise AttributeError("'%s' object has no attribute 'save'" % type(m).__name__)
    if archive is not None:   # a loaded module keeps its archive's code and constants
        files = dict(archive["sources"])
        constants = archive["constants"]
    else:
        files = {p: "".join(classes.values()) for p, classes in writer.files.items()}
        constants = writer.constants
    if _is_path(f):
        path = os.fspath(f)
        root = os.path.splitext(os.path.basename(path))[0] or "archive"
    else:
        root = "archive"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        storages = {}
        buf = io.BytesIO()
        _ArchivePickler(buf, 2, storages).dump(top)
        for key, st in storages.items():
            z.writestr("%s/data/%s" % (root, key), bytes(memoryview(st)))
        z.writestr("%s/data.pkl" % root, buf.getvalue())
        for p, text in files.items():
            z.writestr("%s/code/%s.py" % (root, p), text)
        cstorages = {}
        buf = io.BytesIO()
        _ArchivePickler(buf, 2, cstorages).dump(tuple(constants))
        for key, st in cstorages.items():
            z.writestr("%s/constants/%s" % (root, key), bytes(memoryview(st)))
        z.writestr("%s/constants.pkl" % root, buf.getvalue())
        for k, v in (_extra_files or {}).items():
            z.writestr("%s/extra/%s" % (root, k), v.encode("utf-8") if isinstance(v, str) else bytes(v))
        z.writestr("%s/version" % root, _ARCHIVE_VERSION)
        z.writestr("%s/byteorder" % root, sys.byteorder)
        z.writestr("%s/.data/serialization_id" % root, "%040d" % random.getrandbits(128))
    if _is_path(f):
        with open(os.fspath(f), "wb") as fh:
            fh.write(out.getvalue())
    else:
        f.write(out.getvalue())


def _is_path(f):
    return isinstance(f, (str, os.PathLike))
