"""Bad input raises the exception type PyTorch raises, with its wording where it has one."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

CASES = [
    ("lib.zeros(-2)", "zeros: Dimension size must be non-negative."),
    ("lib.empty(-2)", "Trying to create tensor with negative dimension -2: [-2]"),
    ("lib.empty(0, 2 ** 62, 2 ** 62)", "Stride calculation overflowed"),
    ("lib.empty(2 ** 62, 4)", "Storage size calculation overflowed with sizes=[4611686018427387904, 4]"),
    ("lib.ones(2, 3).view(4)", "is invalid for input of size 6"),
    ("lib.ones(2, 3).t().view(6)", "view size is not compatible"),
    ("lib.ones(2, 3).transpose(0, 5)", "Dimension out of range"),
    ("lib.ones(2, 3)[2]", "index 2 is out of bounds for dimension 0 with size 2"),
    ("lib.ones(2, 3)[:, 3]", "index 3 is out of bounds for dimension 1 with size 3"),
    ("lib.ones(2, 3)[0, 0, 0]", "too many indices for tensor of dimension 2"),
    ("lib.ones(2).item()", "a Tensor with 2 elements cannot be converted to Scalar"),
    ("lib.ones(2) + lib.ones(3)", "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ("lib.ones(2).add('a')", None),
    ("lib.ones(2).add(lib.ones(2), lib.ones(2), lib.ones(2))", None),
    ("lib.ones(2).add(foo=1)", None),
    ("lib.ones(2, dtype=lib.int64).add_(1.5)", "result type Float can't be cast to the desired output type Long"),
    ("lib.ones(3).add_(lib.ones(2, 3))", "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ("lib.ones(3).expand(2, 3).add_(1)", "more than one element of the written-to tensor refers to a single memory location"),
    ("bool(lib.ones(2))", "ambiguous"),
    ("lib.tensor([1, 2], dtype=lib.bool) - lib.tensor([True, False])", "Subtraction, the `-` operator, with two bool tensors"),
    ("-lib.tensor([True])", "Negation, the `-` operator, on a bool tensor is not supported"),
    ("lib.tensor([1.0]).sum(dim=3)", "Dimension out of range"),
    ("lib.arange(1, 0, 1)", "upper bound and lower bound inconsistent with step sign"),
    ("lib.tensor([[1, 2], [3]])", "expected sequence of length 2 at dim 1"),
    ("lib.ones(2).new_zeros(2).mean(dtype=lib.int64)", None),
    ("lib.zeros(2, dtype=lib.int32).mean()", "mean(): could not infer output dtype"),
    ("lib.ones(2, 2).unsqueeze(3)", "Dimension out of range"),
    ("lib.ones(2, 2).narrow(0, 1, 5)", "exceeds dimension size"),
    ("lib.ones(2, 2).permute(0, 0)", "duplicate dims are not allowed"),
    ("lib.tensor([1, 2]) // 0", "ZeroDivisionError"),
    # a mask or value of the wrong type: the argument parser's TypeError (not an AttributeError from inside)
    ("lib.ones(3).masked_fill(1, 2)", "masked_fill() received an invalid combination of arguments - got (int, int)"),
    ("lib.ones(3).masked_fill_(1, 2)", "masked_fill_() received an invalid combination of arguments - got (int, int)"),
    ("lib.masked_fill(lib.ones(3), 1, 2)", "masked_fill() received an invalid combination of arguments - got "
                                           "(Tensor, int, int)"),
    ("lib.ones(3).masked_fill(lib.ones(3) > 0, 'a')", "got (Tensor, str)"),
    ("lib.ones(3).masked_fill(lib.ones(3) > 0, np.array(2.0))", "got (Tensor, numpy.ndarray)"),
    ("lib.ones(3).masked_fill(lib.ones(3) > 0, None)", "masked_fill() received an invalid combination"),
    # Tensor.norm has no out= (torch.norm has)
    ("lib.ones(3).norm(out=lib.empty(()))", "Tensor.norm() got an unexpected keyword argument 'out'"),
]


def test_masked_fill_numbers_and_norm_dtype_as_torch():
    m = [True, False, True]
    for value in (np.float64(2.5), np.int64(3), True, ct.tensor(4.0)):
        tv = torch.tensor(4.0) if isinstance(value, ct.Tensor) else value
        got, want = ct.ones(3).masked_fill(ct.tensor(m), value), torch.ones(3).masked_fill(torch.tensor(m), tv)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    # Tensor.norm's fourth positional argument is dtype
    x = [[1.0, 2.0], [3.0, 4.0]]
    got, want = ct.tensor(x).norm(2, 1, False, ct.float64), torch.tensor(x).norm(2, 1, False, torch.float64)
    assert got.dtype == ct.float64 and got.tolist() == pytest.approx(want.tolist())


def setitem_mismatch(lib):
    x = lib.zeros(2, 3)
    x[0] = lib.ones(4)


@pytest.mark.parametrize("expr,msg", CASES)
def test_same_exception_as_torch(expr, msg):
    kinds = {}
    for name, lib in (("ct", ct), ("torch", torch)):
        try:
            eval(expr)
        except Exception as e:  # noqa: BLE001 - the type is the point
            kinds[name] = e
        else:
            kinds[name] = None
    assert kinds["torch"] is not None, "torch accepted %s" % expr
    assert kinds["ct"] is not None, "cthtorch accepted %s" % expr
    assert isinstance(kinds["ct"], type(kinds["torch"])) or type(kinds["torch"]) in type(kinds["ct"]).__mro__, \
        (type(kinds["ct"]), type(kinds["torch"]), kinds["ct"], kinds["torch"])
    if msg:
        assert msg in str(kinds["ct"]), str(kinds["ct"])
        assert msg in str(kinds["torch"]), str(kinds["torch"])


def test_setitem_shape_mismatch():
    """a basic-index write reports the value's expand error, as torch's copy_to does"""
    oracle.raises_like(lambda: setitem_mismatch(ct), lambda: setitem_mismatch(torch))


def test_numpy_misaligned_and_readonly():
    buf = np.zeros(17, dtype=np.uint8)
    mis = buf[1:].view(np.float64) if False else np.frombuffer(buf.tobytes()[1:9], dtype=np.float64)
    t = ct.tensor(mis)     # a copy is always fine
    assert t.shape == (1,)
    raw = np.zeros(9, dtype=np.uint8)[1:].view(np.float64)   # really misaligned data pointer
    if raw.ctypes.data % 8:   # taken, as PyTorch takes it (cthtorch copies it: its kernels load aligned)
        assert ct.from_numpy(raw).tolist() == raw.tolist()


def test_training_mistakes_raise_torchs_errors():
    torch = oracle.require_torch()
    cases = [lambda m: m.nn.functional.nll_loss(m.randn(3, 5), m.tensor([1.0, 2.0, 3.0])),
             lambda m: m.nn.functional.nll_loss(m.randn(3, 5), m.tensor([1, 2, 3], dtype=m.int32)),
             lambda m: m.nn.LSTM(3, 4)(m.ones(5, 2, 6)),
             lambda m: m.nn.GRU(3, 4)(m.ones(1, 5, 2, 3)),
             lambda m: m.nn.Linear(3, 4)(m.ones(2, 5)),
             lambda m: m.nn.Conv2d(3, 4, 3)(m.ones(1, 2, 8, 8))]
    for case in cases:
        with pytest.raises(Exception) as ours:
            case(ct)
        with pytest.raises(Exception) as theirs:
            case(torch)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


@pytest.mark.parametrize("case", [
    "F.conv2d(x, w.half(), b.half())", "F.conv2d(x, w.half())", "F.conv2d(x.half(), w, b)", "F.conv2d(x, w, b.half())",
    "F.conv2d(x.double(), w)", "F.conv2d(x, w.double(), b.double())", "lib.nn.Conv2d(2, 3, 3).half()(x)",
    "F.conv1d(x[0], w[..., 0].half(), b.half())",
])
def test_conv_dtype_mismatch_as_torch(case):
    """a half model fed float input (guided-diffusion's convert_to_fp16 then a float32 batch): torch's CPU
    convolution names a mismatched bias first, in C++ type names, then the weight; a bias of another dtype
    alone is refused too"""
    def err(lib):
        lib.manual_seed(0)
        env = {"lib": lib, "F": lib.nn.functional, "x": lib.randn(1, 2, 5, 5), "w": lib.randn(3, 2, 3, 3),
               "b": lib.randn(3)}
        with pytest.raises(Exception) as e:
            eval(case, env)
        return type(e.value), str(e.value).splitlines()[0]
    assert err(ct) == err(torch)


@pytest.mark.parametrize("case", [
    "F.cross_entropy(None, y)", "F.cross_entropy(t, None)", "F.cross_entropy(t, y, weight=3)", "F.nll_loss(None, y)",
    "F.kl_div(None, t, reduction='batchmean')", "F.poisson_nll_loss(None, t)", "F.soft_margin_loss(None, t)",
    "F.triplet_margin_loss(t, None, t)", "F.cosine_embedding_loss(None, t, y)", "F.multilabel_margin_loss(None, y)",
    "F.relu(None)", "F.relu(None, True)", "F.dropout(None)", "F.linear(None, t)", "lib.nn.Linear(3, 3)(None)", "F.pad(None, (1, 1))",
    "F.layer_norm(None, (3,))", "F.one_hot(None)", "F.pixel_shuffle(None, 2)", "F.cosine_similarity(None, t)",
    "F.scaled_dot_product_attention(t, None, t)", "F.grid_sample(None, t, align_corners=False)",
])
def test_a_forward_that_returned_none_gets_torchs_parser_error(case):
    """a model whose forward forgot its `return` (senet.pytorch's CifarSEPreActResNet) hands None to the loss
    or the next layer: torch's argument parser raises TypeError naming the op, never AttributeError"""
    def err(lib):
        env = {"lib": lib, "F": lib.nn.functional, "t": lib.randn(4, 3), "y": lib.tensor([0, 1, 2, 0])}
        with pytest.raises(Exception) as e:
            eval(case, env)
        return type(e.value), str(e.value).splitlines()[0]
    assert err(ct) == err(torch)


@pytest.mark.parametrize("code", [
    "x = lib.ones(2, 3, 4)\ny = x.T",                               # Tensor.T, a Python property
    "y = lib.FloatTensor([np.array([1., 2])])",                     # the legacy constructor over tensor()
    "x = lib.ones(2, requires_grad=True)\ny = float(x.sum())",
    "y = lib.tensor(lib.ones(2))",
])
def test_warnings_name_the_users_line_as_torch(code):
    """a warning from under cthtorch's Python wrappers names the caller's file and line, as torch's
    (whose wrappers are C), not the wrapper's"""
    import subprocess
    import sys
    import warnings

    # FloatTensor([ndarray]) and x.T run in a fresh interpreter: torch gives those warnings once per process, so
    # a file run earlier in the same worker would have used them up
    child = ("import sys, warnings, numpy as np, importlib\n"
             "lib = importlib.import_module(sys.argv[1])\n"
             "with warnings.catch_warnings(record=True) as w:\n"
             "    warnings.simplefilter('always')\n"
             "    exec(compile(sys.argv[2], 'user_code.py', 'exec'), {'lib': lib, 'np': np})\n"
             "print(repr([(x.filename, x.lineno, x.category.__name__) for x in w]))\n")

    def where(lib):
        if "FloatTensor" not in code and ".T" not in code:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                exec(compile(code, "user_code.py", "exec"), {"lib": lib, "np": np})
            return [(x.filename, x.lineno, x.category) for x in w]
        out = subprocess.run([sys.executable, "-c", child, lib.__name__, code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout
    ours = where(ct)
    assert ours == where(torch) and ours not in ([], "[]\n")
