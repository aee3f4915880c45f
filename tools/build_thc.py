"""libTHC's build: nvcc per src/THC/*.cu, then the shared library.
setup.py calls it; run alone (`python3 tools/build_thc.py`) it compiles the
objects only, with the standard library alone, so they can be compiled ahead
(before the venv exists) and setup.py then finds them up to date.
Environment: CTHTORCH_DEBUG=1 (device debug info, -G)."""
import glob
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OBJDIR = os.path.join(ROOT, "build", "obj_cuda")
# Hopper machine code (H100/H200), and its PTX for newer cards to JIT (one
# front-end pass for both: a second virtual arch would double the build)
ARCH = ["-gencode", "arch=compute_90,code=[sm_90,compute_90]"]


def newest_header(layers, gen_dir=None):
    """Newest mtime of the headers a layer's sources can include: its own and
    the layers below it (TH < ATen < python + generated; THC sees TH, ATen)."""
    hs = []
    for layer in layers:
        if layer == "generated":
            hs += glob.glob(os.path.join(gen_dir, "*.h"))
        else:
            hs += glob.glob(os.path.join(ROOT, "src", layer, "**", "*.h"), recursive=True)
            hs += glob.glob(os.path.join(ROOT, "src", layer, "**", "*.cuh"), recursive=True)
    hs += glob.glob(os.path.join(ROOT, "src", "TH", "generic", "*.c"))
    return max(os.path.getmtime(h) for h in hs)


def compile_thc(debug=False):
    """libTHC's objects: nvcc per .cu (rebuilt when it or a header it can
    include changed). Returns (nvcc, objects), or None where there is no
    nvcc or no CUDA source."""
    nvcc = shutil.which("nvcc")
    cu = sorted(glob.glob(os.path.join(ROOT, "src", "THC", "*.cu")))
    if not nvcc or not cu:
        return None
    os.makedirs(OBJDIR, exist_ok=True)
    newest = newest_header(["TH", "ATen", "THC"])
    opt = ["-O0", "-g", "-G"] if debug else ["-O3", "-lineinfo"]
    cmds, objs = [], []
    for src in cu:
        obj = os.path.join(OBJDIR, os.path.basename(src) + ".o")
        objs.append(obj)
        if not os.path.exists(obj) or os.path.getmtime(obj) < max(os.path.getmtime(src), newest):
            cmds.append([nvcc, "-c", "-std=c++17", "-Xcompiler", "-fPIC", "--expt-relaxed-constexpr"] + opt + ARCH +
                        ["-DTH_BUILD", "-I" + os.path.join(ROOT, "src"), src, "-o", obj])

    def run(cmd):
        print("nvcc", os.path.relpath(cmd[-3], ROOT), flush=True)
        try:
            subprocess.check_call(cmd)
        except BaseException:
            # a half-written object must not pass the next build's time check
            if os.path.exists(cmd[-1]):
                os.remove(cmd[-1])
            raise

    # the heavy sources first (those instantiating a template header's
    # kernels per dtype), so a long compile does not start last on a 2-core
    # machine while the other core idles
    def cost(cmd):
        with open(cmd[-3]) as fh:
            return ('.cuh"' in fh.read(), os.path.getsize(cmd[-3]))
    cmds.sort(key=cost, reverse=True)
    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as ex:
        list(ex.map(run, cmds))
    return nvcc, objs


def link_thc(lib_dir, nvcc, objs):
    """libTHC.so, linked with the static CUDA runtime so it needs only the
    driver at run time; cuBLAS is opened by libTHC itself (dlopen). Relinked
    when an object is newer, whichever run compiled it."""
    out = os.path.join(lib_dir, "libTHC.so")
    if not os.path.exists(out) or max(os.path.getmtime(o) for o in objs) > os.path.getmtime(out):
        print("link", os.path.relpath(out, ROOT), flush=True)
        subprocess.check_call([nvcc, "-shared", "-cudart", "static"] + ARCH + objs +
                              ["-o", out, "-L" + lib_dir, "-lTH", "-ldl", "-lpthread", "-Xlinker", "-rpath=$ORIGIN"])


if __name__ == "__main__":
    if compile_thc(os.environ.get("CTHTORCH_DEBUG") == "1") is None:
        print("libTHC: no nvcc or no CUDA sources, nothing to compile")
    sys.exit(0)
