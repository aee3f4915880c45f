"""The fuser: a run of elementwise float32 ops in a graph, and a trailing
sum or mean over all dims or the last one, becomes one fused node whose
kernel is a generated C loop, compiled at run time by the system C compiler
and loaded through cffi (as TorchInductor's CPU backend generates and
compiles C++). Traced graphs (shapes known) get prim::FusionGroup nodes,
scripted ones prim::TensorExprGroup nodes; both run the same way.

The loop is OpenMP-parallel and vectorizable (restrict pointers, one pass,
no temporaries; a reduction accumulates in double). Kernels are cached on
disk by a hash of their source and flags ($CTHTORCH_CACHE, else
~/.cache/cthtorch). A group's node calls `_C._JitFusedKernel`
(src/python/JitFusedKernel.c), which keeps one plan per input layout and
calls the loop from C; where no compiler is found, for inputs the loop does
not take, or where autograd must record, the group runs its subgraph, so
results and gradients are always eager's. Without a compiler the fuser says
so once.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings

import cthtorch

from . import _ir

__all__ = ["fuse_elementwise", "fuse_scripted", "DynamicFusedKernel", "cache_dir", "compiler"]

# -fno-trapping-math lets gcc turn the selects below into vector blends (no
# FP exceptions are observed anyway); NaN and inf semantics stay IEEE's
_FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-fopenmp", "-shared", "-fPIC"]

# libm's expf/tanhf do not vectorize (without -ffast-math, which would drop
# NaN semantics): these inline ones do. expf: Cephes' range reduction and
# polynomial (relative error ~2e-7); tanh from it, odd Taylor series near 0.
_PRELUDE = r"""
static inline float cth_expf(float x) {
  const float xc = x < -87.3f ? -87.3f : (x > 88.7f ? 88.7f : x);
  const float fl = floorf(xc * 1.44269504088896341f + 0.5f);
  const float r = xc - fl * 0.693359375f + fl * 2.12194440e-4f;
  const float z = r * r;
  const float p = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                   4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;
  const int32_t bits = ((int32_t)fl + 127) << 23;   /* 2^fl */
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return x != x ? x : p * scale;
}

static inline float cth_tanhf(float a) {
  const float e = cth_expf(-2.0f * fabsf(a));
  const float t = copysignf((1.0f - e) / (1.0f + e), a);
  const float a2 = a * a;
  return fabsf(a) < 0.004f ? a * (1.0f + a2 * (-0.333333333f + a2 * 0.133333333f)) : t;
}
"""

# kind -> (number of tensor/scalar operands read, C expression over a, b, alpha)
_UNARY = {
    "aten::sigmoid": "1.0f / (1.0f + cth_expf(-a))", "aten::tanh": "cth_tanhf(a)", "aten::exp": "cth_expf(a)",
    "aten::log": "logf(a)", "aten::neg": "-a", "aten::abs": "fabsf(a)", "aten::sqrt": "sqrtf(a)",
    "aten::relu": "(a != a ? a : (a > 0.0f ? a : 0.0f))", "aten::sin": "sinf(a)", "aten::cos": "cosf(a)",
    "aten::reciprocal": "1.0f / a", "aten::rsqrt": "1.0f / sqrtf(a)", "aten::silu": "a / (1.0f + cth_expf(-a))",
}
_BINARY = {"aten::mul": "a * b", "aten::div": "a / b", "aten::pow": "powf(a, b)"}
_BINARY_ALPHA = {"aten::add": "a + alpha * b", "aten::sub": "a - alpha * b"}


def cache_dir():
    d = os.environ.get("CTHTORCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "cthtorch")
    return os.path.join(d, "fused")


def compiler():
    """The system C compiler (CC, else cc/gcc/clang on PATH), or None."""
    cc = os.environ.get("CC")
    if cc:
        return shutil.which(cc.split()[0]) and cc
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    return None


_warned = [False]


def _warn_no_compiler(why):
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("cthtorch.jit fuser: %s; fused groups run in the interpreter instead" % why)


def _c_float(x):
    x = float(x)
    if x != x:
        return "NAN"
    if x in (float("inf"), float("-inf")):
        return "INFINITY" if x > 0 else "-INFINITY"
    return "%.9gf" % x if "." in "%.9g" % x or "e" in "%.9g" % x else "%.1ff" % x


def _scalar_of(v):
    """A constant operand as a float, or None if v is not one."""
    n = v.node()
    if n.kind() != "prim::Constant":
        return None
    c = n._constant_value()
    if isinstance(c, bool) or c is None:
        return None
    if isinstance(c, (int, float)):
        return float(c)
    if isinstance(c, cthtorch.Tensor) and c.dim() == 0 and c.dtype in (cthtorch.float32, cthtorch.int64,
                                                                        cthtorch.float64, cthtorch.int32):
        return float(c.item())
    return None


def _float_tensor(v, shape):
    t = v.type()
    return isinstance(t, _ir.TensorType) and t.dtype() == cthtorch.float32 and t.sizes() is not None and \
        tuple(t.sizes()) == shape and (t.strides() is None or _contiguous(t.sizes(), t.strides()))


def _contiguous(sizes, strides):
    acc = 1
    for s, st in zip(reversed(sizes), reversed(strides)):
        if s != 1 and st != acc:
            return False
        acc *= s
    return True


def _fusible(n):
    """(shape, tensor operand values) if n can join a group, else None."""
    k = n.kind()
    if k not in _UNARY and k not in _BINARY and k not in _BINARY_ALPHA:
        return None
    out = n.output().type()
    if not isinstance(out, _ir.TensorType) or out.dtype() != cthtorch.float32 or out.sizes() is None \
            or None in out.sizes():
        return None
    shape = tuple(out.sizes())
    ins = n.inputs()
    nops = 1 if k in _UNARY else 2
    if len(ins) != nops + (1 if k in _BINARY_ALPHA else 0):
        return None
    if k in _BINARY_ALPHA and _scalar_of(ins[2]) is None:
        return None
    tensors = []
    for v in ins[:nops]:
        if _scalar_of(v) is not None:
            continue
        if not _float_tensor(v, shape):
            return None
        tensors.append(v)
    if not tensors:
        return None
    return shape, tensors


# ---------------------------------------------------------------- the trailing reduction

_REDUCTIONS = {"aten::sum": False, "aten::mean": True}   # kind -> is a mean
_NOT_CONSTANT = object()


def _const(v):
    n = v.node()
    return n._constant_value() if n.kind() == "prim::Constant" else _NOT_CONSTANT


def _reduction(n):
    """(is_mean, dims or None for all, keepdim) where n is a sum/mean a group
    may end with: no dtype argument, constant dims and keepdim. Whether the
    dims are all of them or the last one is known only with the shapes."""
    k = n.kind()
    if k not in _REDUCTIONS or len(n.outputs()) != 1:
        return None
    ins = n.inputs()
    if len(ins) == 2:             # sum(Tensor self, *, ScalarType? dtype)
        dims, keep, dt = None, False, ins[1]
    elif len(ins) == 4:           # sum.dim_IntList(self, int[1]? dim, bool keepdim, *, ScalarType? dtype)
        dims, keep, dt = _const(ins[1]), _const(ins[2]), ins[3]
    else:
        return None
    if _const(dt) is not None or not isinstance(keep, bool):
        return None
    if dims is not None:
        if not isinstance(dims, (list, tuple)) or not dims or \
                any(type(d) is not int for d in dims) or len(set(dims)) != len(dims):
            return None
        dims = tuple(dims)
    return _REDUCTIONS[k], dims, keep


def _fold_dim_lists(block):
    """A reduction's dims built by prim::ListConstruct of constants (as a
    scripted `x.sum(-1)` is) become one list constant, so the node's
    arguments are constants a group copies in."""
    for n in list(block.nodes()):
        for b in n.blocks():
            _fold_dim_lists(b)
        if n.kind() not in _REDUCTIONS or len(n.inputs()) != 4:
            continue
        lst = n.inputs()[1].node()
        if lst.kind() != "prim::ListConstruct":
            continue
        vals = [_const(v) for v in lst.inputs()]
        if any(type(d) is not int for d in vals):
            continue
        g = n.owningGraph()
        with g.insert_point_guard(n):
            c = g.insertConstant(vals)
        c.setType(lst.output().type())
        n.replaceInput(1, c)
        if not lst.output().uses():
            items = {v.node() for v in lst.inputs()}
            lst.destroy()
            for c in items:
                if not c.output().uses():
                    c.destroy()


def _reduced_shape(S, dims, keep):
    """('all' or 'row', output shape) for a reduction of shape S, or None
    where the dims are neither all of S's nor its last one."""
    nd = len(S)
    if dims is None:
        return "all", (1,) * nd if keep else ()
    if nd == 0 or any(not -nd <= d < nd for d in dims):
        return None
    ds = {d % nd for d in dims}
    if ds == set(range(nd)):
        return "all", (1,) * nd if keep else ()
    if ds == {nd - 1}:
        return "row", S[:-1] + ((1,) if keep else ())
    return None


def _copied_constant(v):
    """Whether a group copies v into its subgraph (a number, a list, a flag,
    or a one-element tensor constant) rather than taking it as an input."""
    n = v.node()
    return n.kind() == "prim::Constant" and (_scalar_of(v) is not None or
                                             not isinstance(n._constant_value(), cthtorch.Tensor))


def _make_group(graph, run, kind="prim::FusionGroup"):
    """Replaces the nodes of run by one group node of that kind."""
    members = set(run)
    inputs, outputs = [], []
    for n in run:
        for v in n.inputs():
            if v.node() not in members and not _copied_constant(v) and v not in inputs:
                inputs.append(v)
    for n in run:
        for o in n.outputs():
            if any(u.user not in members for u in o.uses()):
                outputs.append(o)
    sub = _ir.Graph()
    env = {}
    for v in inputs:
        nv = sub.addInput()
        nv.setType(v.type())
        env[v] = nv
    for n in run:
        for v in n.inputs():
            if v not in env:   # a constant operand: copied into the subgraph
                c = sub.createClone(v.node(), lambda x: x)
                sub.appendNode(c)
                env[v] = c.output()
        c = sub.createClone(n, lambda x: env[x])
        sub.appendNode(c)
        for o, co in zip(n.outputs(), c.outputs()):
            env[o] = co
    for o in outputs:
        sub.registerOutput(env[o])
    group = graph.create(kind, inputs, len(outputs))
    group.g_("Subgraph", sub)
    group.insertBefore(run[-1].next())
    for o, go in zip(outputs, group.outputs()):
        go.setType(o.type())
        o.replaceAllUsesWith(go)
    copied = {v.node() for n in run for v in n.inputs() if v.node() not in members and _copied_constant(v)}
    for n in reversed(run):
        n.destroy()
    for c in copied:
        if not c.output().uses():
            c.destroy()   # copied in and read by nothing else now (a reduction's folded dims)
    return group


def fuse_elementwise(graph, min_size=2):
    """Groups runs of fusible nodes (constants may sit between them) of one
    shape, each ended by a reduction of one of its values where there is
    one, into prim::FusionGroup nodes; returns how many groups it made."""
    _fold_dim_lists(graph.block())
    made = 0
    run, shape = [], None

    def flush():
        nonlocal made, run, shape
        if len(run) >= min_size:
            _make_group(graph, run)
            made += 1
        run, shape = [], None
    for n in list(graph.nodes()):
        if n.kind() == "prim::Constant":
            continue
        r = _reduction(n) if run else None
        if r is not None and n.inputs()[0].node() in run and _float_tensor(n.inputs()[0], shape) and \
                _reduced_shape(shape, r[1], r[2]) is not None:
            run.append(n)   # trailing: the group ends here
            flush()
            continue
        f = _fusible(n)
        if f is None or (shape is not None and f[0] != shape):
            flush()
            if f is None:
                continue
        run.append(n)
        shape = f[0]
    flush()
    return made


# ---------------------------------------------------------------- code generation and loading

def _subst(expr, a, b, alpha):
    """Fills a, b, alpha into an expression template (whole words only)."""
    import re
    table = {"a": "(%s)" % a, "b": "(%s)" % b if b else "", "alpha": "(%s)" % alpha if alpha else ""}
    return re.sub(r"\b(alpha|a|b)\b", lambda m: table[m.group(1)], expr)


def _expr(k, ops):
    """C expression of op k over its operands' expressions."""
    if k == "aten::pow" and ops[1] == "2.0f":
        return "(%s) * (%s)" % (ops[0], ops[0])   # the common square: no libm call, vectorizes
    return _subst(_UNARY.get(k) or _BINARY.get(k) or _BINARY_ALPHA[k], ops[0],
                  ops[1] if k not in _UNARY else None, ops[2] if k in _BINARY_ALPHA else None)


_lock = threading.Lock()
_loaded = {}   # source hash -> (ffi, lib, path)


def _build(src, decl):
    """Compiles (or finds in the cache) and loads a kernel; None without a compiler."""
    cc = compiler()
    key = hashlib.sha256((src + " ".join(_FLAGS) + (cc or "")).encode()).hexdigest()[:24]
    with _lock:
        if key in _loaded:
            return _loaded[key]
        import cffi
        d = cache_dir()
        so = os.path.join(d, "fused_%s.so" % key)
        if not os.path.exists(so):
            if cc is None:
                _warn_no_compiler("no C compiler found (set CC or install cc/gcc/clang)")
                return None
            os.makedirs(d, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=d) as tmp:
                c_path = os.path.join(tmp, "kernel.c")
                with open(c_path, "w") as f:
                    f.write(src)
                out = os.path.join(tmp, "kernel.so")
                r = subprocess.run(cc.split() + _FLAGS + ["-o", out, c_path, "-lm"], capture_output=True,
                                   text=True)
                if r.returncode != 0:
                    _warn_no_compiler("the C compiler failed (%s)" % (r.stderr.strip().splitlines() or ["?"])[-1])
                    return None
                os.replace(out, so)   # atomic: another process may be building the same kernel
        ffi = cffi.FFI()
        ffi.cdef(decl)
        lib = ffi.dlopen(so)
        _loaded[key] = (ffi, lib, so)
        return _loaded[key]


# ---------------------------------------------------------------- groups: shapes known at run time

# A scripted graph's values carry no sizes, so its groups are made on the
# graph's structure (torch's TensorExpr fuser makes prim::TensorExprGroup
# nodes the same way); a traced graph's groups are made where the recorded
# shapes agree. Either group specializes when it runs: per layout of its
# inputs it finds a 2-d view [rows, cols] in which every operand is
# `base + row * row_stride + col` (or a broadcast `+ 0`), checks that the
# group's elementwise outputs all have the broadcast shape (and that a
# reduction is over all of it or its last dim), and compiles that variant
# once. A chunk whose pieces only the group reads is fused too: its pieces
# are pointer offsets into the chunked tensor, so the LSTM step's gate math
# is one kernel over the gates. Anything else (another dtype, autograd,
# a tracer or profiler watching, an unfit layout) runs the subgraph.

def _dyn_fusible(n):
    """Whether n may join a scripted group: an elementwise op over tensors
    (not known to be other than float32) and constant numbers."""
    k = n.kind()
    if k not in _UNARY and k not in _BINARY and k not in _BINARY_ALPHA:
        return False
    ins, outs = n.inputs(), n.outputs()
    nops = 1 if k in _UNARY else 2
    if len(outs) != 1 or len(ins) != nops + (1 if k in _BINARY_ALPHA else 0):
        return False
    if not _dyn_tensor(outs[0]) or (k in _BINARY_ALPHA and _scalar_of(ins[2]) is None):
        return False
    tensors = 0
    for v in ins[:nops]:
        if _dyn_tensor(v):
            tensors += 1
        elif _scalar_of(v) is None:
            return False
    return tensors > 0


def _dyn_tensor(v):
    t = v.type()
    return type(t) is _ir.TensorType and t.dtype() in (None, cthtorch.float32)


def _chunk_pieces(n):
    """The ListUnpack of `aten::chunk(x, constant k, constant dim)` that
    follows n, if n is such a chunk and nothing else reads its list."""
    if n.kind() != "aten::chunk" or len(n.inputs()) != 3 or not _dyn_tensor(n.inputs()[0]):
        return None
    k, d = (v.node()._constant_value() if v.node().kind() == "prim::Constant" else None for v in n.inputs()[1:])
    if not isinstance(k, int) or not isinstance(d, int) or isinstance(k, bool) or k <= 0:
        return None
    uses = n.output().uses()
    if len(uses) != 1 or uses[0].user.kind() != "prim::ListUnpack" or len(uses[0].user.outputs()) != k:
        return None
    return uses[0].user


def fuse_scripted(block, min_ops=2, _nested=False):
    """Groups runs of _dyn_fusible nodes of block (and of the blocks nested
    in it), each ended by a reduction of one of its values where there is
    one, into prim::TensorExprGroup nodes; returns how many it made."""
    if not _nested:
        _fold_dim_lists(block)
    made = 0
    nodes = list(block.nodes())
    for n in nodes:
        for b in n.blocks():
            made += fuse_scripted(b, min_ops, True)
    run = []

    def flush():
        nonlocal made, run
        members = set(run)
        # a chunk is fused only if the group reads all of its pieces' uses
        for n in list(run):
            if n.kind() == "aten::chunk":
                unpack = n.output().uses()[0].user
                if any(u.user not in members for o in unpack.outputs() for u in o.uses()):
                    run = [m for m in run if m is not n and m is not unpack]
                    members = set(run)
        if sum(1 for m in run if m.kind() not in ("aten::chunk", "prim::ListUnpack")) >= min_ops:
            _make_group(run[0].owningGraph(), run, "prim::TensorExprGroup")
            made += 1
        run = []
    i = 0
    while i < len(nodes):
        n = nodes[i]
        i += 1
        if n.kind() == "prim::Constant":
            continue
        unpack = _chunk_pieces(n)
        if unpack is not None and unpack is n.next():
            run += [n, unpack]
            i = nodes.index(unpack) + 1
            continue
        if run and _reduction(n) is not None and _dyn_tensor(n.output()) and n.inputs()[0].node() in run:
            run.append(n)   # trailing: the group ends here
            flush()
            continue
        if _dyn_fusible(n):
            run.append(n)
        else:
            flush()
    flush()
    return made


def _broadcast(a, b):
    if len(a) < len(b):
        a, b = b, a
    b = (1,) * (len(a) - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


class DynamicFusedKernel:
    """What a fused group's node runs: `_C._JitFusedKernel`, which calls,
    per layout of its inputs, the compiled loop this class plans (once per
    layout, from C), and the subgraph where none fits."""

    def __init__(self, sub):
        from ._interpreter import GraphExecutor
        from cthtorch._ops import dispatch
        self.subgraph = sub
        self.fallback = GraphExecutor(sub)
        self.n_out = len(sub.outputs())
        self._pos = {v: i for i, v in enumerate(sub.inputs())}
        self._nodes = [n for n in sub.nodes() if n.kind() != "prim::Constant"]
        self._red = None   # (output index, reduced value, is_mean, dims, keepdim) of the trailing reduction
        outs = list(sub.outputs())
        for n in self._nodes:
            r = _reduction(n)
            if r is not None and n.output() in outs:
                self._red = (outs.index(n.output()), n.inputs()[0]) + r
        self._built = {}
        # a tracer or profiler watching (dispatch._observers non-empty): every op must reach dispatch
        self.run = cthtorch._C._JitFusedKernel(self._planner, self.fallback.run, self.n_out, dispatch._observers)

    @property
    def _plans(self):
        """Layout key -> plan (None where the subgraph runs)."""
        return self.run.plans

    def __call__(self, *args):
        return self.run(*args)

    def step(self, ins, outs):
        """The Python executor's step: reads its inputs' registers, writes its outputs'."""
        run = self.run
        if len(outs) == 1:
            o, = outs

            def fused_step1(regs):
                regs[o] = run(*[regs[i] for i in ins])
            return fused_step1

        def fused_step(regs):
            for i, x in zip(outs, run(*[regs[i] for i in ins])):
                regs[i] = x
        return fused_step

    def _shapes(self, args):
        """Every subgraph value's shape for these inputs, or None where the
        subgraph would not run as one loop (it then says why itself)."""
        shapes = {v: tuple(args[i].shape) for v, i in self._pos.items()}
        for n in self._nodes:
            k = n.kind()
            if k == "aten::chunk" or k in _REDUCTIONS:
                continue
            if k == "prim::ListUnpack":
                ch = n.inputs()[0].node()
                x = shapes[ch.inputs()[0]]
                kk, d = (v.node()._constant_value() for v in ch.inputs()[1:])
                if not -len(x) <= d < len(x) or x[d % len(x)] == 0 or x[d % len(x)] % kk:
                    return None   # unequal (or fewer) pieces
                d %= len(x)
                piece = x[:d] + (x[d] // kk,) + x[d + 1:]
                for o in n.outputs():
                    shapes[o] = piece
                continue
            s = ()
            for v in n.inputs()[:1 if k in _UNARY else 2]:
                if v in shapes:
                    s = _broadcast(s, shapes[v])
                    if s is None:
                        return None
            shapes[n.output()] = s
        return shapes

    def _planner(self, args):
        """What `_C._JitFusedKernel` keeps for a new layout: (rows, columns,
        the layout array's address, the loop's address, the outputs' shapes,
        what keeps those addresses valid), or None (the subgraph runs)."""
        if not all(a.dtype is cthtorch.float32 and a.device.type == "cpu" for a in args):
            return None
        return self._plan(args)

    def _plan(self, args):
        shapes = self._shapes(args)
        if shapes is None:
            return None
        outs = list(self.subgraph.outputs())
        red = self._red
        S = shapes[red[1]] if red is not None else shapes[outs[0]]
        if any(shapes[v] != S for i, v in enumerate(outs) if red is None or i != red[0]):
            return None
        out_shapes = [S] * len(outs)
        red_spec = None
        if red is not None:
            rs = _reduced_shape(S, red[3], red[4])
            numel = 1
            for s in S:
                numel *= s
            if rs is None or numel == 0:
                return None   # not over all dims or the last one; an empty input's sum/mean: the subgraph
            out_shapes[red[0]] = rs[1]
            red_spec = (red[0], rs[0] == "row", red[2])
        nd = len(S)
        strides = [args[i].stride() for i in range(len(args))]
        leaves, leaf_index, names, lines = [], {}, {}, []

        def emit(v, shift, vshape):
            """C expression of v at the loop's position moved by shift (in v's
            dims); vshape: v's extent there (1 where broadcast)."""
            key = (v, shift, vshape)
            if key in names:
                return names[key]
            n = v.node()
            if v in self._pos:
                i = self._pos[v]
                off = sum(a * st for a, st in zip(shift, strides[i])) * 4
                lk = (i, off, vshape)
                if lk not in leaf_index:
                    leaf_index[lk] = len(leaves)
                    leaves.append(lk)
                expr = "L%d" % leaf_index[lk]
            elif n.kind() == "prim::Constant":
                return _c_float(_scalar_of(v))
            elif n.kind() == "prim::ListUnpack":
                ch = n.inputs()[0].node()
                x = ch.inputs()[0]
                d = ch.inputs()[2].node()._constant_value() % len(shapes[x])
                j = n.outputs().index(v)
                sh = list(shift)
                sh[d] += j * shapes[v][d]
                expr = emit(x, tuple(sh), vshape)
            else:
                k = n.kind()
                ops = []
                for u in n.inputs()[:1 if k in _UNARY else 2] + (n.inputs()[2:3] if k in _BINARY_ALPHA else []):
                    if u not in shapes:   # a constant number
                        ops.append(_c_float(_scalar_of(u)))
                        continue
                    us, pad = shapes[u], len(shapes[v]) - len(shapes[u])
                    ops.append(emit(u, tuple(0 if us[d] == 1 else shift[d + pad] for d in range(len(us))),
                                    tuple(1 if us[d] == 1 else vshape[d + pad] for d in range(len(us)))))
                lines.append("      const float v%d = %s;" % (len(lines), _expr(k, ops)))
                expr = "v%d" % (len(lines) - 1)
            names[key] = expr
            return expr
        results = [emit(red[1] if red is not None and i == red[0] else o, (0,) * nd, S) for i, o in enumerate(outs)]
        C = S[-1] if nd else 1
        R = 1
        for s in S[:-1]:
            R *= s
        operands, kinds = [], []
        for i, off, vshape in leaves:
            # strides of the leaf's view broadcast to S; the row dims must collapse to one stride
            pad = nd - len(vshape)
            est = [0] * pad + [0 if sz == 1 else st for sz, st in zip(vshape, strides[i])]
            inner = est[-1] if nd and S[-1] != 1 else 0
            if inner not in (0, 1):
                return None
            rs, acc, rs_set = 0, 1, False
            for d in range(nd - 2, -1, -1):
                if S[d] == 1:
                    continue
                if not rs_set:
                    rs, rs_set = est[d], True
                elif est[d] != rs * acc:
                    return None
                acc *= S[d]
            kinds.append(inner)
            operands.append((i, off, rs))
        if (red_spec is None or not red_spec[1]) and \
                all((k == 1 and (R == 1 or rs == C)) or (k == 0 and rs == 0) for k, (_, _, rs) in zip(kinds, operands)):
            C, R = C * R, 1   # one flat run of memory (or a scalar) each: one long row
        src, decl = _dyn_kernel_source(lines, results, kinds, len(args), red_spec)
        kern = self._built.get(src)
        if kern is None:
            b = _build(src, decl)
            kern = self._built[src] = (b[0], b[1]) if b else False
        if not kern:
            return None
        ffi, lib = kern
        layout = ffi.new("int64_t[]", [x for op in operands for x in op] or [0])
        return (R, C, int(ffi.cast("uintptr_t", layout)), int(ffi.cast("uintptr_t", lib.fused_kernel)),
                tuple(out_shapes), (layout, lib, ffi))


def _dyn_kernel_source(lines, results, kinds, n_in, red=None):
    """C source of one variant of a group's loop. Its arguments: rows,
    columns, the layout (each leaf's input, byte offset and row stride: an
    array made once per layout), and the inputs' then the outputs' addresses.
    Leaf m is read at its row's [c] (kinds[m] 1) or [0] (0). red: (output
    index, per row?, mean?) of the trailing reduction, which sums in double
    each row's piece (the row function's result) and writes a float."""
    nl, nout = len(kinds), len(results)
    full = [i for i in range(nout) if red is None or i != red[0]]
    body = ["      const float L%d = %s;" % (m, "in%d[c]" % m if kinds[m] else "in%d[0]" % m) for m in range(nl)] + \
        lines + ["      out%d[c] = %s;" % (i, results[i]) for i in full]
    leaf = ["    const float *restrict in%d = (const float *)(a[L[%d]] + L[%d]) + r * L[%d] + lo * %d;"
            % (m, 3 * m, 3 * m + 1, 3 * m + 2, kinds[m]) for m in range(nl)]
    outs = ["    float *restrict out%d = (float *)a[%d] + r * C + lo;" % (i, n_in + i) for i in full]
    head = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" + _PRELUDE + "\n"
    args = "int64_t R, int64_t C, const int64_t *L, const uintptr_t *a"
    if red is None:
        src = (head + "static inline void row(int64_t r, int64_t lo, int64_t n, int64_t C, const int64_t *L, "
               "const uintptr_t *a) {\n%s\n"
               "    #pragma omp simd\n    for (int64_t c = 0; c < n; c++) {\n%s\n    }\n}\n\n"
               "void fused_kernel(%s) {\n"
               "  if (R * C <= 65536) {   /* small: no thread team (its start costs more than the loop) */\n"
               "    for (int64_t r = 0; r < R; r++) row(r, 0, C, C, L, a);\n"
               "  } else if (R == 1) {   /* one long row: split across threads */\n"
               "    const int64_t B = 16384, nb = (C + B - 1) / B;\n"
               "    #pragma omp parallel for schedule(static)\n"
               "    for (int64_t blk = 0; blk < nb; blk++)\n"
               "      row(0, blk * B, C - blk * B < B ? C - blk * B : B, C, L, a);\n"
               "  } else {\n"
               "    #pragma omp parallel for schedule(static)\n"
               "    for (int64_t r = 0; r < R; r++) row(r, 0, C, C, L, a);\n"
               "  }\n}\n") % ("\n".join(leaf + outs), "\n".join(body), args)
    else:
        j, per_row, mean = red
        body.append("      acc += (double)(%s);" % results[j])
        src = (head + "static inline double row(int64_t r, int64_t lo, int64_t n, int64_t C, const int64_t *L, "
               "const uintptr_t *a) {\n%s\n    double acc = 0.0;\n"
               "    #pragma omp simd reduction(+:acc)\n    for (int64_t c = 0; c < n; c++) {\n%s\n    }\n"
               "    return acc;\n}\n\n"
               "void fused_kernel(%s) {\n"
               "  float *res = (float *)a[%d];\n"
               "  if (%d && R > 1) {   /* over the last dim: one result per row */\n"
               "    #pragma omp parallel for schedule(static) if (R * C > 65536)\n"
               "    for (int64_t r = 0; r < R; r++) res[r] = (float)(row(r, 0, C, C, L, a)%s);\n"
               "  } else if (R == 1) {   /* over all of one long row: blocks across threads */\n"
               "    const int64_t B = 16384, nb = (C + B - 1) / B;\n"
               "    double t = 0.0;\n"
               "    #pragma omp parallel for schedule(static) reduction(+:t) if (C > 65536)\n"
               "    for (int64_t blk = 0; blk < nb; blk++)\n"
               "      t += row(0, blk * B, C - blk * B < B ? C - blk * B : B, C, L, a);\n"
               "    res[0] = (float)(t%s);\n"
               "  } else {\n"
               "    double t = 0.0;\n"
               "    #pragma omp parallel for schedule(static) reduction(+:t) if (R * C > 65536)\n"
               "    for (int64_t r = 0; r < R; r++) t += row(r, 0, C, C, L, a);\n"
               "    res[0] = (float)(t%s);\n"
               "  }\n}\n") % ("\n".join(leaf + outs), "\n".join(body), args, n_in + j, 1 if per_row else 0,
                              " / (double)C" if mean else "", " / (double)C" if mean else "",
                              " / (double)(R * C)" if mean else "")
    return src, "void fused_kernel(%s);" % args
