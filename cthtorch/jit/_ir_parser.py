"""torch._C.parse_ir: graph text (as str(graph) prints it) back into a Graph.

Used by the pass tests (input graph text -> pass -> expected text) and by
anyone who writes graphs by hand. Numbered values (%3) get fresh numbers;
named ones (%x, %x.1) keep their names.
"""
import re

import cthtorch

from . import _ir

__all__ = ["parse_ir", "parse_type_str"]

_SCALAR_BY_NAME = {v: k for k, v in _ir._SCALAR_NAMES.items()}


class _Lexer:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def ws(self, newlines=True):
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "#":                       # a source-range comment runs to the end of the line
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            elif c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            else:
                break

    def peek(self, tok):
        self.ws()
        return self.s.startswith(tok, self.i)

    def eat(self, tok):
        if self.peek(tok):
            self.i += len(tok)
            return True
        return False

    def expect(self, tok):
        if not self.eat(tok):
            raise RuntimeError("parse_ir: expected '%s' at: %r" % (tok, self.s[self.i:self.i + 40]))

    def regex(self, pat):
        self.ws()
        m = re.compile(pat).match(self.s, self.i)
        if not m:
            raise RuntimeError("parse_ir: unexpected text at: %r" % self.s[self.i:self.i + 40])
        self.i = m.end()
        return m.group(0)


_NAME = r"[A-Za-z_][\w]*(?:::[\w]+)?(?:\.[\w]+)*"


def parse_type_str(lx):
    """A type as graphs print it: Tensor, Float(2, 3, strides=[3, 1], ...),
    int[], Tensor?, (int, Tensor), Dict(str, Tensor), __torch__.M."""
    if lx.eat("("):
        elems = []
        while not lx.eat(")"):
            elems.append(parse_type_str(lx))
            lx.eat(",")
        t = _ir.TupleType(elems)
    else:
        name = lx.regex(r"[A-Za-z_][\w.]*")
        if name == "Dict" and lx.eat("("):
            k = parse_type_str(lx)
            lx.expect(",")
            v = parse_type_str(lx)
            lx.expect(")")
            t = _ir.DictType(k, v)
        elif name in ("List", "Optional") and lx.eat("["):
            e = parse_type_str(lx)
            lx.expect("]")
            t = _ir.ListType(e) if name == "List" else _ir.OptionalType(e)
        elif name in _SCALAR_BY_NAME and lx.peek("("):
            t = _parse_tensor_type(lx, getattr(cthtorch, _SCALAR_BY_NAME[name]))
        else:
            t = _simple_type(name)
    while True:   # suffixes: int[] / Tensor? / int[]?
        if lx.s.startswith("[]", lx.i):
            lx.i += 2
            t = _ir.ListType(t)
        elif lx.s.startswith("?", lx.i):
            lx.i += 1
            t = _ir.OptionalType(t)
        else:
            return t


def _simple_type(name):
    simple = {"Tensor": _ir.TensorType.get, "int": _ir.IntType.get, "float": _ir.FloatType.get,
              "bool": _ir.BoolType.get, "str": _ir.StringType.get, "NoneType": _ir.NoneType.get,
              "Device": _ir.DeviceObjType.get, "Scalar": _ir.NumberType.get, "number": _ir.NumberType.get,
              "Any": _ir.AnyType.get, "complex": _ir.ComplexType.get, "Generator": _ir.GeneratorType.get}
    if name in simple:
        return simple[name]()
    if name.startswith("__torch__"):
        return _ir.ClassType(name)
    raise RuntimeError("parse_ir: unknown type '%s'" % name)


def _parse_tensor_type(lx, dtype):
    lx.expect("(")
    sizes, strides, rg, dev = [], None, None, None
    while not lx.eat(")"):
        if lx.eat("strides="):
            lx.expect("[")
            strides = []
            while not lx.eat("]"):
                strides.append(int(lx.regex(r"-?\d+")))
                lx.eat(",")
        elif lx.eat("requires_grad="):
            rg = bool(int(lx.regex(r"\d")))
        elif lx.eat("device="):
            dev = cthtorch.device(lx.regex(r"[\w:]+"))
        elif lx.eat("*"):
            sizes.append(None)
        else:
            sizes.append(int(lx.regex(r"\d+")))
        lx.eat(",")
    return _ir.TensorType(dtype, sizes, strides, rg, dev)


def _parse_attr_value(lx):
    if lx.peek('"'):
        return "s", _parse_string(lx)
    if lx.eat("["):
        items = []
        while not lx.eat("]"):
            items.append(_parse_attr_value(lx))
            lx.eat(",")
        kinds = {k for k, _ in items}
        vals = [v for _, v in items]
        if kinds == {"i"}:
            return "is", vals
        if kinds <= {"i", "f"} and vals:
            return "fs", [float(v) for v in vals]
        if kinds == {"s"}:
            return "ss", vals
        return "is", vals   # []
    if lx.eat("{"):
        num = lx.regex(r"[^}]*")
        lx.expect("}")
        return "t", num
    if lx.eat("<Tensor>"):
        return "t", None
    tok = lx.regex(r"-?(?:inf|nan|[\d.]+(?:e[+-]?\d+)?)")
    if re.fullmatch(r"-?\d+", tok):
        return "i", int(tok)
    return "f", float(tok)


def _parse_string(lx):
    lx.expect('"')
    out = []
    while lx.s[lx.i] != '"':
        c = lx.s[lx.i]
        if c == "\\":
            lx.i += 1
            c = {"n": "\n", "t": "\t"}.get(lx.s[lx.i], lx.s[lx.i])
        out.append(c)
        lx.i += 1
    lx.i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text, graph):
        self.lx = _Lexer(text)
        self.g = graph
        self.env = {}

    def value_ref(self):
        name = self.lx.regex(r"%[\w.]+")[1:]
        if name not in self.env:
            raise RuntimeError("parse_ir: use of undefined value %%%s" % name)
        return self.env[name]

    def define(self, v, name, typ):
        v.setType(typ)
        if not re.fullmatch(r"\d+", name):
            v.setDebugName(name)
        self.env[name] = v

    def decl_list(self, close):
        """`%a : T, %b : T` up to close; returns [(name, type)]."""
        out = []
        lx = self.lx
        while not lx.eat(close):
            name = lx.regex(r"%[\w.]+")[1:]
            lx.expect(":")
            out.append((name, parse_type_str(lx)))
            lx.eat(",")
        return out

    def parse(self):
        lx = self.lx
        lx.expect("graph")
        lx.expect("(")
        for name, t in self.decl_list(")"):
            self.define(self.g.addInput(), name, t)
        lx.expect(":")
        self.block_body(self.g.block(), "return")
        return self.g

    def block_body(self, block, terminator):
        lx = self.lx
        while True:
            if lx.eat(terminator):
                lx.expect("(")
                while not lx.eat(")"):
                    block.registerOutput(self.value_ref())
                    lx.eat(",")
                return
            self.statement(block)

    def statement(self, block):
        lx = self.lx
        outs = []
        while not lx.eat("="):
            name = lx.regex(r"%[\w.]+")[1:]
            lx.expect(":")
            outs.append((name, parse_type_str(lx)))
            lx.eat(",")
        kind = lx.regex(r"\w+::[\w.]+")
        n = self.g.create(kind, [], len(outs))
        if lx.eat("["):
            while not lx.eat("]"):
                aname = lx.regex(r"\w+")
                lx.expect("=")
                k, v = _parse_attr_value(lx)
                n._set(aname, k, v)
                lx.eat(",")
        lx.expect("(")
        while not lx.eat(")"):
            n.addInput(self.value_ref())
            lx.eat(",")
        if lx.eat(", scope:"):
            n._scope = lx.regex(r"\S+")
        block.appendNode(n)
        for o, (name, t) in zip(n.outputs(), outs):
            self.define(o, name, t)
        if n.kind() == "prim::Constant" and n.hasAttribute("value"):
            self._fix_constant(n)
        while lx.peek("block"):
            lx.regex(r"block\d+")
            b = n.addBlock()
            lx.expect("(")
            for name, t in self.decl_list(")"):
                self.define(b.addInputToBlock(), name, t)
            lx.expect(":")
            self.block_body(b, "->")

    @staticmethod
    def _fix_constant(n):
        """Constants as their output type reads them: Device strings, bools,
        tensors from `{2}`."""
        k, v = n._attrs["value"]
        t = n.output().type()
        if k == "t":
            dtype = t.dtype() if isinstance(t, _ir.TensorType) and t.dtype() is not None else None
            val = float(v) if v is not None and ("." in v or "e" in v) else int(v) if v is not None else 0
            n._attrs["value"] = ("t", cthtorch.tensor(val, dtype=dtype))


def parse_ir(text, parse_tensor_constants=False):
    return _Parser(text, _ir.Graph()).parse()
