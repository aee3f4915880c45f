"""The text of an operator schema, `name.overload(Type arg=default, *, ...) -> Ret`, cut into its parts.

One reader for both users of the declarations' `func:` lines: tools/generate_code.py (which loads this
file by path at build time, before cthtorch is importable) and cthtorch/jit/_schema.py (which builds
typed FunctionSchemas from the parts). Plain text only: no cthtorch imports.
"""
import re

_FUNC = re.compile(r"^([\w:]+(?:\.\w+)?)\((.*)\)\s*->\s*(.+)$", re.S)
_ARG = re.compile(r"^(.*?)\s+(\w+)(?:\s*=\s*(.*))?$", re.S)


def split_func(text):
    """`ns::name.overload(args) -> rets` -> (name with overload, args text, returns text), or None."""
    m = _FUNC.match(text.strip())
    return (m.group(1), m.group(2), m.group(3).strip()) if m else None


def split_top(s):
    """Comma-separated items at nesting depth 0 (`int[2] a, Tensor(a!) b`), stripped, empties dropped."""
    parts, depth, cur = [], 0, ""
    for c in s:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def split_arg(text):
    """`Type name=default` -> (type text, name, default text or None); an unnamed return `Tensor(a)` ->
    (its text, "", None)."""
    m = _ARG.match(text.strip())
    if not m:
        return text.strip(), "", None
    return m.group(1).strip(), m.group(2), None if m.group(3) is None else m.group(3).strip()
