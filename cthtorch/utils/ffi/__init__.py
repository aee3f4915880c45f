"""torch.utils.ffi (PyTorch 0.x): C extensions declared by a header and
built with cffi.

    ffi = create_extension('_ext.my_lib', headers='src/my_lib.h',
                           sources=['src/my_lib.c'], relative_to=__file__)
    ffi.build()                    # writes _ext/my_lib/{__init__.py,_my_lib*.so}
    from _ext import my_lib
    my_lib.my_lib_add_forward(a, b, out)

The header declares the functions to bind (cffi's cdef syntax: plain
prototypes). Tensors are `THTensor *` (one type for every dtype here, where
0.x had THFloatTensor, THDoubleTensor...). A call passes each tensor's own
THTensor (no copy), a returned THTensor* becomes a tensor, and an error the
function records with THError_set is raised as its Python exception.

build() is cached by a hash of the headers, sources and flags (a stamp file
in the target folder): an unchanged extension is not compiled again. A
rebuilt module takes effect in a new process, as in 0.x. See
docs/EXTENSIONS.md.
"""
import os

from cthtorch.utils import _c_extension as _cx

__all__ = ["create_extension"]

_STAMP = ".cthtorch_build_hash"


def _wrap_function(function, ffi, lib=None):
    """The wrapper the generated package's __init__.py puts around each C
    function (0.x's name)."""
    return _cx.wrap_function(function, ffi, lib)


_WRAPPER = '''"""C extension {name}, built by cthtorch.utils.ffi.create_extension."""
from cthtorch.utils.ffi import _wrap_function
from .{cffi_name} import lib as _lib, ffi as _ffi

__all__ = []


def _import_symbols(scope):
    for symbol in dir(_lib):
        fn = getattr(_lib, symbol)
        if symbol.startswith("THError_"):
            continue
        scope[symbol] = _wrap_function(fn, _ffi, _lib) if callable(fn) else fn
        __all__.append(symbol)


_import_symbols(locals())
'''


def create_extension(name, headers, sources, verbose=True, with_cuda=False, package=False, relative_to=".",
                     **kwargs):
    """Returns a cffi.FFI for the extension `name` ('pkg.sub.lib'); its
    build() compiles it into <dir of relative_to>/pkg/sub/lib/."""
    if with_cuda:
        raise NotImplementedError("cthtorch.utils.ffi.create_extension: with_cuda=True is not supported "
                                  "(extensions are built for the CPU with the system C compiler)")
    base = os.path.abspath(os.path.dirname(relative_to))
    parts = name.split(".")
    suffix = parts[-1]
    target_dir = os.path.join(base, *parts)
    cffi_name = "_" + suffix
    module_name = (name.rpartition(".")[0] + ".{0}._{0}".format(suffix)) if package else cffi_name
    headers = [headers] if isinstance(headers, str) else list(headers)
    cdef = ""
    for h in headers:
        with open(os.path.join(base, h)) as f:
            cdef += f.read() + "\n\n"
    sources = [os.path.join(base, s) for s in sources]
    codes = []
    for s in sources:
        with open(s) as f:
            codes.append(f.read())
    # the rest of kwargs are setuptools Extension arguments, as in 0.x
    flags = dict(kwargs)
    ffi = _cx.make_ffi(module_name, cdef, sources, **flags)
    key = _cx.build_key(name, cdef, codes, sorted((k, repr(v)) for k, v in flags.items()))

    def build():
        """Compiles unless the target folder already holds this exact build."""
        stamp = os.path.join(target_dir, _STAMP)
        so = [f for f in os.listdir(target_dir) if f.startswith(cffi_name + ".") and f.endswith(".so")] \
            if os.path.isdir(target_dir) else []
        if so and os.path.exists(stamp) and open(stamp).read() == key:
            if verbose:
                print("%s is up to date in %s" % (name, target_dir))
            return os.path.join(target_dir, so[0])
        os.makedirs(target_dir, exist_ok=True)
        tmp = os.path.join(target_dir, "build")
        path = _cx.compile_ffi(ffi, name, tmp, verbose)
        out = os.path.join(target_dir, os.path.basename(path))
        os.replace(path, out)
        with open(os.path.join(target_dir, "__init__.py"), "w") as f:
            f.write(_WRAPPER.format(name=name, cffi_name=os.path.basename(path).split(".")[0]))
        with open(stamp, "w") as f:
            f.write(key)
        return out

    ffi.build = build
    return ffi
