"""The fuser: a run of elementwise float32 ops in a graph becomes one
prim::FusionGroup node whose kernel is a generated C loop, compiled at run
time by the system C compiler and loaded through cffi (as TorchInductor's
CPU backend generates and compiles C++).

The loop is OpenMP-parallel and vectorizable (restrict pointers, one pass,
no temporaries). Kernels are cached on disk by a hash of their source and
flags ($CTHTORCH_CACHE, else ~/.cache/cthtorch). Where no compiler is found
the group runs its subgraph in the interpreter, and the fuser says so once.
At run time the kernel takes contiguous float32 inputs of the traced size
that need no gradient; anything else runs the subgraph, so results and
autograd are always eager's.
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

__all__ = ["fuse_elementwise", "FusedKernel", "cache_dir", "compiler"]

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
_BINARY = {"aten::mul": "a * b", "aten::div": "a / b"}
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


def _make_group(graph, run, shape):
    """Replaces the nodes of run by one prim::FusionGroup."""
    members = set(run)
    inputs, outputs = [], []
    for n in run:
        for v in n.inputs():
            if v.node() not in members and _scalar_of(v) is None and v not in inputs:
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
    group = graph.create("prim::FusionGroup", inputs, len(outputs))
    group.g_("Subgraph", sub)
    group.insertBefore(run[-1].next())
    for o, go in zip(outputs, group.outputs()):
        go.setType(o.type())
        o.replaceAllUsesWith(go)
    for n in reversed(run):
        n.destroy()
    return group


def fuse_elementwise(graph, min_size=2):
    """Groups runs of fusible nodes (constants may sit between them) of one
    shape into prim::FusionGroup nodes; returns how many groups it made."""
    made = 0
    run, shape = [], None

    def flush():
        nonlocal made, run, shape
        if len(run) >= min_size:
            _make_group(graph, run, shape)
            made += 1
        run, shape = [], None
    for n in list(graph.nodes()):
        if n.kind() == "prim::Constant":
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

def _kernel_source(sub):
    """C source of the loop for a FusionGroup's subgraph."""
    names, lines = {}, []
    for i, v in enumerate(sub.inputs()):
        names[v] = "in%d[i]" % i
    for n in sub.nodes():
        if n.kind() == "prim::Constant":
            names[n.output()] = _c_float(_scalar_of(n.output()))
            continue
        k = n.kind()
        a = names[n.inputs()[0]]
        b = names[n.inputs()[1]] if k not in _UNARY else None
        alpha = names[n.inputs()[2]] if k in _BINARY_ALPHA else None
        expr = _UNARY.get(k) or _BINARY.get(k) or _BINARY_ALPHA[k]
        var = "v%d" % len(lines)
        expr = _subst(expr, a, b, alpha)
        lines.append("    const float %s = %s;" % (var, expr))
        names[n.output()] = var
    nin, nout = len(sub.inputs()), len(sub.outputs())
    params = ["int64_t n"] + ["const float *restrict in%d" % i for i in range(nin)] + \
        ["float *restrict out%d" % i for i in range(nout)]
    body = lines + ["    out%d[i] = %s;" % (i, names[v]) for i, v in enumerate(sub.outputs())]
    src = ("#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" + _PRELUDE + "\n"
           "void fused_kernel(%s) {\n"
           "  #pragma omp parallel for simd schedule(static) if (n > 65536)\n"
           "  for (int64_t i = 0; i < n; i++) {\n%s\n  }\n}\n") % (", ".join(params), "\n".join(body))
    decl = "void fused_kernel(%s);" % ", ".join(p.replace("restrict ", "") for p in params)
    return src, decl


def _subst(expr, a, b, alpha):
    """Fills a, b, alpha into an expression template (whole words only)."""
    import re
    table = {"a": "(%s)" % a, "b": "(%s)" % b if b else "", "alpha": "(%s)" % alpha if alpha else ""}
    return re.sub(r"\b(alpha|a|b)\b", lambda m: table[m.group(1)], expr)


_lock = threading.Lock()
_loaded = {}   # source hash -> (ffi, lib)


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


class FusedKernel:
    """What a prim::FusionGroup runs: the compiled loop when its inputs fit,
    its subgraph in the interpreter otherwise."""

    def __init__(self, sub):
        from ._interpreter import GraphExecutor
        self.subgraph = sub
        self.fallback = GraphExecutor(sub)
        self.src, self.decl = _kernel_source(sub)
        t = sub.inputs()[0].type()
        self.shape = tuple(t.sizes())
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        self._built = None
        self.so_path = None

    def _kernel(self):
        if self._built is None:
            b = _build(self.src, self.decl)
            self._built = b if b is not None else False
            if b:
                self.so_path = b[2]
        return self._built

    def __call__(self, *args):
        ok = all(type(a) is cthtorch.Tensor or isinstance(a, cthtorch.Tensor) for a in args) and \
            all(a.dtype == cthtorch.float32 and a.is_contiguous() and a.numel() == self.numel and
                tuple(a.shape) == self.shape and a.device.type == "cpu" for a in args) and \
            not (cthtorch.is_grad_enabled() and any(a.requires_grad for a in args))
        k = self._kernel() if ok else None
        if not k:
            r = self.fallback(*args)
            return r if isinstance(r, tuple) else (r,)
        ffi, lib, _ = k
        outs = tuple(cthtorch.empty(self.shape) for _ in self.subgraph.outputs())
        ptrs = [ffi.cast("float *", a.data_ptr()) for a in args] + \
            [ffi.cast("float *", o.data_ptr()) for o in outs]
        lib.fused_kernel(self.numel, *ptrs)
        return outs
