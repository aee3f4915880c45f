"""The classes of an archive's code/ directory, as the loader needs them before anything compiles.

TorchScript archives carry their classes as TorchScript source
(`code/__torch__/.../<module>.py`). The script frontend compiles every method
of that source into graphs (jit/_serialization.py, _compile_methods); this
module only reads each class's layout from the source text: its parameter and
buffer names, its constant attributes, its base class, and where each method's
text is (for `.code`). data.pkl's objects are built from that layout.
"""
import ast


class CodeError(RuntimeError):
    pass


class ClassDef:
    """One `class X(Module):` of code/: its parameter/buffer names, constants and methods' definitions."""

    def __init__(self, unit, qualname, node):
        self.unit, self.qualname, self.name = unit, qualname, node.name
        bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
        self.base = bases[0] if bases else "object"
        self.is_module = self.base == "Module"
        self.parameters, self.buffers, self.constants, self.methods = [], [], {}, {}
        for st in node.body:
            if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                if st.targets[0].id == "__parameters__":
                    self.parameters = [_literal(e) for e in st.value.elts]
                elif st.targets[0].id == "__buffers__":
                    self.buffers = [_literal(e) for e in st.value.elts]
            elif isinstance(st, ast.AnnAssign) and st.value is not None and isinstance(st.target, ast.Name):
                self.constants[st.target.id] = _literal(st.value)
            elif isinstance(st, ast.FunctionDef):
                self.methods[st.name] = st


def _literal(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        vals = [_literal(e) for e in node.elts]
        return vals if isinstance(node, ast.List) else tuple(vals)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    raise CodeError("cthtorch.jit.load: unsupported constant %s in TorchScript code" % ast.unparse(node))


class CodeUnit:
    """The code/ directory of one archive: qualified class names resolve to their ClassDefs on demand."""

    def __init__(self, sources):
        self.sources = sources       # "__torch__/torch/nn/modules/linear" -> source text
        self._parsed = {}

    def _file(self, path):
        if path not in self._parsed:
            src = self.sources.get(path)
            if src is None:
                self._parsed[path] = None
            else:
                try:
                    tree = ast.parse(src, filename=path + ".py")
                except SyntaxError as e:
                    raise CodeError("cthtorch.jit.load: code/%s.py is not TorchScript source: %s" % (path, e)) from None
                qual = path.replace("/", ".")
                self._parsed[path] = {node.name: ClassDef(self, "%s.%s" % (qual, node.name), node)
                                      for node in tree.body if isinstance(node, ast.ClassDef)}
        return self._parsed[path]

    def class_def(self, qualname):
        """`__torch__.a.b.C` -> its ClassDef (the longest file path that exists holds it)."""
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            items = self._file("/".join(parts[:cut]))
            if items is not None:
                c = items.get(parts[cut]) if cut == len(parts) - 1 else None
                if c is not None:
                    return c
                break
        raise RuntimeError("cthtorch.jit.load: the archive has no code for class %s" % qualname)
