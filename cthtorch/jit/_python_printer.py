"""`.code`: a graph printed back as TorchScript source (the Python subset),
as torch/csrc/jit/serialization/python_print.cpp does.

A value used once, by the statement right after the one that makes it, is
inlined into that statement's expression (constants always are); other
values get a variable: their debug name (sanitized, made unique) or `_N`.
An inlined expression that makes a long line (40 characters with its
indentation) is hoisted into a `_N` temporary, with the inlined values its
user reads before it, so the statements keep their order (torch's
splitLongInlines). Tensor constants print as `CONSTANTS.cN` and are
collected in `constants`.
"""
import cthtorch

from . import _ir

__all__ = ["PythonPrinter", "graph_code"]


def _sanitize(name):
    base = name.split(".")[0] if not name.split(".")[0].isdigit() else "_"
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in base)
    if not base or base[0].isdigit():
        base = "_" + base
    return base


_RESERVED = {"and", "as", "assert", "break", "class", "continue", "def", "del", "elif", "else", "except",
             "False", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "None",
             "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while", "with", "yield",
             "torch", "ops", "CONSTANTS", "int", "float", "bool", "str", "getattr", "uninitialized",
             "annotate", "range", "fork", "print", "unchecked_cast", "isinstance"}


_INT_MAX = 9223372036854775807


def _fmt_float(x):
    s = _ir._fmt_float(x)
    return s


class PythonPrinter:
    def __init__(self, constants=None):
        self.constants = constants if constants is not None else []
        self._inline = set()
        self._exprs = {}          # value -> its inlined expression, made when the emitter reaches its node
        self._split_seen = {}     # user node -> the highest input offset already considered for splitting
        self._names = {}
        self._used_names = set()
        self._tmp = 0

    # -- inlining decisions (python_print.cpp's scanBlock/scanNode/scanValue)
    def _can_inline(self, v):
        n = v.node()
        if n.kind() in ("prim::Param",) or len(n.outputs()) != 1 or len(v.uses()) != 1:
            return False
        use = v.uses()[0]
        if v.hasDebugName() and use.user.kind() != "prim::Return":
            return False
        if n.blocks():
            return False
        if use.user.kind() == "prim::Loop" and use.offset >= 2:
            return False
        return True

    @staticmethod
    def _prev_non_constant(n):
        n = n.prev()
        while n is not None and n.kind() == "prim::Constant":
            n = n.prev()
        return n

    def _scan_value(self, block_point, v):
        n = v.node()
        is_const = n.kind() == "prim::Constant"
        if not is_const and not self._can_inline(v):
            return block_point
        if is_const:
            self._inline.add(n)
            return block_point
        if n is self._prev_non_constant(block_point):
            bp = self._scan_node(n)
            self._inline.add(n)
            return bp
        return block_point

    def _scan_node(self, n):
        if n in self._inline:
            return n
        for b in n.blocks():
            self._scan_block(b)
        bp = n
        for v in reversed(n.inputs()):
            bp = self._scan_value(bp, v)
        return bp

    def _scan_block(self, b):
        self._scan_node(b.returnNode())
        for n in b.nodes().reverse():
            self._scan_node(n)

    # -- names
    def _fresh(self, base):
        if base not in self._used_names and base not in _RESERVED:
            self._used_names.add(base)
            return base
        k = 0
        while "%s%d" % (base, k) in self._used_names:
            k += 1
        name = "%s%d" % (base, k)
        self._used_names.add(name)
        return name

    def _temp(self):
        while True:
            name = "_%d" % self._tmp
            self._tmp += 1
            if name not in self._used_names:
                self._used_names.add(name)
                return name

    def _name_value(self, v):
        if v in self._names:
            return self._names[v]
        name = self._fresh(_sanitize(v.debugName())) if v.hasDebugName() else self._temp()
        self._names[v] = name
        return name

    def expr(self, v):
        e = self._exprs.get(v)
        if e is not None:
            return e
        n = v.node()
        if n in self._inline:
            return self._node_expr(n)
        return self._name_value(v)

    # -- long inlined expressions (python_print.cpp's isLongLine / splitLongInlines / scanLongInlines)
    @staticmethod
    def _long(e, indent):
        return len(e) + 2 * indent >= 40

    def _split_long_inlines(self, v, indent, lines):
        u = v.uses()[0]
        acc = []
        self._scan_long_inlines(u.user, u.offset, acc)
        for w in reversed(acc):
            self._define(w, indent, lines)

    def _scan_long_inlines(self, user, offset, acc):
        seen = self._split_seen.get(user)
        for i in range(offset, -1 if seen is None else seen, -1):
            a = user.inputs()[i]
            if a.node().kind() != "prim::Constant" and a in self._exprs:
                acc.append(a)
        self._split_seen[user] = offset
        if seen is None and user in self._inline:
            u = user.output().uses()[0]
            self._scan_long_inlines(u.user, u.offset - 1, acc)   # its own use is still being built

    def _define(self, v, indent, lines):
        """An inlined value printed as a statement of its own after all: `_N = <its expression>`."""
        name = self._temp()
        lines.append("%s%s = %s" % ("  " * indent, name, self._exprs.pop(v)))
        self._inline.discard(v.node())
        self._names[v] = name

    # -- expressions
    def _const_expr(self, n):
        val = n._constant_value()
        t = n.output().type()
        if val is None:
            return "None"
        if isinstance(val, bool):
            return "True" if val else "False"
        if isinstance(val, cthtorch.device):
            return 'torch.device("%s")' % val
        if isinstance(val, cthtorch.Tensor):
            for i, c in enumerate(self.constants):
                if c is val:
                    return "CONSTANTS.c%d" % i
            self.constants.append(val)
            return "CONSTANTS.c%d" % (len(self.constants) - 1)
        if isinstance(t, _ir.IntType) or isinstance(val, int):
            return str(val)
        if isinstance(val, float):
            return _fmt_float(val)
        if isinstance(val, str):
            return '"%s"' % val.replace("\\", "\\\\").replace('"', '\\"')
        if isinstance(val, list):
            return "[%s]" % ", ".join(_fmt_float(x) if isinstance(x, float) else str(x) for x in val)
        return repr(val)

    def _call_args(self, n):
        """Arguments with kwarg-only ones by name; trailing defaults dropped."""
        s = n.maybeSchema()
        ins = n.inputs()
        if s is None:
            return [self.expr(v) for v in ins]
        keep = len(ins)
        while keep > 0:
            a = s.arguments[keep - 1]
            v = ins[keep - 1]
            if not a.has_default or v.node().kind() != "prim::Constant" or \
                    v.node()._constant_value() != a.default_value or \
                    type(v.node()._constant_value()) is not type(a.default_value) and \
                    a.default_value is not None:
                break
            keep -= 1
        out = []
        for a, v in zip(s.arguments[:keep], ins[:keep]):
            e = self.expr(v)
            out.append("%s=%s" % (a.name, e) if a.kwarg_only else e)
        return out

    def _node_expr(self, n):
        k = n.kind()
        ins = n.inputs()
        if k == "prim::Constant":
            return self._const_expr(n)
        if k == "prim::ListConstruct":
            if not ins and str(n.output().type()) != "Tensor[]":     # an empty list says its type, as torch
                return "annotate(%s, [])" % n.output().type().annotation_str
            return "[%s]" % ", ".join(self.expr(v) for v in ins)
        if k == "prim::TupleConstruct":
            es = [self.expr(v) for v in ins]
            if isinstance(n.output().type(), _ir.NamedTupleType):     # its class called by name, as torch prints
                return "%s(%s)" % (n.output().type().annotation_str, ", ".join(es))
            return "(%s,)" % es[0] if len(es) == 1 else "(%s)" % ", ".join(es)
        if k == "prim::DictConstruct":
            es = [self.expr(v) for v in ins]
            return "{%s}" % ", ".join("%s: %s" % (a, b) for a, b in zip(es[::2], es[1::2]))
        if k == "prim::GetAttr":
            if not n.s("name").isidentifier():   # Sequential's "0": torch prints getattr(self, "0")
                return 'getattr(%s, "%s")' % (self.expr(ins[0]), n.s("name"))
            return "%s.%s" % (self.expr(ins[0]), n.s("name"))
        if k == "prim::CallMethod":
            return "(%s).%s(%s)" % (self.expr(ins[0]), n.s("name"),
                                    "".join(self.expr(v) + ", " for v in ins[1:]))
        if k == "prim::CreateObject":
            qn = n.output().type().qualified_name()
            return "%s.__new__(%s)" % (qn, qn)
        if k == "prim::PythonOp":
            return "^%s()(%s)" % (n.s("name"), ", ".join(self.expr(v) for v in ins))
        if k == "prim::CallFunction":
            ft = ins[0].type()
            # a compiled function is called by its qualified name, as torch prints `__torch__.m.f(x)`
            callee = ft.annotation_str if type(ft).__name__ == "FunctionType" else self.expr(ins[0])
            return "%s(%s)" % (callee, ", ".join(self.expr(v) for v in ins[1:]))
        if k == "prim::TupleIndex" or k == "aten::__getitem__":
            return "%s[%s]" % (self.expr(ins[0]), self.expr(ins[1]))
        if k in ("aten::Int", "aten::Float", "aten::Bool", "aten::str"):
            return "%s(%s)" % (k[6:].lower(), self.expr(ins[0]))
        if k == "prim::unchecked_cast":
            return "unchecked_cast(%s, %s)" % (n.output().type().annotation_str, self.expr(ins[0]))
        if k == "prim::Uninitialized":
            return "uninitialized(%s)" % n.output().type().annotation_str
        if k == "aten::__is__" or k == "aten::__isnot__":
            return "torch.%s(%s, %s)" % (k[6:], self.expr(ins[0]), self.expr(ins[1]))
        ns, _, name = k.partition("::")
        args = ", ".join(self._call_args(n))
        if ns == "aten":
            return "torch.%s(%s)" % (name, args)
        return "ops.%s.%s(%s)" % (ns, name, args)

    # -- statements
    def _emit_block(self, b, indent, lines):
        pad = "  " * indent
        for n in b.nodes():
            if n in self._inline:
                if n.kind() != "prim::Constant":   # constants are written where they are read
                    v = n.output()
                    e = self._exprs[v] = self._node_expr(n)
                    if self._long(e, indent):
                        self._split_long_inlines(v, indent, lines)
                continue
            self._emit_node(n, indent, lines)
        return pad

    def _emit_node(self, n, indent, lines):
        pad = "  " * indent
        k = n.kind()
        outs = n.outputs()
        if k == "prim::If":
            self._emit_if(n, indent, lines)
            return
        if k == "prim::Loop":
            self._emit_loop(n, indent, lines)
            return
        if k in ("prim::TupleUnpack", "prim::ListUnpack"):
            names = [self._name_value(o) for o in outs]
            lines.append("%s%s, = %s" % (pad, ", ".join(names), self.expr(n.inputs()[0])))
            return
        if k == "prim::RaiseException":
            lines.append("%sops.prim.RaiseException(%s)" % (pad, ", ".join(self.expr(v) for v in n.inputs())))
            return
        if k == "prim::SetAttr":
            lines.append("%s%s.%s = %s" % (pad, self.expr(n.inputs()[0]), n.s("name"), self.expr(n.inputs()[1])))
            return
        e = self._node_expr(n)
        if not outs:
            lines.append(pad + e)
        elif len(outs) == 1:
            lines.append("%s%s = %s" % (pad, self._name_value(outs[0]), e))
        else:
            lines.append("%s%s = %s" % (pad, ", ".join(self._name_value(o) for o in outs), e))

    # -- control flow (python_print.cpp's emitIf/emitLoop)
    def _assign(self, pad, names, exprs, lines):
        """`a, b = x, y` as torch prints carried values; same-name pairs drop."""
        pairs = [(nm, e) for nm, e in zip(names, exprs) if nm != e]
        if pairs:
            lines.append("%s%s = %s" % (pad, ", ".join(p[0] for p in pairs), ", ".join(p[1] for p in pairs)))

    def _emit_if(self, n, indent, lines):
        pad = "  " * indent
        names = [self._name_value(o) for o in n.outputs()]
        lines.append("%sif %s:" % (pad, self.expr(n.inputs()[0])))
        for i, b in enumerate(n.blocks()):
            if i == 1:
                lines.append("%selse:" % pad)
            start = len(lines)
            self._emit_block(b, indent + 1, lines)
            self._assign(pad + "  ", names, [self.expr(v) for v in b.outputs()], lines)
            if len(lines) == start:
                lines.append("%s  pass" % pad)

    @staticmethod
    def _is_const(v, val):
        n = v.node()
        return n.kind() == "prim::Constant" and n._constant_value() is val if isinstance(val, bool) else \
            n.kind() == "prim::Constant" and n._constant_value() == val

    def _emit_loop(self, n, indent, lines):
        """A loop whose condition stays True prints as `for i in range(n)`;
        one without a trip count as `while c`; one with both (a for loop
        that breaks) as a while loop with its own counter, the form torch's
        canonicalization gives it."""
        pad = "  " * indent
        trip, cond = n.inputs()[0], n.inputs()[1]
        body = n.blocks()[0]
        names = [self._name_value(o) for o in n.outputs()]
        for nm, v in zip(names, n.inputs()[2:]):       # initial values: a line each, as torch
            self._assign(pad, [nm], [self.expr(v)], lines)
        for bi, nm in zip(body.inputs()[1:], names):
            self._names[bi] = nm
        next_cond = body.outputs()[0]
        carried_out = body.outputs()[1:]
        unbounded = self._is_const(trip, _INT_MAX)
        if self._is_const(cond, True) and self._is_const(next_cond, True) and not unbounded:
            it = self._name_value(body.inputs()[0])
            lines.append("%sfor %s in range(%s):" % (pad, it, self.expr(trip)))
            start = len(lines)
            self._emit_block(body, indent + 1, lines)
            self._assign(pad + "  ", names, [self.expr(v) for v in carried_out], lines)
            if len(lines) == start:
                lines.append("%s  pass" % pad)
            return
        c = self._temp()
        if unbounded:
            lines.append("%s%s = %s" % (pad, c, self.expr(cond)))
            lines.append("%swhile %s:" % (pad, c))
            self._emit_block(body, indent + 1, lines)
            self._assign(pad + "  ", [c] + names, [self.expr(next_cond)] + [self.expr(v) for v in carried_out],
                         lines)
            return
        t, i = self._temp(), self._temp()
        lines.append("%s%s = %s" % (pad, t, self.expr(trip)))
        lines.append("%s%s = 0" % (pad, i))
        lines.append("%s%s = torch.__and__(torch.lt(%s, %s), %s)" % (pad, c, i, t, self.expr(cond)))
        lines.append("%swhile %s:" % (pad, c))
        self._names[body.inputs()[0]] = i
        self._emit_block(body, indent + 1, lines)
        i1 = self._temp()
        lines.append("%s  %s = torch.add(%s, 1)" % (pad, i1, i))
        self._assign(pad + "  ", [c] + names + [i],
                     ["torch.__and__(torch.lt(%s, %s), %s)" % (i1, t, self.expr(next_cond))] +
                     [self.expr(v) for v in carried_out] + [i1], lines)

    def function(self, graph, name, arg_names=None, self_first=False, defaults=None):
        self._scan_block(graph.block())
        params = []
        for i, v in enumerate(graph.inputs()):
            nm = self._fresh(_sanitize(v.debugName())) if v.hasDebugName() else self._temp()
            if self_first and i == 0:     # the module's own parameter keeps its name, `self` or not (as torch)
                nm = _sanitize(v.debugName()) if v.hasDebugName() else "self"
                self._used_names.add(nm)
            self._names[v] = nm
            param = nm if self_first and i == 0 else "%s: %s" % (nm, v.type().annotation_str)
            if defaults and v.hasDebugName() and v.debugNameBase() in defaults:    # `y: int=3`, as torch
                param += "=" + _default_str(defaults[v.debugNameBase()])
            params.append(param)
        lines = []
        self._emit_block(graph.block(), 1, lines)
        outs = graph.outputs()
        ret = outs[0].type().annotation_str if len(outs) == 1 else \
            "Tuple[%s]" % ", ".join(o.type().annotation_str for o in outs)
        if len(outs) == 1:
            lines.append("  return %s" % self.expr(outs[0]))
        else:
            lines.append("  return (%s)" % ", ".join(self.expr(o) for o in outs))
        head = "def %s(%s) -> %s:" % (name, ",\n    ".join(params), ret)
        return head + "\n" + "\n".join(lines) + "\n"


def _default_str(v):
    if isinstance(v, float):
        return _fmt_float(v)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_default_str(x) for x in v)
        return "[%s]" % inner if isinstance(v, list) else "(%s%s)" % (inner, "," if len(v) == 1 else "")
    if isinstance(v, str):
        return '"%s"' % v
    return str(v)


def graph_code(graph, name, self_first=False, constants=None):
    return PythonPrinter(constants).function(graph, name, self_first=self_first)
