"""cthtorch's fuzzer: no input may crash the process, hang it, or leak a SystemError.

    python tools/fuzz.py [--calls N] [--seed S] [--batch B] [--timeout T]

Every call is Python source text (`torch.add(torch.randn((2, 3)), 2**63)`), generated
from a seed, so a finding prints as a standalone reproducer. Arguments are typed from
the op declarations (src/ATen/declarations/*.yaml: plausible and hostile values per
type) for most calls, and mixed at random from one pool of values for the rest, over
the callables of _C, _C._VariableFunctions, _C._nn, cthtorch.*, nn.functional, linalg,
special, fft and the Tensor methods (found by introspection).

Calls run in batches in a child process (RLIMIT_AS caps what it may allocate; under
ASan, where address-space limits cannot work, ASAN_OPTIONS caps malloc instead). The
child reports each call's start and end on a pipe, so a crash or a hang points at one
call; that call is rerun alone in a fresh child, and when it does not fail alone the
batch prefix before it is bisected to the shortest run of calls that does.
A finding is a crash (signal, or a sanitizer report), a hang, or a SystemError.
Exit status: 0 when nothing was found, 1 otherwise.
"""
import argparse
import glob
import inspect
import json
import os
import random
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

PRELUDE = "import math\nimport numpy as np\nimport cthtorch as torch\nfrom cthtorch import _C\nimport cthtorch.nn.functional as F\n"

# Names whose legit effect is outside the process or on its global wiring: files,
# network, processes, threads, sleeping, or the default device/tensor class.
SKIP = re.compile(r"(^|\.)(save|load|hub|distributed|multiprocessing|set_num_threads|set_num_interop_threads"
                  r"|from_file|to_file|tofile|compile|jit|share_memory_|_share_memory_|_shm_handle"
                  r"|_tensor_from_shm|_empty_shared|is_shared|_is_shared|set_default_device|set_default_tensor_type"
                  r"|sleep|_set_dispatch_observer|_set_tensor_class|_set_return_types|_set_sparse_dispatch"
                  r"|pin_memory|cuda|_lazy|__getattr__|__del__|__init_subclass__|__subclasshook__"
                  r"|__getattribute__|__class__|__reduce_ex__|__reduce__|__new__|__init__|__setstate__"
                  r"|__dir__|__sizeof__|__format__|register_.*hook|apply_|map_|map2_)$")

DTYPES = ["torch.float32", "torch.float64", "torch.int64", "torch.int32", "torch.int16", "torch.int8",
          "torch.uint8", "torch.bool", "torch.float16", "torch.bfloat16"]
FLOAT_DTYPES = DTYPES[:2] + DTYPES[8:]
SHAPES = [(), (0,), (1,), (3,), (5,), (2, 3), (3, 3), (2, 0, 3), (1, 3, 4), (2, 3, 4), (2, 3, 4, 5), (1, 1, 1, 1, 1),
          (4, 1, 5), (2, 2, 5, 5)]
# Ints that must be refused or handled, never overflow. The mid-range ones (2**31) would be
# legit multi-GB sizes, which RLIMIT_AS refuses cleanly but nothing caps under ASan.
HOSTILE_INTS = ["2**63", "-2**63", "2**63-1", "2**64", "10**30", "-2**63-1", "np.int64(2)", "np.uint64(2**63)",
                "np.int32(-1)", "True", "1.5", "None", "torch.tensor(2)", "'a'", "float('nan')"]
if not ASAN:
    HOSTILE_INTS += ["2**31", "-2**31", "2**32", "10**9"]
SCALARS = ["0", "1", "-1", "2.5", "-0.5", "float('nan')", "float('inf')", "-float('inf')", "True", "False",
           "2**63", "-2**63", "2**64", "1e308", "1e-320", "np.float32(1.5)", "np.int64(3)", "torch.tensor(2.)",
           "torch.tensor(3)", "1+2j", "None"]
STRS = ["'mean'", "'sum'", "'none'", "'reflect'", "'replicate'", "'circular'", "'constant'", "'fro'", "'nuc'",
        "'bilinear'", "'nearest'", "'ortho'", "'forward'", "'backward'", "'tanh'", "'floor'", "'trunc'",
        "'left'", "'right'", "'same'", "'valid'", "''", "'xyz'", "'cpu'", "'L'", "'reduced'", "'complete'"]
HOSTILE_ANY = ["None", "object()", "'abc'", "[]", "[[1, 2], [3]]", "{}", "()", "(1, None)", "[1.5, 2]",
               "np.zeros((2, 3))", "np.array(2**63, dtype=np.uint64)", "slice(1, 2)", "Ellipsis",
               "torch.float32", "torch.device('cpu')", "torch.Size([2, 3])", "torch.Generator()",
               "lambda *a: 0", "b'ab'", "float('nan')", "2**100"]


class Gen:
    """Source text of plausible and hostile values, drawn from one random.Random."""

    def __init__(self, rng, tame=False):
        self.r = rng
        # tame: no value that overflows int64 (to look past the argument parser's known gaps)
        self.wild = (lambda v: not (isinstance(v, str) and re.search(r"2\*\*6[34]|10\*\*30|uint64|2\*\*100", v))) if tame else (lambda v: True)

    def p(self, x):
        return self.r.random() < x

    def choice(self, xs):
        return self.r.choice([x for x in xs if self.wild(x)] or xs)

    def shape(self):
        return self.choice(SHAPES)

    def tensor(self, shape=None, dtype=None):
        r = self.r
        shape = self.shape() if shape is None else tuple(shape)
        dtype = dtype or self.choice(DTYPES)
        numel = 1
        for s in shape:
            numel *= s
        kind = r.randrange(6)
        if kind == 0:
            e = "torch.randn(%r, dtype=torch.float64).mul(3).to(%s)" % (shape, dtype)
        elif kind == 1:
            e = "torch.randint(-4, 5, %r).to(%s)" % (shape, dtype)
        elif kind == 2:
            e = "torch.arange(%d).reshape(%r).to(%s)" % (numel, shape, dtype)
        elif kind == 3:
            e = "torch.full(%r, %s).to(%s)" % (shape, self.choice(
                ["float('nan')", "float('inf')", "-1.0", "0.0", "1e30", "2.0**40", "-128.0", "255.0"]), dtype)
        elif kind == 4 and shape:
            # the same logical shape with reversed (non-contiguous) strides
            rev = tuple(reversed(shape))
            perm = tuple(range(len(shape) - 1, -1, -1))
            e = "torch.randn(%r).to(%s).permute(%r)" % (rev, dtype, perm)
        elif kind == 5 and shape:
            if numel == 0 or all(s <= 1 for s in shape):
                # huge strides are legit where no step is ever taken
                strides = tuple(self.choice([0, 2**40, 2**60, 1]) for _ in shape)
                e = "torch.zeros(1, dtype=%s).as_strided(%r, %r)" % (dtype, shape, strides)
            else:
                # broadcast (stride 0) view
                base = tuple(1 if self.p(0.5) else s for s in shape)
                e = "torch.randn(%r).to(%s).expand(%r)" % (base, dtype, shape)
        else:
            e = "torch.tensor(%s, dtype=%s)" % (self.choice(["1.5", "-3", "0", "float('nan')", "255"]), dtype)
        if self.p(0.12):
            e = self.odd_layout(e, shape, dtype)
        if dtype in FLOAT_DTYPES[:2] and self.p(0.15):
            e += ".requires_grad_()"
        return e

    def odd_layout(self, e, shape, dtype):
        """The same values in a layout kernels tend to miss: a strided, sliced-empty,
        0-d or storage-offset view, the dtype's extremes, or another device's tensor."""
        r = self.r
        k = r.randrange(6)
        if k == 0:      # every other element of a twice-as-wide tensor: strided, offset 1
            return "torch.cat([%s.unsqueeze(-1)] * 2, -1).flatten(-2)[..., 1::2]" % e if shape else e
        if k == 1:      # a zero-size slice of it, keeping its strides
            return "%s[..., :0]" % e if shape else "%s.reshape(1)[:0]" % e
        if k == 2:      # one element of it as a 0-d view (offset into the storage)
            return "%s.reshape(-1)[-1]" % e if self.numel(shape) else e
        if k == 3:      # the dtype's extreme values
            lim = "iinfo" if dtype not in FLOAT_DTYPES and dtype != "torch.bool" else "finfo"
            if dtype == "torch.bool":
                return e
            return "torch.full(%r, torch.%s(%s).%s, dtype=%s)" % (shape, lim, dtype, self.choice(["max", "min"]), dtype)
        if k == 4:      # a tensor on the meta device (no data), or a 'cuda' request
            return "torch.empty(%r, dtype=%s, device=%s)" % (shape, dtype, self.choice(["'meta'", "'cuda'"]))
        return "%s.transpose(0, -1)" % e if len(shape) > 1 else e

    @staticmethod
    def numel(shape):
        n = 1
        for s in shape:
            n *= s
        return n

    def int_(self, hostile=0.25, lo=-2, hi=4):
        if self.p(hostile):
            return self.choice(HOSTILE_INTS)
        return str(self.r.randint(lo, hi))

    def intlist(self, n=None, base=None):
        r = self.r
        if self.p(0.2):
            return self.choice(["[2**63]", "[-1]", "[-5, 2]", "np.zeros(3)", "np.array([2, 3])", "torch.tensor([2, 3])",
                                "(2, None)", "2", "torch.Size([2, 3])", "[2**62, 4]", "[10**30]",
                                "[np.uint64(2**63)]", "'ab'", "[1.5]", "[True, 2]", "[]", "[2**31-1, 2**31-1, 4]",
                                "[np.int64(2), np.int32(3)]", "[torch.tensor(2), 3]", "[-2**63]"])
        if base is not None and self.p(0.5):
            return repr(list(base))
        n = r.randint(0, 4) if n is None else n
        return repr([r.randint(-2, 4) for _ in range(n)])

    def scalar(self):
        return self.choice(SCALARS) if self.p(0.5) else repr(round(self.r.uniform(-3, 3), 2))

    def float_(self):
        return self.choice(SCALARS[:14]) if self.p(0.4) else repr(round(self.r.uniform(-1, 3), 3))

    def value(self, typ, name, base):
        """Source text for a declared parameter of type `typ` named `name`."""
        if self.p(0.04):
            return self.choice(HOSTILE_ANY)
        opt = typ.endswith("?")
        t = typ.rstrip("?")
        if opt and self.p(0.3):
            return "None"
        if t == "Tensor":
            if name in ("index", "indices", "target") and self.p(0.6):
                return self.tensor(base if self.p(0.5) else None, "torch.int64")
            return self.tensor(base if self.p(0.7) else None)
        if t in ("Tensor[]", "Tensor?[]"):
            return "[%s]" % ", ".join(self.tensor(base if self.p(0.7) else None) for _ in range(self.r.randint(0, 3)))
        if t == "int":
            if name in ("dim", "dim0", "dim1", "start_dim", "end_dim", "source", "destination", "axis"):
                if self.p(0.05):
                    return self.choice(["64", "-65", "2**31", "-2**31", "100"])
                return self.int_(0.2, -4, 4)
            return self.int_()
        if t.startswith("int["):
            if name in ("dim", "dims") and self.p(0.6):
                return self.int_(0.2, -3, 3) if self.p(0.5) else self.intlist(self.r.randint(0, 2))
            if self.p(0.3):
                return self.int_(0.2, 0, 3)
            n = t[4:-1]
            return self.intlist(int(n) if n and self.p(0.8) else None, base)
        if t == "Scalar":
            return self.scalar()
        if t == "float":
            return self.float_()
        if t == "bool":
            return self.choice(["True", "False"] * 6 + ["2", "None", "np.bool_(True)", "torch.tensor(True)"])
        if t == "ScalarType":
            return self.choice(DTYPES + ["torch.complex64", "int", "float", "bool", "'float32'"])
        if t == "str":
            return self.choice(STRS)
        if t == "Generator":
            return self.choice(["torch.Generator()", "torch.Generator().manual_seed(3)", "torch.default_generator"])
        if t == "Device":
            return self.choice(["'cpu'", "torch.device('cpu')", "'cuda'", "'meta'", "'cpu:1'", "0", "'xpu'"])
        if t == "Layout":
            return self.choice(["torch.strided", "torch.sparse_coo", "torch.sparse_csr"])
        if t == "MemoryFormat":
            return self.choice(["torch.contiguous_format", "torch.channels_last", "torch.preserve_format",
                                "torch.channels_last_3d"])
        return self.any(base)

    def any(self, base=None):
        k = self.r.randrange(8)
        if k <= 2:
            return self.tensor(base if self.p(0.6) else None)
        if k == 3:
            return self.int_()
        if k == 4:
            return self.scalar()
        if k == 5:
            return self.intlist(base=base)
        if k == 6:
            return self.choice(DTYPES + STRS)
        return self.choice(HOSTILE_ANY)


def parse_declarations():
    """{name: [(params, kwonly_from, module, variants, inplace, out)]} from the YAML."""
    import yaml
    decls = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "ATen", "declarations", "*.yaml"))):
        for d in yaml.safe_load(open(path)) or []:
            sig = d["func"]
            name = sig[:sig.index("(")].split(".")[0]
            params, kw = [], None
            head = sig.split("->")[0]
            for a in head[head.index("(") + 1:head.rindex(")")].split(","):
                a = a.strip()
                if a == "*":
                    kw = len(params)
                elif a:
                    typ, rest = a.split(None, 1)
                    pname, _, default = rest.partition("=")
                    params.append((typ, pname.strip(), default.strip() or None))
            variants = [v.strip() for v in d.get("variants", "function, method").split(",")]
            decls.setdefault(name, []).append(
                (params, len(params) if kw is None else kw, d.get("module"), variants,
                 bool(d.get("inplace")), bool(d.get("out"))))
    return decls


# Parameter-name hints for callables with no declaration (Python composites).
NAME_TYPES = [
    (r"^(input|other|tensor|self|weight|bias|target|x|x1|x2|y|A|B|b|LU|mat\d?|vec\d?|src|values|mask|grad.*|"
     r"log_probs|targets|running_.*|anchor|positive|negative|boundaries|sorted_sequence|end|start_?t?|"
     r"query|key|value|theta|grid|indices|index|offsets|per_sample_weights|q|k|v|tau|elements|test_elements)$", "Tensor"),
    (r"^(tensors|inputs|seq|sequences|arrays)$", "Tensor[]"),
    (r"^(dim|dim0|dim1|axis|ndim|n|k|num_classes|groups|offset|diagonal|chunks|sections|steps|bins|num_samples"
     r"|minlength|upscale_factor|downscale_factor|ignore_index|blank|num_groups|padding_idx|N|M|m|row|col)$", "int"),
    (r"^(dims|size|shape|kernel_size|stride|padding|dilation|output_size|output_padding|pad|normalized_shape"
     r"|split_size_or_sections|repeats|sizes|s|output_ratio)$", "int[]"),
    (r"^(p|eps|alpha|beta|lr|momentum|negative_slope|lambd|threshold|min_val|max_val|margin|rtol|atol|"
     r"scale|value|min|max|exponent|delta|rcond|tol|ord|correction|unbiased)$", "Scalar"),
    (r"^(dtype|out_dtype)$", "ScalarType?"),
    (r"^(reduction|mode|padding_mode|norm|rounding_mode|approximate|side|UPLO|driver|indexing|interpolation)$", "str"),
    (r"^(generator)$", "Generator?"),
    (r"^(device)$", "Device?"),
    (r"^(keepdim|training|inplace|upper|left|descending|stable|sorted|return_inverse|return_counts|"
     r"align_corners|ceil_mode|count_include_pad|return_indices|unitriangular|transpose|hermitian|"
     r"full_matrices|some|compute_uv|requires_grad|log_target|full|center|onesided|right|out_int32)$", "bool"),
]


def guess_type(pname, default):
    for pat, typ in NAME_TYPES:
        if re.match(pat, pname):
            return typ
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    return None


def list_targets():
    """(expr prefix, name, kind) for every callable to fuzz: kind 'fn' or 'method'."""
    import cthtorch as torch
    import cthtorch.nn.functional as F
    C = torch._C
    spaces = [("_C", C), ("_C._VariableFunctions", C._VariableFunctions), ("_C._nn", C._nn),
              ("torch", torch), ("F", F), ("torch.linalg", torch.linalg), ("torch.special", torch.special),
              ("torch.fft", torch.fft)]
    for sub in ("_fft", "_linalg", "_special"):
        if hasattr(C, sub):
            spaces.append(("_C." + sub, getattr(C, sub)))
    out = []
    for prefix, mod in spaces:
        for n in sorted(dir(mod)):
            if (n.startswith("__") and prefix != "torch") or SKIP.search(n):
                continue
            try:
                obj = getattr(mod, n)
            except Exception:
                continue
            if callable(obj) and not inspect.ismodule(obj):
                out.append((prefix, n, "fn", obj))
    for n in sorted(dir(torch.Tensor)):
        if SKIP.search(n):
            continue
        obj = getattr(torch.Tensor, n, None)
        if callable(obj) and not isinstance(obj, type):
            out.append(("", n, "method", obj))
    return out


class Program:
    """Turns (seed, N) into N calls as source text, deterministically."""

    def __init__(self, seed, exclude=None, tame=False):
        self.rng = random.Random(seed)
        self.g = Gen(self.rng, tame)
        self.decls = parse_declarations()
        self.targets = [(p, n, k, self.signature(o)) for p, n, k, o in list_targets()
                        if not (exclude and re.search(exclude, n))]
        self.methods = {n for p, n, k, _ in self.targets if k == "method"}

    @staticmethod
    def signature(obj):
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
        ps = []
        for p in sig.parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            d = None if p.default is p.empty else p.default
            ps.append((p.name, d, p.default is p.empty, p.kind == p.KEYWORD_ONLY))
        return ps

    def declared_call(self, prefix, name, kind, decl):
        g = self.g
        params, kw, module, variants, inplace, has_out = decl
        base = g.shape()
        args, kwargs, skipped = [], [], False
        for i, (typ, pname, default) in enumerate(params):
            if kind == "method" and i == 0 and pname == "self":
                continue
            if default is not None and g.p(0.35):
                skipped = True    # leave the default: what follows goes by keyword
                continue
            v = g.value(typ, pname, base)
            if i >= kw or skipped:
                kwargs.append("%s=%s" % (pname, v))
            else:
                args.append(v)
        if has_out and g.p(0.1):
            kwargs.append("out=%s" % g.tensor(base if g.p(0.5) else None))
        recv = None
        if kind == "method" or prefix == "":
            recv = g.tensor(base if g.p(0.8) else None)
        return args, kwargs, recv

    def guessed_call(self, sig):
        g = self.g
        base = g.shape()
        args, kwargs = [], []
        for pname, default, required, kwonly in sig:
            if not required and g.p(0.5):
                continue
            typ = guess_type(pname, default)
            v = g.value(typ, pname, base) if typ else g.any(base)
            if kwonly or (not required and g.p(0.5)):
                kwargs.append("%s=%s" % (pname, v))
            else:
                args.append(v)
        return args, kwargs

    def call(self):
        g = self.g
        prefix, name, kind, sig = g.choice(self.targets)
        stem = name[:-1] if name.endswith("_") and not name.endswith("__") else name
        stem = stem.lstrip("_") if stem.startswith("_") and stem.lstrip("_") in self.decls else stem
        decls = self.decls.get(name) or self.decls.get(stem)
        recv = None
        if decls and g.p(0.75):
            args, kwargs, recv = self.declared_call(prefix, name, kind, g.choice(decls))
        elif sig is not None and g.p(0.75):
            args, kwargs = self.guessed_call(sig)
        else:
            args = [g.tensor() if g.p(0.7) else g.any()] + [g.any() for _ in range(self.rng.randint(0, 3))]
            kwargs = []
        if g.p(0.03):
            kwargs.append("out=%s" % g.choice(["torch.empty(0)", "torch.empty((2, 3)).t()", "torch.empty((), dtype=torch.int8)",
                                               "torch.empty(3).expand(2, 3)", "torch.empty(0, device='meta')", "None"]))
        if kind == "method":
            recv = recv or g.tensor()
            if not name.endswith("_") and name + "_" in self.methods and g.p(0.15):
                name += "_"          # the in-place twin, on whatever layout the receiver has
            fn = "%s.%s" % (recv, name)
        else:
            fn = "%s.%s" % (prefix, name)
        return "%s(%s)" % (fn, ", ".join(args + kwargs))

    def calls(self, n):
        return [self.call() for _ in range(n)]


# ---------------------------------------------------------------- the child
CHILD = r"""
import os, sys, warnings
warnings.simplefilter('ignore')
rep = os.fdopen(int(sys.argv[1]), 'w', buffering=1)
calls = [l.rstrip('\n').replace('\\n', '\n') for l in open(sys.argv[2])]
ns0 = {}
exec(compile(%r, '<prelude>', 'exec'), ns0)
import faulthandler
faulthandler.enable()
for i, code in enumerate(calls):
    rep.write('S %%d\n' %% i)
    ns = dict(ns0)
    kind = 'ok'
    try:
        r = eval(compile(code, '<call %%d>' %% i, 'eval'), ns)
        if hasattr(r, 'dim') and callable(r.dim) and r.numel() < 100:
            repr(r)                     # printing walks the result's strides too
        del r
    except SystemError as e:
        kind = 'SystemError: ' + str(e).replace('\n', ' ')[:300]
    except BaseException as e:
        kind = type(e).__name__
    rep.write('E %%d %%s\n' %% (i, kind))
rep.write('DONE\n')
""" % PRELUDE


def child_env():
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore",
               PYTHONPATH=ROOT + os.pathsep + env.get("PYTHONPATH", ""))
    if ASAN:
        # RLIMIT_AS cannot work under ASan (it reserves terabytes of shadow): cap malloc instead
        env["ASAN_OPTIONS"] = ("detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=768:"
                               + env.get("ASAN_OPTIONS", ""))
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:" + env.get("UBSAN_OPTIONS", "")
    return env


def run_batch(calls, timeout, mem_mb):
    """Runs calls in one child. Returns (outcomes, failure) where outcomes[i] is the
    kind each finished call ended with and failure is None or (index, 'crash'|'hang', detail)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calls")
        with open(path, "w") as fh:
            fh.write("\n".join(c.replace("\n", "\\n") for c in calls) + "\n")
        errpath = os.path.join(tmp, "stderr")
        r, w = os.pipe()

        def limit():
            os.setsid()
            if not ASAN and mem_mb:
                resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        with open(errpath, "w") as err:
            proc = subprocess.Popen([sys.executable, "-c", CHILD, str(w), path], pass_fds=(w,), cwd=tmp,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    env=child_env(), preexec_fn=limit)
        os.close(w)
        outcomes, started, buf, failure = [], None, b"", None
        t0 = time.monotonic()
        while True:
            ready, _, _ = select.select([r], [], [], 1.0)
            if ready:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    line = line.decode()
                    if line.startswith("S "):
                        started, t0 = int(line[2:]), time.monotonic()
                    elif line.startswith("E "):
                        outcomes.append(line.split(" ", 2)[2])
                        started = None
            elif time.monotonic() - t0 > (timeout if outcomes or started is not None else max(timeout, 120)):
                # (the import before the first call may take long on a loaded machine)
                os.killpg(proc.pid, signal.SIGKILL)
                failure = (started if started is not None else len(outcomes), "hang", "no answer in %gs" % timeout)
                break
        os.close(r)
        rc = proc.wait()
        errtext = open(errpath, errors="replace").read()
        sanitizer = re.search(r"(ERROR: AddressSanitizer.*|runtime error:.*)", errtext)
        if failure is None and (rc != 0 or sanitizer) and len(outcomes) < len(calls) + (not sanitizer):
            idx = started if started is not None else len(outcomes)
            what = ("signal %s" % signal.Signals(-rc).name) if rc < 0 else "exit %d" % rc
            failure = (idx, "crash", (sanitizer.group(1)[:200] + " / " if sanitizer else "") + what)
        elif failure is None and sanitizer:
            # UBSan reports and goes on: blame the batch's last call until bisected
            failure = (len(calls) - 1, "crash", sanitizer.group(1)[:200])
        return outcomes, failure


def fails(calls, timeout, mem_mb, kind):
    _, f = run_batch(calls, timeout * (2 if kind == "hang" else 1), mem_mb)
    return f is not None and f[1] == kind and f[0] == len(calls) - 1


def minimize(calls, idx, kind, timeout, mem_mb):
    """The shortest run of calls ending at calls[idx] that still fails `kind`."""
    last = calls[idx]
    if fails([last], timeout, mem_mb, kind):
        return [last]
    prefix = calls[:idx]
    if not fails(prefix + [last], timeout, mem_mb, kind):
        return None                                   # flaky: not reproducible
    lo, hi = 0, len(prefix)                           # prefix[lo:] + last fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(prefix[mid:] + [last], timeout, mem_mb, kind):
            lo = mid
        else:
            hi = mid
    seq = prefix[lo:]
    # drop the calls that do not matter, halves first (delta debugging), within a budget of runs
    chunk, budget = max(1, len(seq) // 2), 40
    while seq and budget > 0:
        i, removed = 0, False
        while i < len(seq) and budget > 0:
            trial = seq[:i] + seq[i + chunk:]
            budget -= 1
            if fails(trial + [last], timeout, mem_mb, kind):
                seq, removed = trial, True
            else:
                i += chunk
        if chunk == 1 and not removed:
            break
        chunk = max(1, chunk // 2)
    return seq + [last]


def target_of(code):
    """The callable a call line calls: `torch.add`, or `Tensor.view` for a method on a built tensor."""
    import ast
    try:
        f = ast.parse(code, mode="eval").body.func
    except (SyntaxError, AttributeError):
        return code[:40]
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call):
        return "Tensor." + f.attr
    return ast.unparse(f)


def fuzz(n, seed, batch=400, timeout=15.0, mem_mb=1024, log=None, exclude=None, tame=False):
    """Generates n calls from seed and runs them: ({kind: count}, [(kind, detail, reproducing calls)])."""
    return fuzz_calls(Program(seed, exclude, tame).calls(n), batch, timeout, mem_mb, log)


def fuzz_calls(calls, batch=400, timeout=15.0, mem_mb=1024, log=None):
    log = log or (lambda s: None)
    findings, counts = [], {"crash": 0, "hang": 0, "SystemError": 0}
    i = 0
    while i < len(calls):
        chunk = calls[i:i + batch]
        outcomes, failure = run_batch(chunk, timeout, mem_mb)
        for j, kind in enumerate(outcomes):
            if kind.startswith("SystemError"):
                counts["SystemError"] += 1
                findings.append(("SystemError", kind, [chunk[j]]))
                log("[%d] %s\n  %s" % (i + j, kind, chunk[j]))
        if failure is None:
            i += len(chunk)
            continue
        idx, kind, detail = failure
        seq = minimize(chunk, idx, kind, timeout, mem_mb)
        if seq or kind == "crash":         # a slow call under load is no hang; a crash always counts
            counts[kind] += 1
            findings.append((kind, detail, seq or [chunk[idx]]))
        log("[%d] %s (%s)%s\n  %s" % (i + idx, kind, detail, "" if seq else " [did not reproduce]",
                                     "\n  ".join(seq or [chunk[idx]])))
        i += idx + 1
    return counts, findings


def reproducer(seq):
    return PRELUDE + "".join("print(%s)\n" % c if k == len(seq) - 1 else "%s\n" % c for k, c in enumerate(seq))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", "0")))
    ap.add_argument("--batch", type=int, default=400)
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds one call may take before it is a hang")
    ap.add_argument("--mem-mb", type=int, default=1024, help="the child's address-space limit")
    ap.add_argument("--exclude", help="a regex: callables whose name matches are not called")
    ap.add_argument("--tame", action="store_true", help="no value that overflows int64")
    ap.add_argument("--print-calls", action="store_true", help="print the generated calls and exit")
    a = ap.parse_args(argv)
    if a.print_calls:
        print("\n".join(Program(a.seed, a.exclude, a.tame).calls(a.calls)))
        return 0
    t0 = time.time()
    counts, findings = fuzz(a.calls, a.seed, a.batch, a.timeout, a.mem_mb, lambda s: print(s, flush=True),
                            a.exclude, a.tame)
    print("\n== %d calls, seed %d, %.0fs: %d crashes, %d hangs, %d SystemErrors" %
          (a.calls, a.seed, time.time() - t0, counts["crash"], counts["hang"], counts["SystemError"]))
    for kind, detail, seq in findings:
        print("\n# %s: %s (%s)\n%s" % (kind, target_of(seq[-1]), detail, reproducer(seq)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
