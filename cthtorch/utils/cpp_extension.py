"""torch.utils.cpp_extension for C sources: load() and load_inline() build a
C extension at run time and import it, as PyTorch's do, but through cffi and
the system C compiler instead of pybind11 and ninja.

A function of the extension takes and returns `THTensor *` (a tensor passed
in arrives as its own THTensor, no copy; a returned one becomes a tensor),
may call any TH/ATen function, and reports errors with THError_set(kind,
fmt, ...) plus a -1/NULL return: the error arrives as the Python exception of
its kind. Every non-static function the sources define is bound (load_inline:
the ones named in `functions`, when given). See docs/EXTENSIONS.md.

Builds are cached under get_default_build_root()/<name> (TORCH_EXTENSIONS_DIR
overrides the root, as in PyTorch) by a hash of the sources, the flags and
cthtorch's headers; a change builds again, an unchanged extension just loads.
C++ and CUDA sources, and the setuptools classes (CppExtension,
BuildExtension, CUDAExtension), are not supported.
"""
import os
import re
import sys
import types

from cthtorch.utils import _c_extension as _cx

__all__ = ["load", "load_inline", "include_paths", "library_paths", "get_default_build_root",
           "CppExtension", "CUDAExtension", "BuildExtension"]


def include_paths(device_type="cpu", cuda=False):
    """The include directories an extension compiles against (TH/, ATen/ below it)."""
    return [_cx.INCLUDE_DIR]


def library_paths(device_type="cpu", cuda=False):
    """The directory of libTH and libATen, which extensions link to."""
    return [_cx.LIB_DIR]


def get_default_build_root():
    """Where builds are cached: $TORCH_EXTENSIONS_DIR, else
    ~/.cache/cthtorch_extensions/py<ver>_cpu (apart from PyTorch's own)."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root:
        return os.path.realpath(root)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(cache, "cthtorch_extensions", "py%d%d_cpu" % sys.version_info[:2]))


def _unsupported(kind):
    raise NotImplementedError(
        "cthtorch.utils.cpp_extension builds C sources (.c) through cffi; %s are not supported" % kind)


def _check_name(name):
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ValueError("extension name must be a valid Python identifier, got %r" % (name,))


def _as_list(x):
    if x is None:
        return []
    return [x] if isinstance(x, str) else list(x)


def _build_and_import(name, c_files, codes, functions, extra_cflags, extra_ldflags, extra_include_paths,
                      build_directory, verbose, is_python_module, header_codes=()):
    _check_name(name)
    protos = []
    for code in codes:
        protos += _cx.function_prototypes(code)
    if functions is not None:
        wanted = list(functions.keys() if isinstance(functions, dict) else _as_list(functions))
        found = dict(protos)
        missing = [f for f in wanted if f not in found]
        if missing:
            raise RuntimeError("extension '%s': function(s) %s are not defined (non-static, at file scope) "
                               "in its sources" % (name, ", ".join(missing)))
        protos = [(f, found[f]) for f in wanted]
    cdef = "\n".join(p for _, p in protos)
    cflags, ldflags, incs = _as_list(extra_cflags), _as_list(extra_ldflags), _as_list(extra_include_paths)
    key = _cx.build_key(name, codes, list(header_codes), cdef, cflags, ldflags, incs)
    module_name = "%s_%s" % (name, key)
    build_dir = build_directory or os.path.join(get_default_build_root(), name)
    os.makedirs(build_dir, exist_ok=True)
    suffix = _cx.sysconfig.get_config_var("EXT_SUFFIX")
    path = os.path.join(build_dir, module_name + suffix)
    with _BuildLock(build_dir):
        if os.path.exists(path):
            if verbose:
                print("Loading extension module %s from %s (up to date)" % (name, path))
        else:
            if verbose:
                print("Building extension module %s in %s" % (name, build_dir))
            ffi = _cx.make_ffi(module_name, cdef, c_files, include_dirs=incs, extra_compile_args=cflags,
                               extra_link_args=ldflags)
            built = _cx.compile_ffi(ffi, name, build_dir, verbose)
            if os.path.abspath(built) != os.path.abspath(path):
                os.replace(built, path)
    raw = _cx.load_module(module_name, path)
    if not is_python_module:
        return None
    mod = types.ModuleType(name, "C extension %s built from %s" % (name, ", ".join(c_files)))
    mod.__file__ = path
    mod._ffi, mod._lib = raw.ffi, raw.lib
    docs = functions if isinstance(functions, dict) else {}
    for fname, _ in protos:
        f = _cx.wrap_function(getattr(raw.lib, fname), raw.ffi, raw.lib, fname)
        if docs.get(fname):
            f.__doc__ = docs[fname]
        setattr(mod, fname, f)
    return mod


class _BuildLock:
    """An exclusive lock on a build directory, so two processes building the
    same extension take turns (the second finds the first's module)."""

    def __init__(self, d):
        self.path = os.path.join(d, "lock")

    def __enter__(self):
        import fcntl
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        return False


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None,
         extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None, with_sycl=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Builds the C files `sources` into an extension named `name` (cached)
    and returns it as a module whose attributes are its functions. Headers
    (.h) among the sources are not compiled but count in the cache key, so
    a change to one rebuilds."""
    if with_cuda or extra_cuda_cflags:
        _unsupported("CUDA sources")
    if is_standalone:
        _unsupported("standalone executables")
    files = [os.path.abspath(s) for s in _as_list(sources)]
    if not files:
        raise ValueError("load(): no sources given")
    for f in files:
        if not f.endswith((".c", ".h")):
            _unsupported("C++/CUDA sources (%s)" % os.path.basename(f))
    c_files = [f for f in files if f.endswith(".c")]
    if not c_files:
        raise ValueError("load(): no C sources (.c) among %s" % ", ".join(files))

    def read(f):
        with open(f) as fh:
            return fh.read()
    return _build_and_import(name, c_files, [read(f) for f in c_files], None, extra_cflags, extra_ldflags,
                             extra_include_paths, build_directory, verbose, is_python_module,
                             [read(f) for f in files if f.endswith(".h")])


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
                no_implicit_headers=False):
    """Builds C source text (`cpp_sources`, a str or list of str: C here) as
    load() does; it is written to <build dir>/main.c with
    `#include <ATen/ATen.h>` in front unless no_implicit_headers."""
    if cuda_sources or with_cuda:
        _unsupported("CUDA sources")
    if sycl_sources or with_sycl:
        _unsupported("SYCL sources")
    _check_name(name)
    code = "\n".join(_as_list(cpp_sources))
    if not no_implicit_headers:
        code = "#include <ATen/ATen.h>\n" + code
    build_dir = build_directory or os.path.join(get_default_build_root(), name)
    os.makedirs(build_dir, exist_ok=True)
    main = os.path.join(build_dir, "main.c")
    # rewritten only when it changes, so a concurrent loader never reads half a file
    old = open(main).read() if os.path.exists(main) else None
    if old != code:
        tmp = main + ".%d.tmp" % os.getpid()
        with open(tmp, "w") as fh:
            fh.write(code)
        os.replace(tmp, main)
    return _build_and_import(name, [main], [code], functions, extra_cflags, extra_ldflags, extra_include_paths,
                             build_dir, verbose, is_python_module)


def CppExtension(*args, **kwargs):
    _unsupported("setuptools extensions (CppExtension); use load() or cthtorch.utils.ffi.create_extension")


def CUDAExtension(*args, **kwargs):
    _unsupported("CUDA extensions")


class BuildExtension:
    def __init__(self, *args, **kwargs):
        _unsupported("setuptools extensions (BuildExtension); use load() or cthtorch.utils.ffi.create_extension")
