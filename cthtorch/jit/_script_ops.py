"""Non-tensor ops that scripted code reaches and tracing never does: list,
dict and str methods, range arithmetic, printing. The frontend emits them
under torch's names (`aten::append`, `aten::_set_item`, `aten::keys`...);
they join the interpreter's table of pure ops here, where the interpreter
has no entry of its own (its entries win). Names that tensors also use
(slice, index, sort, ...) are not added: a kind alone cannot tell them
apart."""
import builtins


def _set_item(c, k, v):
    c[k] = v
    return c if isinstance(c, list) else None


def _extend(a, b):
    a.extend(b)


def _insert(a, i, v):
    a.insert(i, v)


def _pop(c, *k):
    return c.pop(*k)


def _clear(c):
    c.clear()


def _reverse(a):
    a.reverse()


def _remove(a, v):
    a.remove(v)


def _update(a, b):
    a.update(b)


def _range_length(lo, hi, step):
    if step == 0:
        raise RuntimeError("range() arg 3 must not be zero")
    if step > 0:
        return max(0, (hi - lo + step - 1) // step)
    return max(0, (lo - hi - step - 1) // -step)


def _print(*args):
    builtins.print(*args)


SCRIPT_OPS = {
    "aten::_set_item": _set_item,
    "aten::extend": _extend,
    "aten::insert": _insert,
    "aten::pop": _pop,
    "aten::clear": _clear,
    "aten::reverse": _reverse,
    "aten::remove": _remove,
    "aten::count": lambda a, v: a.count(v),
    "aten::keys": lambda d: list(d.keys()),
    "aten::values": lambda d: list(d.values()),
    "aten::items": lambda d: list(d.items()),
    "aten::get": lambda d, k, default=None: d.get(k, default),
    "aten::update": _update,
    "aten::setdefault": lambda d, k, v: d.setdefault(k, v),
    "aten::__contains__": lambda c, v: v in c,
    "aten::__range_length": _range_length,
    "aten::__derive_index": lambda i, start, step: start + i * step,
    "aten::list": list,
    "aten::percentFormat": lambda fmt, *args: fmt % args,
    "aten::divmod": lambda a, b: divmod(a, b),
    "aten::lower": lambda s: s.lower(),
    "aten::upper": lambda s: s.upper(),
    "aten::strip": lambda s, chars=None: s.strip(chars),
    "aten::split": None,       # collides with Tensor.split: left out
    "aten::join": lambda s, items: s.join(items),
    "aten::startswith": lambda s, p: s.startswith(p),
    "aten::endswith": lambda s, p: s.endswith(p),
    "aten::replace": lambda s, a, b: s.replace(a, b),
    "aten::find": lambda s, sub: s.find(sub),
    "prim::abs": abs,
    "prim::Print": _print,
    "prim::grad": lambda t: t.grad,
    "prim::layout": lambda t: 0,
    "prim::is_sparse": lambda t: t.is_sparse,
    "prim::is_meta": lambda t: t.is_meta,
    "prim::is_nested": lambda t: t.is_nested,
    "prim::type": lambda d: d.type,       # a Device's type string
}


def install():
    from . import _interpreter
    for k, fn in SCRIPT_OPS.items():
        if fn is not None:
            _interpreter._PRIM_PURE.setdefault(k, fn)
