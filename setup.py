"""Builds cthtorch in place: `python setup.py develop`.

Steps (each a plain compiler call, so the build reads top to bottom):
  1. tools/generate_code.py  -> build/generated/*.c, *.h, _C.pyi
  2. src/TH/*.c              -> cthtorch/lib/libTH.so
  3. src/ATen/*.c            -> cthtorch/lib/libATen.so (links libTH, OpenBLAS)
  4. src/python/**.c + generated -> cthtorch/_C*.so  (rpath $ORIGIN/lib)
  5. src/THC/*.cu            -> cthtorch/lib/libTHC.so, only where nvcc and a CUDA runtime exist
                                (tools/build_thc.py; it can compile the objects ahead, alone)
  6. headers                 -> cthtorch/include/{TH,ATen}
Environment: CTHTORCH_DEBUG=1 (-O0 -g3), CTHTORCH_ASAN=1 (ASan+UBSan).
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor

from setuptools import Command, Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(ROOT, "build")
GEN = os.path.join(BUILD, "generated")
PKG = os.path.join(ROOT, "cthtorch")
LIB = os.path.join(PKG, "lib")
DEBUG = os.environ.get("CTHTORCH_DEBUG") == "1"
ASAN = os.environ.get("CTHTORCH_ASAN") == "1"
CC = os.environ.get("CC", "gcc")

sys.path.insert(0, os.path.join(ROOT, "tools"))
from build_thc import compile_thc, link_thc, newest_header  # noqa: E402


def flags():
    f = ["-std=gnu11", "-fPIC", "-fopenmp", "-Wall", "-Wno-unused-function", "-Wno-type-limits",
         "-Wno-unknown-pragmas", "-Wno-stringop-overread", "-DTH_BUILD",
         # integer tensors wrap on overflow, as PyTorch's do (int64 min * -1, size
         # arithmetic in error texts): -fwrapv makes that defined C instead of UB
         "-fwrapv"]
    if DEBUG:
        f += ["-O0", "-g3"]
    elif ASAN:
        # -O1, as ASan advises: the sanitized build compiles in a fraction of
        # -O3's time (it runs in CI's sanitizer leg) and keeps stacks readable
        f += ["-O1", "-g"]
    else:
        f += ["-O3", "-g", "-march=native", "-fno-math-errno", "-fno-trapping-math"]
    if ASAN:
        f += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    return f


def openblas():
    import scipy_openblas32
    return scipy_openblas32.get_include_dir(), scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library()


def compile_all(sources, objdir, extra, layers):
    os.makedirs(objdir, exist_ok=True)
    newest = newest_header(layers, GEN)
    cmds, objs = [], []
    flag_sig = " ".join(flags() + extra)
    for src in sources:
        obj = os.path.join(objdir, os.path.relpath(src, ROOT).replace(os.sep, "_") + ".o")
        objs.append(obj)
        stamp = obj + ".flags"
        fresh = (os.path.exists(obj) and os.path.getmtime(obj) >= max(os.path.getmtime(src), newest)
                 and os.path.exists(stamp) and open(stamp).read() == flag_sig)
        if not fresh:
            cmds.append(([CC] + flags() + extra + ["-c", src, "-o", obj], stamp, flag_sig))

    def run(job):
        cmd, stamp, sig = job
        print(" ".join(cmd[-3:]), flush=True)
        subprocess.check_call(cmd)
        with open(stamp, "w") as fh:
            fh.write(sig)

    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        list(ex.map(run, cmds))
    return objs


def link(objs, out, libs):
    cmd = [CC, "-shared", "-fopenmp"] + (["-fsanitize=address,undefined"] if ASAN else [])
    cmd += objs + ["-o", out] + libs
    print("link", os.path.relpath(out, ROOT), flush=True)
    subprocess.check_call(cmd)


class BuildCthtorch(build_ext):
    def run(self):
        os.makedirs(LIB, exist_ok=True)
        subprocess.check_call([sys.executable, os.path.join(ROOT, "tools", "generate_code.py"),
                               "--out", GEN])
        blas_inc, blas_libdir, blas_lib = openblas()
        # ship OpenBLAS beside libATen so the package does not depend on the venv layout
        blas_so = os.path.join(blas_libdir, "lib%s.so" % blas_lib)
        if not os.path.exists(os.path.join(LIB, os.path.basename(blas_so))):
            shutil.copy2(blas_so, LIB)
        rpath = "-Wl,-rpath,$ORIGIN"
        # nvcc's objects need none of the C libraries: they compile beside the C
        # build (its per-layer tails leave cores idle), only the link waits
        with ThreadPoolExecutor(1) as thc_ex:
            thc = thc_ex.submit(self.compile_thc)
            self.build_c(rpath, blas_inc, blas_lib)
            built = thc.result()
            if built:
                link_thc(LIB, *built)
        self.install_headers()
        pyi = os.path.join(GEN, "_C.pyi")
        if os.path.exists(pyi):
            shutil.copy2(pyi, os.path.join(PKG, "_C.pyi"))
        # the op registry (cthtorch/_ops) raises on a name registered twice or
        # shadowing a generated binding: importing the package makes that a build error
        if not ASAN:   # an ASan build imports only with libasan preloaded (make test-asan)
            subprocess.check_call([sys.executable, "-c", "import cthtorch"], cwd=ROOT)

    def build_c(self, rpath, blas_inc, blas_lib):
        th = compile_all(sorted(glob.glob(os.path.join(ROOT, "src", "TH", "*.c"))),
                         os.path.join(BUILD, "obj"), [], ["TH"])
        link(th, os.path.join(LIB, "libTH.so"), ["-lm", "-lmvec", "-lrt", rpath])
        aten = compile_all(sorted(glob.glob(os.path.join(ROOT, "src", "ATen", "*.c"))),
                           os.path.join(BUILD, "obj"), ["-I" + blas_inc], ["TH", "ATen"])
        link(aten, os.path.join(LIB, "libATen.so"),
             ["-L" + LIB, "-lTH", "-l" + blas_lib, "-lm", rpath])
        py_inc = sysconfig.get_paths()["include"]
        pysrc = sorted(glob.glob(os.path.join(ROOT, "src", "python", "**", "*.c"), recursive=True))
        pysrc += sorted(glob.glob(os.path.join(GEN, "*.c")))
        pyobj = compile_all(pysrc, os.path.join(BUILD, "obj"),
                            ["-I" + py_inc, "-I" + GEN, "-I" + os.path.join(ROOT, "src", "python"),
                             ], ["TH", "ATen", "python", "generated"])
        ext_name = "_C" + sysconfig.get_config_var("EXT_SUFFIX")
        link(pyobj, os.path.join(PKG, ext_name),
             ["-L" + LIB, "-lATen", "-lTH", "-lm", "-ldl", "-Wl,-rpath,$ORIGIN/lib"])

    def compile_thc(self):
        """libTHC's objects (tools/build_thc.py), or None where no libTHC is built."""
        # the sanitizer build instruments host code only: it reuses no GPU
        if ASAN:
            return None
        # a libTHC built elsewhere (same sources) and copied in: the GPU check
        # carries the one built here, since nvcc takes minutes over the kernels
        if os.environ.get("CTHTORCH_PREBUILT_THC") == "1" and os.path.exists(os.path.join(LIB, "libTHC.so")):
            print("libTHC.so: prebuilt (CTHTORCH_PREBUILT_THC=1)", flush=True)
            return None
        return compile_thc(DEBUG)

    def install_headers(self):
        for sub in ("TH", "ATen"):
            dst = os.path.join(PKG, "include", sub)
            os.makedirs(dst, exist_ok=True)
            for h in glob.glob(os.path.join(ROOT, "src", sub, "*.h")):
                shutil.copy2(h, dst)
            if sub == "TH":
                os.makedirs(os.path.join(dst, "generic"), exist_ok=True)
                for h in glob.glob(os.path.join(ROOT, "src", sub, "generic", "*")):
                    shutil.copy2(h, os.path.join(dst, "generic"))

    def get_outputs(self):
        return []


class Develop(Command):
    """`setup.py develop`: build in place and put this checkout on sys.path
    (a .pth file), without pip's isolated build environment — the build
    needs the venv's PyYAML and OpenBLAS wheel."""
    description = "build cthtorch in place and make it importable"
    user_options = []

    def initialize_options(self):
        pass

    def finalize_options(self):
        pass

    def run(self):
        cmd = BuildCthtorch(self.distribution)
        cmd.ensure_finalized()
        cmd.run()
        site = sysconfig.get_paths()["purelib"]
        with open(os.path.join(site, "cthtorch-develop.pth"), "w") as fh:
            fh.write(ROOT + "\n")


setup(
    name="cthtorch",
    version="0.1.0",
    description="PyTorch's classic architecture by hand: TH kernels, ATen in C, a C autograd engine",
    packages=["cthtorch"],
    ext_modules=[Extension("cthtorch._C", sources=[])],
    cmdclass={"build_ext": BuildCthtorch, "develop": Develop},
    python_requires=">=3.9",
)
