"""User C extensions through cffi: cthtorch.utils.cpp_extension.load /
load_inline and cthtorch.utils.ffi.create_extension (PyTorch 0.x). They
compile against cthtorch/include with the system compiler, so they run where
cthtorch itself builds; every build here goes to a temporary folder."""
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import cthtorch
from cthtorch.utils import cpp_extension
from cthtorch.utils._c_extension import function_prototypes
from oracle import require_torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "extension")


@pytest.fixture(scope="module")
def swish(tmp_path_factory):
    """examples/extension/swish.py with its extension built from scratch."""
    spec = importlib.util.spec_from_file_location("swish_example", os.path.join(EXAMPLE, "swish.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.extension(build_directory=str(tmp_path_factory.mktemp("swish_build")))
    return mod


def test_swish_forward_matches_torch(swish):
    torch = require_torch()
    for dtype, tdtype, tol in ((cthtorch.float32, torch.float32, 1e-6), (cthtorch.float64, torch.float64, 1e-12)):
        x = cthtorch.randn(3, 7, dtype=dtype)
        y = swish.swish(x, 1.5)
        assert y.dtype == dtype and y.shape == (3, 7)
        xt = torch.from_numpy(x.numpy().copy())
        want = xt * torch.sigmoid(1.5 * xt)
        assert want.dtype == tdtype
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=tol, atol=tol)


def test_swish_gradcheck(swish):
    x = cthtorch.randn(4, 5, dtype=cthtorch.float64, requires_grad=True)
    assert cthtorch.autograd.gradcheck(lambda t: swish.swish(t, 0.7), (x,))
    # and the C backward equals torch's autograd through x * sigmoid(beta x)
    torch = require_torch()
    g = cthtorch.randn(4, 5, dtype=cthtorch.float64)
    (gx,) = cthtorch.autograd.grad(swish.swish(x, 0.7), x, g)
    xt = torch.from_numpy(x.detach().numpy().copy()).requires_grad_()
    (gt,) = torch.autograd.grad(xt * torch.sigmoid(0.7 * xt), xt, torch.from_numpy(g.numpy().copy()))
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-12, atol=1e-12)


def test_swish_non_contiguous_input(swish):
    x = cthtorch.randn(6, 4, dtype=cthtorch.float64).t()
    np.testing.assert_allclose(swish.swish(x).numpy(), (x * cthtorch.sigmoid(x)).numpy(), rtol=1e-12)


def test_swish_errors_arrive_as_exceptions(swish):
    ext = swish.extension()
    with pytest.raises(TypeError, match="swish_forward: expected a float32 or float64 tensor, got int64"):
        swish.swish(cthtorch.arange(3))
    with pytest.raises(RuntimeError, match=r"grad_output of shape \[2\] does not match input of shape \[3\]"):
        ext.swish_backward(cthtorch.zeros(2, dtype=cthtorch.float64), cthtorch.zeros(3, dtype=cthtorch.float64),
                           1.0, cthtorch.empty(0, dtype=cthtorch.float64))
    with pytest.raises(TypeError, match="argument 1 must be Tensor, not list"):
        ext.swish_forward([1.0], 1.0)
    # the error state is cleared: the next call works
    assert swish.swish(cthtorch.ones(2)).shape == (2,)


INLINE = r"""
/* writes 0, 1, 2, ... through the tensor's own strides: the caller's memory */
int fill_index(THTensor *t) {
  if (t->dtype != TH_Float) { THError_set(TH_ERR_TYPE, "fill_index: expected float32, got %s",
                                          THDtype_info[t->dtype].name); return -1; }
  if (t->ndim != 2) { THError_set(TH_ERR_INDEX, "fill_index: expected 2 dimensions, got %d", t->ndim); return -1; }
  float *d = (float *)THTensor_data(t);
  for (int64_t i = 0; i < t->sizes[0]; i++)
    for (int64_t j = 0; j < t->sizes[1]; j++)
      d[i * t->strides[0] + j * t->strides[1]] = (float)(i * t->sizes[1] + j);
  return 0;
}
/* any ATen op: a + SCALE * b, a new tensor handed to Python */
THTensor *add_scaled(THTensor *a, THTensor *b) { return at_add(a, b, at_scalar_int(SCALE), NULL); }
static int helper(void) { return 1; }
double check_value(double v) {
  if (v < 0) { THError_set(TH_ERR_VALUE, "check_value: %g is negative", v); return -1; }
  return v * helper();
}
"""


def _inline(tmp_path, scale=2, verbose=False, code=INLINE):
    return cpp_extension.load_inline("inline_ops", code, extra_cflags=["-DSCALE=%d" % scale],
                                     build_directory=str(tmp_path), verbose=verbose)


def test_load_inline_shares_memory_and_calls_aten(tmp_path):
    ext = _inline(tmp_path)
    assert sorted(n for n in dir(ext) if not n.startswith("_")) == ["add_scaled", "check_value", "fill_index"]
    base = cthtorch.zeros(3, 4)
    view = base.t()                          # a strided view: written in place, no copy
    assert ext.fill_index(view) == 0
    np.testing.assert_array_equal(base.numpy(), np.arange(12, dtype=np.float32).reshape(4, 3).T)
    a, b = cthtorch.ones(2, 3), cthtorch.arange(3.0)
    r = ext.add_scaled(a, b)                 # broadcasting is ATen's
    assert isinstance(r, cthtorch.Tensor) and r.shape == (2, 3)
    np.testing.assert_array_equal(r.numpy(), (a + 2 * b).numpy())
    assert ext.check_value(2.5) == 2.5


def test_load_inline_errors(tmp_path):
    ext = _inline(tmp_path)
    with pytest.raises(TypeError, match="fill_index: expected float32, got float64"):
        ext.fill_index(cthtorch.zeros(2, 2, dtype=cthtorch.float64))
    with pytest.raises(IndexError, match="fill_index: expected 2 dimensions, got 1"):
        ext.fill_index(cthtorch.zeros(2))
    with pytest.raises(ValueError, match="check_value: -1 is negative"):
        ext.check_value(-1.0)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        ext.add_scaled(cthtorch.ones(2), cthtorch.ones(3))


def test_wrap_THTensor_takes_only_an_unused_capsule():
    """the extension wrapper's entry point: a bare address (which it once
    dereferenced) or a foreign capsule is refused; a capsule wraps once"""
    import ctypes
    from cthtorch import _C
    from cthtorch.utils import _c_extension
    for bad in (12345, 0, 2 ** 70, None, "x", cthtorch.zeros(2)):
        with pytest.raises(TypeError, match="PyCapsule named 'cthtorch.THTensor'"):
            _C._wrap_THTensor(bad)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = ctypes.c_char_p(b"other")
    with pytest.raises(ValueError, match="not an unused 'cthtorch.THTensor'"):
        _C._wrap_THTensor(new(1234, name, None))
    x = cthtorch.arange(4.0)
    lib = ctypes.CDLL(os.path.join(os.path.dirname(cthtorch.__file__), "lib", "libTH.so"))
    lib.THTensor_retain(ctypes.c_void_p(x._cdata))    # the reference the capsule hands over
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    cap = _c_extension._tensor_capsule(ffi, ffi.cast("void *", x._cdata))
    y = _C._wrap_THTensor(cap)
    assert y._cdata == x._cdata
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    with pytest.raises(ValueError, match="each capsule can be wrapped once"):
        _C._wrap_THTensor(cap)
    del y
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0, dtype=np.float32))


def test_builds_are_cached_by_sources_and_flags(tmp_path):
    ext = _inline(tmp_path)
    first = ext.__file__
    mtime = os.stat(first).st_mtime_ns
    t0 = time.perf_counter()
    again = _inline(tmp_path)
    assert again.__file__ == first and os.stat(first).st_mtime_ns == mtime     # loaded, not rebuilt
    assert time.perf_counter() - t0 < 5
    # a flag change builds a new module, and it is the new code that runs
    other = _inline(tmp_path, scale=3)
    assert other.__file__ != first
    np.testing.assert_array_equal(other.add_scaled(cthtorch.zeros(1), cthtorch.ones(1)).numpy(), [3.0])
    # so does a source change
    changed = _inline(tmp_path, code=INLINE.replace("v * helper()", "v * helper() + 1"))
    assert changed.__file__ not in (first, other.__file__) and changed.check_value(1.0) == 2.0


def test_load_from_files_and_functions_filter(tmp_path):
    src, hdr = tmp_path / "ops.c", tmp_path / "ops.h"
    hdr.write_text("#define EXTRA 0\n")
    src.write_text('#include <ATen/ATen.h>\n#include "ops.h"\n'
                   "int64_t numel_of(THTensor *t) { return THTensor_numel(t) + EXTRA; }\n"
                   "int unused(void) { return 0; }\n")
    ext = cpp_extension.load("file_ops", [str(src), str(hdr)], build_directory=str(tmp_path / "b"),
                             extra_include_paths=[str(tmp_path)])
    assert ext.numel_of(cthtorch.zeros(3, 5)) == 15
    hdr.write_text("#define EXTRA 100\n")      # a listed header's change rebuilds
    ext2 = cpp_extension.load("file_ops", [str(src), str(hdr)], build_directory=str(tmp_path / "b"),
                              extra_include_paths=[str(tmp_path)])
    assert ext2.__file__ != ext.__file__ and ext2.numel_of(cthtorch.zeros(3, 5)) == 115
    only = cpp_extension.load_inline("filtered", src.read_text(), functions={"numel_of": "count"},
                                     build_directory=str(tmp_path / "c"), extra_include_paths=[str(tmp_path)])
    assert hasattr(only, "numel_of") and not hasattr(only, "unused") and only.numel_of.__doc__ == "count"
    with pytest.raises(RuntimeError, match="missing_fn"):
        cpp_extension.load_inline("filtered2", src.read_text(), functions=["missing_fn"],
                                  build_directory=str(tmp_path / "d"), extra_include_paths=[str(tmp_path)])


def test_compile_error_quotes_the_compiler(tmp_path):
    with pytest.raises(RuntimeError, match="Error building extension 'broken'") as e:
        cpp_extension.load_inline("broken", "int f(THTensor *t) { return undeclared_thing; }",
                                  build_directory=str(tmp_path))
    assert "undeclared_thing" in str(e.value)


def test_unsupported_sources_say_so(tmp_path):
    with pytest.raises(NotImplementedError, match="C\\+\\+/CUDA sources"):
        cpp_extension.load("cpp", [str(tmp_path / "x.cpp")])
    with pytest.raises(NotImplementedError, match="CUDA"):
        cpp_extension.load_inline("cu", "", cuda_sources="__global__ void k() {}")
    with pytest.raises(ValueError, match="valid Python identifier"):
        cpp_extension.load_inline("not-a-name", "")


def test_default_build_root_honours_torch_extensions_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    assert cpp_extension.get_default_build_root() == os.path.realpath(str(tmp_path))
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR")
    assert "cthtorch_extensions" in cpp_extension.get_default_build_root()
    assert os.path.exists(os.path.join(cpp_extension.include_paths()[0], "ATen", "ATen.h"))


def test_prototype_parser():
    code = """
    #include <x.h>
    #define M(a) \\
       (a)
    /* int commented(void) { } */
    static int hidden(int a) { return a; }
    struct S { int a; };
    int table[] = {1, 2};
    THTensor *make(THTensor *a,
                   double b) { if (b) { return a; } return a; }
    void nothing(void) {}
    """
    assert function_prototypes(code) == [("make", "THTensor * make(THTensor *a, double b);"),
                                         ("nothing", "void nothing(void);")]


def test_ffi_create_extension_from_a_clean_copy(tmp_path):
    """The 0.x route: build.py in a fresh copy of the example (no _ext/),
    then a new process imports _ext.swish and runs it; a second build is a
    cache hit."""
    work = tmp_path / "extension"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("_ext", "__pycache__"))
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "build.py"], cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "_ext" / "swish" / "__init__.py").exists()
    prog = ("import cthtorch\nfrom _ext import swish\n"
            "x = cthtorch.tensor([-1.0, 0.0, 2.0], dtype=cthtorch.float64)\n"
            "y = swish.swish_forward(x, 1.0)\n"
            "assert cthtorch.allclose(y, x * cthtorch.sigmoid(x)), y\n"
            "try:\n    swish.swish_forward(cthtorch.arange(2), 1.0)\nexcept TypeError as e:\n    print('TypeError', e)\n")
    r = subprocess.run([sys.executable, "-c", prog], cwd=work, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "TypeError swish_forward: expected a float32 or float64 tensor, got int64" in r.stdout
    r = subprocess.run([sys.executable, "build.py"], cwd=work, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and "up to date" in r.stdout, r.stdout + r.stderr
