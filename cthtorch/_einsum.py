"""torch.einsum: the equation becomes diagonals, sums, permutes, reshapes and
batched matmuls (bmm), so it runs at GEMM speed and is differentiable through
those ops. Operands are contracted left to right."""
import functools

import cthtorch

_ELL = "..."


def _parse_term(term, ndim, k, n_ell, ell_labels):
    """The labels of one operand term; its '...' dims become ell_labels (right-aligned)."""
    if _ELL in term:
        before, after = term.split(_ELL, 1)
        if _ELL in after or "." in before + after:
            raise RuntimeError("einsum(): found '.' for operand %d that is not part of any ellipsis" % k)
        named = len(before) + len(after)
        e = ndim - named
        if e < 0:
            raise RuntimeError("einsum(): the number of subscripts in the equation (%d) is more than the number of "
                               "dimensions (%d) for operand %d" % (named, ndim, k))
        return list(before) + ell_labels[n_ell - e:] + list(after)
    if len(term) != ndim:
        raise RuntimeError("einsum(): the number of subscripts in the equation (%d) does not match the number of "
                           "dimensions (%d) for operand %d and no ellipsis was given" % (len(term), ndim, k))
    return list(term)


def _take_diagonals(t, labels):
    """A label repeated in one term means that operand's diagonal."""
    while True:
        for i, lab in enumerate(labels):
            if labels.count(lab) > 1:
                j = labels.index(lab, i + 1)
                t = cthtorch.diagonal(t, 0, i, j)
                labels = [x for n, x in enumerate(labels) if n not in (i, j)] + [lab]
                break
        else:
            return t, labels


def _sum_out(t, labels, keep):
    dims = [i for i, lab in enumerate(labels) if lab not in keep]
    if dims:
        t = t.sum(dims)
        labels = [lab for lab in labels if lab in keep]
    return t, labels


def _contract(a, la, b, lb, keep):
    """a[la] * b[lb] summed over the shared labels not in keep, as one bmm (a mul when none is summed)."""
    batch = [x for x in la if x in lb and x in keep]
    contr = [x for x in la if x in lb and x not in keep]
    ao = [x for x in la if x not in lb]
    bo = [x for x in lb if x not in la]
    size = {}
    for lab, s in list(zip(la, a.shape)) + list(zip(lb, b.shape)):
        size[lab] = s if s != 1 else size.get(lab, 1)   # 1 broadcasts
    pa = a.permute([la.index(x) for x in batch + ao + contr]).expand([size[x] for x in batch + ao + contr])
    pb = b.permute([lb.index(x) for x in batch + contr + bo]).expand([size[x] for x in batch + contr + bo])

    def prod(xs):
        p = 1
        for x in xs:
            p *= size[x]
        return p
    nb, m, k, n = prod(batch), prod(ao), prod(contr), prod(bo)
    x, y = pa.reshape(nb, m, k), pb.reshape(nb, k, n)
    if not contr:   # nothing summed: an outer product is a broadcast mul (torch's too: it promotes), not a k=1 bmm
        r = x * y
    elif x.is_complex() or y.is_complex():   # complex operands: matmul's real-part GEMMs; mixed ones promote first
        dt = cthtorch.promote_types(x.dtype, y.dtype)
        r = cthtorch.matmul(x.to(dt), y.to(dt))
    else:
        r = cthtorch.bmm(x, y)
    return r.reshape([size[x] for x in batch + ao + bo]), batch + ao + bo


def _subscript(n):
    # compared and added as torch.functional does, so numpy integers (a sublist from np.arange) serve too
    if n is Ellipsis:
        return _ELL
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _from_sublists(args):
    """einsum(op0, [0, 1], op1, [1, 2], [0, 2]): each operand followed by its subscripts as integers (0-25 are
    A-Z, 26-51 a-z, Ellipsis ...), an optional output list last; as torch.functional turns it to an equation"""
    equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return (equation + "->" + "".join(_subscript(s) for s in args[-1]),) + tuple(args[:-1:2])
    return (equation,) + tuple(args[::2])


@functools.lru_cache(maxsize=256)
def _parse(equation, ndims):
    """The labels of each operand and of the result, from the equation and the operands' ranks: cached, since
    parsing took most of a small product's time (an error is raised again each call: lru_cache keeps none)"""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(ndims):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    n_ell = max([nd - len(t.replace(_ELL, "")) for t, nd in zip(terms, ndims) if _ELL in t] or [0])
    ell_labels = ["\0%d" % i for i in range(n_ell)]   # internal labels, never letters
    labels = [_parse_term(t, nd, k, n_ell, ell_labels) for k, (t, nd) in enumerate(zip(terms, ndims))]
    for t in terms + ([rhs] if arrow else []):
        for c in t.replace(_ELL, ""):
            if not c.isalpha():
                raise RuntimeError("einsum(): invalid subscript given at index %d in the equation string, subscripts "
                                   "must be in [a-zA-Z]" % eq.index(c))
    if arrow:
        out = list(rhs.replace(_ELL, "\1"))
        out = [x for c in out for x in (ell_labels if c == "\1" else [c])]
        for k, c in enumerate(out):
            if c in out[:k] and not c.startswith("\0"):
                raise RuntimeError("einsum(): output subscript %s appears more than once in the output" % c)
            if not any(c in ls for ls in labels):
                raise RuntimeError("einsum(): output subscript %s does not appear in the equation for any input "
                                   "operand" % c)
    else:
        flat = [x for ls in labels for x in ls if not x.startswith("\0")]
        out = ell_labels + sorted(x for x in set(flat) if flat.count(x) == 1)
    # nothing summed and no diagonal, two operands or more: an outer (or batched outer) product, one broadcast
    # mul of the operands' dims laid out in the result's order, as torch's (MulBackward0, a contiguous result).
    # Each operand: the permutation of its dims into that order and their places in the result.
    outer = None
    if len(labels) > 1 and all(len(set(ls)) == len(ls) and set(ls) <= set(out) for ls in labels):
        outer = tuple((tuple(sorted(range(len(ls)), key=lambda d: out.index(ls[d]))),
                       tuple(sorted(out.index(x) for x in ls))) for ls in labels)
    return tuple(tuple(ls) for ls in labels), tuple(out), outer


def einsum(*args):
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], cthtorch.Tensor):
        args = _from_sublists(args)
    if not isinstance(args[0], str):
        raise TypeError("einsum(): argument 'equation' (position 1) must be str, not %s" % type(args[0]).__name__)
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    labels, out, outer = _parse(equation, tuple(op.dim() for op in operands))
    labels = [list(ls) for ls in labels]
    out = list(out)
    # sizes must agree (or be 1, which broadcasts)
    seen = {}
    for k, (ls, op) in enumerate(zip(labels, operands)):
        for lab, s in zip(ls, op.shape):
            if lab in seen and s != seen[lab] and s != 1 and seen[lab] != 1:
                raise RuntimeError("einsum(): subscript %s has size %d for operand %d which does not broadcast with "
                                   "previously seen size %d" % (lab, s, k, seen[lab]))
            if lab not in seen or seen[lab] == 1:
                seen[lab] = s
    if outer is not None:
        r = None
        for op, (perm, places) in zip(operands, outer):
            shape = [1] * len(out)
            for p, d in zip(places, perm):
                shape[p] = op.shape[d]
            v = op.permute(perm).reshape(shape)
            r = v if r is None else r * v
        want = [seen[x] for x in out]
        return r.expand(want) if list(r.shape) != want else r
    ts = []
    for op, ls in zip(operands, labels):
        t, ls = _take_diagonals(op, ls)
        ts.append((t, ls))

    def needed(i):
        """labels still needed after operand i is folded in"""
        return set(out).union(*[set(ls) for _, ls in ts[i + 1:]])
    t, ls = _sum_out(*ts[0], needed(0) | set(ts[1][1] if len(ts) > 1 else ()))
    for i in range(1, len(ts)):
        b, lb = ts[i]
        keep = needed(i)
        t, ls = _sum_out(t, ls, keep | set(lb))
        b, lb = _sum_out(b, lb, keep | set(ls))
        t, ls = _contract(t, ls, b, lb, keep)
    t, ls = _sum_out(t, ls, set(out))
    t = t.permute([ls.index(x) for x in out]) if ls != out else t
    # a label of size 1 in the result may need to broadcast to another operand's size
    want = [seen[x] for x in out]
    return t.expand(want) if list(t.shape) != want else t
