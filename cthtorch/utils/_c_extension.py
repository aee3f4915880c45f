"""User C extensions compiled through cffi: the part that both front ends
(cthtorch.utils.ffi, the PyTorch 0.x API, and cthtorch.utils.cpp_extension)
share.

An extension is C compiled against cthtorch/include (TH and ATen headers) and
linked to the same libTH/libATen that cthtorch._C loaded, so a function in it
works on the very THTensor structs the Python tensors hold (Tensor._cdata)
and shares TH's thread-local error state: a function that calls
THError_set(...) reaches Python as the matching exception, as every built-in
op's error does.

Builds are cached on disk by a hash of everything that goes into them (the
sources, the declarations, the flags, cthtorch's headers, the compiler and
Python), so an unchanged extension loads without compiling and any change
builds a new module next to the old one.
"""
import ctypes
import hashlib
import importlib.util
import os
import re
import sys
import sysconfig
import tempfile

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIR = os.path.join(_PKG, "include")
LIB_DIR = os.path.join(_PKG, "lib")

# Always declared to cffi: the tensor type (opaque: C code sees the real
# struct through the headers, Python only passes pointers) and the error
# protocol, which the call wrapper reads after each call.
_PRELUDE_CDEF = """
typedef struct THTensor THTensor;
typedef struct THStorage THStorage;
typedef enum {
  TH_ERR_NONE = 0, TH_ERR_RUNTIME, TH_ERR_VALUE, TH_ERR_TYPE, TH_ERR_INDEX,
  TH_ERR_MEMORY, TH_ERR_NOTIMPL
} THErrorKind;
THErrorKind THError_kind(void);
const char *THError_message(void);
void THError_clear(void);
"""
# What every extension's C wrapper includes: the whole operator layer's base
# (ATen.h brings THTensor, THStorage, THGeneral and the dtype dispatch).
_PRELUDE_C = "#include <ATen/ATen.h>\n"

_ERRORS = {1: RuntimeError, 2: ValueError, 3: TypeError, 4: IndexError, 5: RuntimeError, 6: NotImplementedError}


def _headers_digest():
    """The installed headers' contents: an extension built against another
    THTensor layout must not be reused."""
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(INCLUDE_DIR)):
        for f in sorted(files):
            with open(os.path.join(root, f), "rb") as fh:
                h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()


def build_key(*parts):
    """Hash of the build's inputs; parts are str/bytes or lists of them."""
    import cffi
    h = hashlib.sha256()
    for p in list(parts) + [_headers_digest(), cffi.__version__, sys.version, os.environ.get("CC", ""),
                            sysconfig.get_config_var("EXT_SUFFIX")]:
        for item in (p if isinstance(p, (list, tuple)) else [p]):
            h.update(item if isinstance(item, bytes) else repr(item).encode())
            h.update(b"\x1f")
    return h.hexdigest()[:16]


def make_ffi(module_name, cdef, sources, include_dirs=(), extra_compile_args=(), extra_link_args=(),
             libraries=(), library_dirs=(), define_macros=(), preamble="", **extension_kwargs):
    """A cffi.FFI set up to build `module_name` from C source files
    (extension_kwargs: more setuptools Extension arguments)."""
    import cffi
    if not os.path.exists(os.path.join(INCLUDE_DIR, "ATen", "ATen.h")):
        raise RuntimeError("cthtorch's C headers are missing from %s: build cthtorch with "
                           "`python setup.py develop` before building extensions" % INCLUDE_DIR)
    ffi = cffi.FFI()
    ffi.cdef(_PRELUDE_CDEF + cdef)
    ffi.set_source(module_name, _PRELUDE_C + preamble + "\n" + cdef, sources=list(sources),
                   include_dirs=[INCLUDE_DIR] + list(include_dirs),
                   library_dirs=[LIB_DIR] + list(library_dirs), libraries=["ATen", "TH"] + list(libraries),
                   extra_compile_args=["-std=gnu11"] + list(extra_compile_args),
                   extra_link_args=["-Wl,-rpath," + LIB_DIR] + list(extra_link_args),
                   define_macros=list(define_macros), **extension_kwargs)
    return ffi


class _CapturedOutput:
    """Sends file descriptors 1 and 2 to a temporary file for the duration:
    the compiler's messages go there so a failed build can quote them."""

    def __init__(self, enabled):
        self.enabled, self.text = enabled, ""

    def __enter__(self):
        if self.enabled:
            sys.stdout.flush()
            sys.stderr.flush()
            self.file = tempfile.TemporaryFile(mode="w+b")
            self.saved = [os.dup(1), os.dup(2)]
            os.dup2(self.file.fileno(), 1)
            os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, saved in zip((1, 2), self.saved):
                os.dup2(saved, fd)
                os.close(saved)
            self.file.seek(0)
            self.text = self.file.read().decode(errors="replace")
            self.file.close()
        return False


def compile_ffi(ffi, name, build_dir, verbose):
    """Compiles into build_dir and returns the path of the module; on failure
    raises RuntimeError("Error building extension 'name'") with the compiler's
    output, as PyTorch does."""
    os.makedirs(build_dir, exist_ok=True)
    with _CapturedOutput(not verbose) as out:
        try:
            path = ffi.compile(tmpdir=build_dir, verbose=verbose)
        except Exception as e:
            err = e
        else:
            err = None
    if err is not None:
        raise RuntimeError("Error building extension '%s': %s\n%s" % (name, err, out.text)) from None
    return path


def load_module(module_name, path):
    """Imports the compiled cffi module at path (its lib and ffi)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _exception(lib, ffi):
    kind = int(lib.THError_kind())
    msg = ffi.string(lib.THError_message()).decode(errors="replace")
    lib.THError_clear()
    return _ERRORS.get(kind, RuntimeError)(msg)


# the name outlives every capsule made with it (PyCapsule keeps the pointer)
_CAPSULE_NAME = ctypes.c_char_p(b"cthtorch.THTensor")
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _tensor_capsule(ffi, ptr):
    """The THTensor* an extension returned, as the capsule _C._wrap_THTensor
    takes (it refuses bare addresses, so no integer can reach a dereference)."""
    return _capsule_new(int(ffi.cast("uintptr_t", ptr)), _CAPSULE_NAME, None)


def wrap_function(fn, ffi, lib, name=None):
    """A Python callable for the C function fn: tensor arguments go in as
    their THTensor* (no copy), a THTensor* result comes back as a tensor
    (the extension's reference is handed over), and an error the function
    recorded with THError_set is raised as its Python exception."""
    import cthtorch
    from cthtorch import _C
    name = name or getattr(fn, "__name__", "function")
    try:
        ftype = ffi.typeof(fn)
    except TypeError:
        return fn
    if ftype.kind != "function":
        return fn

    def is_tensor_ptr(t):
        return t.kind == "pointer" and t.item.cname in ("THTensor", "struct THTensor")

    tensor_args = [i for i, a in enumerate(ftype.args) if is_tensor_ptr(a)]
    returns_tensor = is_tensor_ptr(ftype.result)

    def call(*args):
        # `args` keeps the tensors alive for the call: C gets borrowed pointers
        cargs = list(args)
        for i in tensor_args:
            if i < len(cargs):
                a = cargs[i]
                if isinstance(a, cthtorch.Tensor):
                    cargs[i] = ffi.cast("THTensor *", a._cdata)
                elif a is None:
                    cargs[i] = ffi.NULL
                elif not isinstance(a, ffi.CData):
                    raise TypeError("%s(): argument %d must be Tensor, not %s" % (name, i + 1, type(a).__name__))
        lib.THError_clear()
        result = fn(*cargs)
        if lib.THError_kind() != 0:
            if returns_tensor and result != ffi.NULL:
                # an extension that both failed and returned a tensor: own it so it is freed
                _C._wrap_THTensor(_tensor_capsule(ffi, result))
            raise _exception(lib, ffi)
        if returns_tensor:
            if result == ffi.NULL:
                raise SystemError("%s() returned NULL without setting an error (THError_set)" % name)
            return _C._wrap_THTensor(_tensor_capsule(ffi, result))
        return result

    call.__name__ = call.__qualname__ = name
    call.__doc__ = "%s: C function %s" % (name, ftype.cname)
    return call


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_PREPROC = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_DEFINITION = re.compile(r"^(?P<ret>.*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)$", re.S)


def function_prototypes(code):
    """The prototypes of the functions that C source code defines at file
    scope, in order, as (name, 'ret name(params);'), static ones left out.
    A declaration parser for the common case (no function-like macros
    around definitions): enough to tell cffi what to bind."""
    code = _PREPROC.sub("", _COMMENT.sub(" ", code))
    out, depth, chunk = [], 0, []
    for ch in code:
        if ch == "{":
            if depth == 0:
                head = " ".join("".join(chunk).split())
                m = _DEFINITION.match(head)
                words = set(re.findall(r"\w+", m.group("ret"))) if m else set()
                if m and "=" not in head and not words & {"static", "struct", "union", "enum", "typedef"}:
                    out.append((m.group("name"), "%s %s(%s);" % (m.group("ret").strip(), m.group("name"),
                                                                  m.group("params").strip())))
            depth += 1
            chunk = []
        elif ch == "}":
            depth -= 1
            chunk = []
        elif depth == 0:
            if ch == ";":
                chunk = []
            else:
                chunk.append(ch)
    return out
