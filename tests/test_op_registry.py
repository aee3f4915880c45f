"""Every public callable of cthtorch, nn.functional, linalg, special and every
Tensor method reaches the one dispatch point: it is a generated binding, a
registered composite (a `_C._Op`), or a registered API function (the
nn.functional layer); the few that are not ops at all are listed here by name.
And no module computes in numpy outside interop."""
import os
import re
import types

import cthtorch as ct
import cthtorch.linalg
import cthtorch.nn.functional as F
import cthtorch.special
from cthtorch import _ops

# torch.<name> callables that are not ops, as in PyTorch (Python helpers in
# torch/__init__.py, torch/random.py, torch/_tensor_str.py)
UTILITIES = {
    "compile", "get_device_module", "init_num_threads", "is_inference_mode_enabled", "is_storage",
    "is_vulkan_available", "set_default_dtype", "set_default_tensor_type", "typename",
    "get_printoptions", "set_printoptions", "printoptions",
    "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "vmap",   # torch.vmap is torch.func.vmap: a function transform (loaded on first use)
    # shape arithmetic on numbers (torch/__init__.py's sym_* helpers)
    "from_dlpack", "to_dlpack",   # torch.utils.dlpack's exchange functions
    "cond", "while_loop",   # control-flow operators: eagerly Python's if and while
    "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum",
}
# Tensor methods in the Tensor class body that are autograd/storage plumbing, not ops
TENSOR_NON_OPS = {
    "as_subclass", "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
    "is_shared", "share_memory_", "pin_memory", "is_pinned", "storage", "set_",
    "module_load",   # load_state_dict's swap hook: a Python method of torch.Tensor, no aten op
}


def public_callables(mod):
    for name in dir(mod):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, (type, types.ModuleType)) or not callable(obj):
            continue
        yield name, obj


def test_every_public_function_is_a_binding_or_registered():
    bad = []
    for label, mod in (("torch", ct), ("nn.functional", F), ("linalg", cthtorch.linalg),
                       ("special", cthtorch.special)):
        for name, obj in public_callables(mod):
            if _ops.is_op(obj) or _ops.is_api(obj):
                continue
            if label == "torch" and name in UTILITIES:
                continue
            bad.append("%s.%s (%s)" % (label, name, getattr(obj, "__module__", "?")))
    assert bad == []


def test_every_tensor_method_is_a_binding_registered_or_class_body_plumbing():
    bad = []
    for name in dir(ct.Tensor):
        if name.startswith("__") and name.endswith("__"):
            continue
        owner = next(b for b in ct.Tensor.__mro__ if name in b.__dict__)
        obj = owner.__dict__[name]
        if isinstance(obj, (property, staticmethod, classmethod)) or not callable(obj):
            continue
        if _ops.is_op(obj) or name in TENSOR_NON_OPS:
            continue
        bad.append("%s (%s)" % (name, owner.__name__))
    assert bad == []


def test_utility_lists_hold_only_what_exists_and_is_not_an_op():
    for name in UTILITIES:
        assert callable(getattr(ct, name)) and not _ops.is_op(getattr(ct, name)), name
    for name in TENSOR_NON_OPS:
        assert not _ops.is_op(getattr(ct.Tensor, name)), name


def test_registered_entries_are_what_the_namespaces_hold():
    # nothing assigned later (a module-level def, a lazy __getattr__) replaced a registration
    for (ns, name), obj in _ops.registered().items():
        holder = {"torch": ct, "Tensor": ct.Tensor, "_nn": ct._C._nn, "nn.functional": F,
                  "linalg": cthtorch.linalg, "special": cthtorch.special}[ns]
        got = holder.__dict__[name] if ns == "Tensor" else getattr(holder, name)
        assert got is obj, "%s.%s" % (ns, name)


# Modules that import numpy. Interop: conversions at the boundary (.numpy(),
# from_numpy, datasets reading files, PIL images, collate, pickling).
# utils/tensorboard/_summary.py: values leaving for TensorBoard's protobufs and
# PNGs (histogram buckets, image bytes), as torch.utils.tensorboard does
INTEROP = {
    "cthtorch/utils/tensorboard/_summary.py", "cthtorch/utils/data/_utils/collate.py",
    "cthtorch/_legacy_storage.py", "cthtorch/utils/data/_utils/worker.py",
    "cthtorch/vision/datasets/cifar.py", "cthtorch/vision/datasets/mnist.py",
    "cthtorch/vision/datasets/stl10.py", "cthtorch/vision/datasets/svhn.py",   # raw bytes / loadmat arrays
    "cthtorch/vision/datasets/moving_mnist.py",   # an .npy file read with np.load
    "cthtorch/vision/transforms/functional.py", "cthtorch/vision/transforms/v2/_type_conversion.py",
    "cthtorch/distributed/_mpi.py",   # zero-copy views of tensor memory handed to MPI (mpi4py's buffer interface)
    # the benchmark Fuzzer draws its parameters from a numpy RandomState, as torch's does: same seed, same shapes
    "cthtorch/utils/benchmark/utils/fuzzer.py",
    "cthtorch/vision/io.py",   # PIL images' pixels in and out
}
def test_numpy_is_imported_only_for_interop():
    root = os.path.dirname(os.path.dirname(os.path.abspath(ct.__file__)))
    found = set()
    pat = re.compile(r"^\s*(import numpy|from numpy)", re.M)
    for d, _, files in os.walk(os.path.join(root, "cthtorch")):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                if pat.search(open(path).read()):
                    found.add(os.path.relpath(path, root))
    assert found == INTEROP
