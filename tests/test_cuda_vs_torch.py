"""Every op declared `cuda: true` (src/ATen/declarations/*.yaml) against
PyTorch on the same device: values, dtypes and shapes of the result, and the
gradient of each floating input where the op is differentiable. On a GPU box
(both libraries seeing CUDA) the cuda cases compare cthtorch's CUDA kernels
with torch's (issue 19's acceptance); everywhere the cpu cases run the same
calls on the CPU, which keeps this harness honest on machines without a GPU.

The call for each op is built from its schema: floating tensors in (0.2, 0.8)
(inside every declared op's domain), int64 tensors in [0, 3) for index-like
parameters, small defaults for required numbers and shapes, and an explicit
argument table where the schema alone cannot give a valid call. When torch
refuses a call, cthtorch must refuse it with the same error type."""
import glob
import os
import sys

import numpy as np
import pytest

import cthtorch as ct
from oracle import require_torch

torch = require_torch()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import generate_code  # noqa: E402

DECLS = [d for d in generate_code.load_decls(sorted(glob.glob(os.path.join(ROOT, "src", "ATen", "declarations",
                                                                          "*.yaml"))))
         if d.cuda and not d.internal and not d.name.startswith("_")]
DEVICES = ["cpu"] + (["cuda"] if ct.cuda.is_available() and torch.cuda.is_available() else [])

INDEX_NAMES = {"index", "indices", "target", "idx"}
BOOL_NAMES = {"mask", "condition"}
INT_OPS = {"gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_not"}


class Make:
    """tensors for one call, the same numbers for both libraries"""
    def __init__(self, lib, device, seed, grad):
        self.lib, self.device, self.rng, self.grad = lib, device, np.random.default_rng(seed), grad

    def f(self, *shape):
        v = self.rng.uniform(0.2, 0.8, shape)
        return self.lib.tensor(v, dtype=self.lib.float32, device=self.device, requires_grad=self.grad)

    def i(self, *shape, hi=3):
        return self.lib.tensor(self.rng.integers(0, hi, shape), dtype=self.lib.int64, device=self.device)

    def b(self, *shape):
        return self.lib.tensor(self.rng.random(shape) < 0.5, device=self.device)

    def perm(self, n):
        return self.lib.tensor(self.rng.permutation(n), dtype=self.lib.int64, device=self.device)


# calls the schema alone cannot make valid: full name -> Make -> (args, kwargs)
SPEC = {
    "view": lambda m: ((m.f(3, 4), (12,)), {}), "reshape": lambda m: ((m.f(3, 4), (2, 6)), {}),
    "expand": lambda m: ((m.f(3, 1), (2, 3, 4)), {}), "permute": lambda m: ((m.f(2, 3, 4), (2, 0, 1)), {}),
    "transpose": lambda m: ((m.f(3, 4), 0, 1), {}), "swapaxes": lambda m: ((m.f(3, 4), 0, 1), {}),
    "swapdims": lambda m: ((m.f(3, 4), 0, 1), {}), "movedim.int": lambda m: ((m.f(2, 3, 4), 0, 2), {}),
    "moveaxis.int": lambda m: ((m.f(2, 3, 4), 0, 2), {}), "narrow": lambda m: ((m.f(3, 4), 1, 1, 2), {}),
    "select.int": lambda m: ((m.f(3, 4), 1, 2), {}), "unfold": lambda m: ((m.f(3, 5), 1, 2, 1), {}),
    "as_strided": lambda m: ((m.f(3, 4), (2, 2), (1, 2)), {}), "repeat": lambda m: ((m.f(3, 4), (2, 1)), {}),
    "mm": lambda m: ((m.f(3, 4), m.f(4, 5)), {}), "addmm": lambda m: ((m.f(3, 5), m.f(3, 4), m.f(4, 5)), {}),
    "bmm": lambda m: ((m.f(2, 3, 4), m.f(2, 4, 5)), {}),
    "baddbmm": lambda m: ((m.f(2, 3, 5), m.f(2, 3, 4), m.f(2, 4, 5)), {}),
    "conv2d": lambda m: ((m.f(2, 3, 6, 6), m.f(4, 3, 3, 3), m.f(4)), {"padding": 1}),
    "fill_.Tensor": lambda m: ((m.f(3, 4).detach(), m.f().detach()), {}),
    "index_select": lambda m: ((m.f(3, 4), 1, m.i(5, hi=4)), {}),
    "index_copy": lambda m: ((m.f(3, 4), 1, m.perm(4)[:2], m.f(3, 2)), {}),
    "index_fill.int_Tensor": lambda m: ((m.f(3, 4), 1, m.i(2, hi=4), m.f().detach()), {}),
    "index_fill.int_Scalar": lambda m: ((m.f(3, 4), 1, m.i(2, hi=4), 0.25), {}),
    "index_add": lambda m: ((m.f(3, 4), 1, m.i(5, hi=4), m.f(3, 5)), {}),
    "gather": lambda m: ((m.f(3, 4), 1, m.i(3, 2, hi=4)), {}),
    "scatter.src": lambda m: ((m.f(3, 4), 1, m.perm(4)[:2].expand(3, 2), m.f(3, 2)), {}),
    "scatter_add": lambda m: ((m.f(3, 4), 1, m.i(3, 5, hi=4), m.f(3, 5)), {}),
    "masked_scatter": lambda m: ((m.f(3, 4), m.b(3, 4), m.f(3, 4)), {}),
    "where.self": lambda m: ((m.b(3, 4), m.f(3, 4), m.f(3, 4)), {}),
    "clamp": lambda m: ((m.f(3, 4), 0.3, 0.7), {}), "clip": lambda m: ((m.f(3, 4), 0.3, 0.7), {}),
    "clamp.Tensor": lambda m: ((m.f(3, 4), m.f(3, 4), m.f(3, 4)), {}),
    "clip.Tensor": lambda m: ((m.f(3, 4), m.f(3, 4), m.f(3, 4)), {}),
    "nll_loss": lambda m: ((m.f(5, 4), m.i(5, hi=4)), {}),
    "nll_loss_nd": lambda m: ((m.f(5, 4), m.i(5, hi=4)), {}),
    "nll_loss2d": lambda m: ((m.f(2, 4, 3, 3), m.i(2, 3, 3, hi=4)), {}),
    "max_pool2d_with_indices": lambda m: ((m.f(2, 3, 6, 6), 2), {}),
    "avg_pool2d": lambda m: ((m.f(2, 3, 6, 6), 2), {}),
    "adaptive_avg_pool2d": lambda m: ((m.f(2, 3, 6, 6), (2, 3)), {}),
    "adaptive_avg_pool3d": lambda m: ((m.f(2, 3, 4, 6, 6), (2, 2, 3)), {}),
    "unflatten.int": lambda m: ((m.f(3, 4), 1, (2, 2)), {}),
    "index.Tensor": lambda m: ((m.f(3, 4), m.i(5, hi=3)), {}),
    "index_put": lambda m: ((m.f(3, 4), (m.perm(3)[:2],), m.f(2, 4)), {}),
    "native_batch_norm": lambda m: ((m.f(2, 3, 4, 4), m.f(3), m.f(3), m.f(3).detach(), m.f(3).detach(), True, 0.1,
                                     1e-5), {}),
    "native_layer_norm": lambda m: ((m.f(3, 4), [4], m.f(4), m.f(4), 1e-5), {}),
    "cat": lambda m: (([m.f(3, 4), m.f(2, 4)], 0), {}), "concat": lambda m: (([m.f(3, 4), m.f(3, 2)], 1), {}),
    "concatenate": lambda m: (([m.f(3, 4), m.f(2, 4)],), {}), "stack": lambda m: (([m.f(3, 4), m.f(3, 4)], 1), {}),
    "view.dtype": lambda m: ((m.f(3, 4).detach(), m.lib.int32), {}),
    "slice.Tensor": lambda m: ((m.f(3, 4),), {}),
}
# the Python spelling of ops that have no function or method of their name
FUNC = {
    "index.Tensor": lambda lib: lambda x, i: x[i],
    "index_put": lambda lib: lambda x, i, v: x.index_put(i, v),
    "slice.Tensor": lambda lib: lambda x: x[:, 1:4:2],
    # torch._C._nn's own defaults differ from F.nll_loss's; programs call F.nll_loss
    "nll_loss": lambda lib: lib.nn.functional.nll_loss, "nll_loss_nd": lambda lib: lib.nn.functional.nll_loss,
    "nll_loss2d": lambda lib: lib.nn.functional.nll_loss,
}
# ops that draw random numbers: the same numbers as torch on the CPU (after the
# same manual_seed); on CUDA our Philox streams are not torch's, so there only
# the shape, dtype and range are compared
RANDOM = {"uniform_": (0.0, 1.0), "normal_": (-10.0, 10.0), "bernoulli_.float": (0.0, 1.0)}

# backward formulas that still reach an op without a CUDA kernel (they raise
# NotImplementedError on GPU tensors): strict xfails, so the GPU check says when
# one starts to work
CUDA_GRAD_GAPS = {
    "prod": "aten::prod_backward has no CUDA kernel yet",
    "prod.dim_int": "aten::prod_backward has no CUDA kernel yet",
    "digamma": "aten::_trigamma has no CUDA kernel yet",
    "as_strided": "aten::as_strided_backward has no CUDA kernel yet",
    "masked_scatter": "masked_scatter's backward builds a host tensor on CUDA inputs",
}
# declared ops PyTorch has no public Python name for
NO_PUBLIC = {"alias": "aten::alias is reached only through torch.ops"}


def module_of(lib, d):
    if d.module == "nn":
        return lib._C._nn
    mod = lib
    for part in (d.module or "").split("."):
        if part:
            mod = getattr(mod, part, None)
            if mod is None:
                return None
    return mod


def function(lib, d):
    if d.full in FUNC:
        return FUNC[d.full](lib)
    if d.name.startswith("special_") and hasattr(lib.special, d.name[len("special_"):]):
        return getattr(lib.special, d.name[len("special_"):])
    if "function" in d.variants:
        mod = module_of(lib, d)
        f = getattr(mod, d.name, None) if mod is not None else None
        if f is not None:
            return f
    if "method" in d.variants:
        return lambda self, *a, **k: getattr(self, d.name)(*a, **k)
    return None


def inputs(d, lib, device, seed, grad):
    """positional args and kwargs for one call, or None where neither SPEC nor the schema gives one"""
    m = Make(lib, device, seed, grad)
    if d.full in SPEC:
        return SPEC[d.full](m)
    args = []
    for p in d.params:
        if p.kwonly:
            continue
        if p.is_tensor and not p.optional:
            if p.name in INDEX_NAMES:
                args.append(m.i(3, 4))
            elif p.name in BOOL_NAMES:
                args.append(m.b(3, 4))
            elif d.name in INT_OPS:
                args.append(m.i(3, 4, hi=8))
            else:
                args.append(m.f(3, 4))
        elif p.default is None:
            base = p.base
            if base in ("Scalar", "float"):
                args.append(0.5)
            elif base == "int":
                args.append(1)
            elif base == "bool":
                args.append(False)
            elif base.startswith("int["):
                args.append([1])
            else:
                return None   # a required parameter this table does not know how to make
    return args, {}


def flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def compare(mine, theirs, tol):
    assert type(mine).__name__ == type(theirs).__name__ or isinstance(theirs, torch.Tensor)
    a, b = flat(mine), flat(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if not isinstance(y, torch.Tensor):
            assert x == y or (x != x and y != y)
            continue
        assert str(x.dtype) == str(y.dtype).replace("torch.", "torch."), (x.dtype, y.dtype)
        assert tuple(x.shape) == tuple(y.shape)
        xv, yv = x.detach().cpu().numpy(), y.detach().cpu().numpy()
        if np.issubdtype(yv.dtype, np.floating):
            np.testing.assert_allclose(xv.astype(np.float64), yv.astype(np.float64), rtol=tol, atol=tol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(xv, yv)


def call(lib, d, device, seed, grad):
    f = function(lib, d)
    made = inputs(d, lib, device, seed, grad)
    if f is None or made is None:
        return None
    args, kw = made
    return f, args, kw


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d", DECLS, ids=[d.full for d in DECLS])
def test_op_matches_torch(d, device):
    if d.full in NO_PUBLIC:
        pytest.skip(NO_PUBLIC[d.full])
    mine, theirs = call(ct, d, device, 0, False), call(torch, d, device, 0, False)
    if mine is None or theirs is None:
        pytest.skip("%s: no sample call from its schema (%s); covered by its family's test file" % (d.full, d.func_text))
    (fm, am, km), (ft, at, kt) = mine, theirs
    if d.full in RANDOM and device != "cpu":
        lo, hi = RANDOM[d.full]
        out, ref = fm(*am, **km), ft(*at, **kt)
        assert out.is_cuda and out.dtype == getattr(ct, str(ref.dtype).split(".")[1]) and out.shape == ref.shape
        v = out.cpu().numpy()
        assert np.all((v >= lo) & (v <= hi))
        return
    ct.manual_seed(0)
    torch.manual_seed(0)
    try:
        ref = ft(*at, **kt)
    except Exception as e:   # torch refuses this call: so must we, with the same error type
        assert not isinstance(e, AttributeError), "the harness made a call torch has no name for: %s" % e
        with pytest.raises(Exception) as ours:
            fm(*am, **km)
        assert type(ours.value).__name__ == type(e).__name__, (ours.value, e)
        return
    compare(fm(*am, **km), ref, 1e-5 if device == "cpu" else 1e-4)


def differentiable(d):
    return bool(d.derivs) and not d.nondiff and d.outputs[0][0] in ("Tensor", "Tensor[]")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d", [d for d in DECLS if differentiable(d)],
                         ids=[d.full for d in DECLS if differentiable(d)])
def test_op_gradient_matches_torch(d, device, request):
    if device == "cuda" and d.full in CUDA_GRAD_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=CUDA_GRAD_GAPS[d.full]))
    if d.full == "nextafter" and torch.__version__ < "2.13":
        pytest.skip("torch before 2.13 has no derivative for nextafter (2.13, the oracle here, has ours)")
    if d.full in NO_PUBLIC:
        pytest.skip(NO_PUBLIC[d.full])
    mine, theirs = call(ct, d, device, 1, True), call(torch, d, device, 1, True)
    if mine is None or theirs is None:
        pytest.skip("%s: no sample call from its schema; covered by its family's test file" % d.full)
    (fm, am, km), (ft, at, kt) = mine, theirs
    try:
        ref = [t for t in flat(ft(*at, **kt)) if isinstance(t, torch.Tensor) and t.requires_grad]
    except Exception:
        pytest.skip("%s: torch refuses the sample call (test_op_matches_torch checks the error)" % d.full)
    if not ref:
        pytest.skip("%s: torch's result needs no gradient for this call" % d.full)
    out = [t for t in flat(fm(*am, **km)) if isinstance(t, ct.Tensor) and t.requires_grad]
    assert len(out) == len(ref)
    rng = np.random.default_rng(2)
    ws = [rng.uniform(-1, 1, tuple(t.shape)) for t in ref]
    try:
        sum(torch.sum(t * torch.tensor(w, dtype=t.dtype, device=device)) for t, w in zip(ref, ws)).backward()
    except Exception as e:   # torch has no derivative here (heaviside, nextafter): neither may we
        with pytest.raises(Exception) as ours:
            sum(ct.sum(t * ct.tensor(w, dtype=t.dtype, device=device)) for t, w in zip(out, ws)).backward()
        assert type(ours.value).__name__ == type(e).__name__, (ours.value, e)
        return
    sum(ct.sum(t * ct.tensor(w, dtype=t.dtype, device=device)) for t, w in zip(out, ws)).backward()
    for x, y in zip([a for a in am if isinstance(a, ct.Tensor)], [a for a in at if isinstance(a, torch.Tensor)]):
        assert (x.grad is None) == (y.grad is None), d.full
        if y.grad is not None:
            np.testing.assert_allclose(x.grad.cpu().numpy().astype(np.float64),
                                       y.grad.cpu().numpy(force=True).astype(np.float64),
                                       rtol=1e-4, atol=1e-4 if device == "cpu" else 1e-3)
