"""Small top-level API pieces: as_subclass, pin_memory, default tensor type,
inference mode flag, torch.random, complex/sparse refusals, and sending one
tensor to several spawned processes."""
import multiprocessing as _mp

import pytest

import cthtorch
import oracle
from oracle import require_torch


def test_as_subclass_stays_on_graph():
    class M(cthtorch.Tensor):
        pass
    x = cthtorch.ones(2, requires_grad=True)
    y = x.as_subclass(M)
    assert type(y) is M and y.requires_grad
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_pin_memory_without_accelerator_matches_torch():
    torch = require_torch()
    with pytest.raises(RuntimeError) as ours:
        cthtorch.ones(2).pin_memory()
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2).pin_memory()
    assert str(ours.value) == str(theirs.value)
    assert cthtorch.ones(2).is_pinned() is False


def test_set_default_tensor_type():
    try:
        cthtorch.set_default_tensor_type(cthtorch.DoubleTensor)
        assert cthtorch.ones(1).dtype == cthtorch.float64
        cthtorch.set_default_tensor_type("torch.FloatTensor")
        assert cthtorch.ones(1).dtype == cthtorch.float32
        with pytest.raises(TypeError):
            cthtorch.set_default_tensor_type("torch.LongTensor")
    finally:
        cthtorch.set_default_dtype(cthtorch.float32)


def test_inference_mode_flag():
    assert not cthtorch.is_inference_mode_enabled()
    with cthtorch.inference_mode():
        assert cthtorch.is_inference_mode_enabled() and not cthtorch.is_grad_enabled()
        with cthtorch.inference_mode(False):
            assert not cthtorch.is_inference_mode_enabled()
    assert not cthtorch.is_inference_mode_enabled() and cthtorch.is_grad_enabled()


def test_random_module_fork_rng():
    cthtorch.random.manual_seed(3)
    with cthtorch.random.fork_rng():
        a = cthtorch.rand(3)
    b = cthtorch.rand(3)
    assert cthtorch.equal(a, b)
    assert cthtorch.random.initial_seed() == 3


def test_complex_and_unsupported_sparse_refuse_clearly():
    # complex64/128 are real dtypes now (tests/test_complex.py); complex32 still refuses
    assert cthtorch.view_as_complex(cthtorch.ones(2, 2)).dtype == cthtorch.complex64
    with pytest.raises(NotImplementedError, match="complex32"):
        cthtorch.view_as_complex(cthtorch.ones(2, 2, dtype=cthtorch.float16))
    with pytest.raises(NotImplementedError, match="SparseCPU"):   # sparse COO works; exp has no sparse kernel
        cthtorch.exp(cthtorch.sparse_coo_tensor([[0]], [1.0], (2,)))


def _read(t, q):
    q.put(float(t.sum()))


def test_one_tensor_to_two_spawned_processes():
    import cthtorch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    t = cthtorch.arange(10.0)
    q = ctx.SimpleQueue()
    ps = [ctx.Process(target=_read, args=(t, q)) for _ in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(60)
    assert [p.exitcode for p in ps] == [0, 0]
    assert sorted([q.get(), q.get()]) == [45.0, 45.0]
    assert t.tolist() == list(map(float, range(10)))


def test_accelerator_and_cpu_modules_match_cpu_only_torch():
    torch = require_torch()
    assert cthtorch.accelerator.is_available() is torch.accelerator.is_available() is False
    assert cthtorch.accelerator.current_accelerator() is None and torch.accelerator.current_accelerator() is None
    assert cthtorch.accelerator.device_count() == torch.accelerator.device_count()
    with pytest.raises(RuntimeError, match="Cannot access accelerator"):
        cthtorch.accelerator.synchronize()
    assert cthtorch.cpu.is_available() and cthtorch.cpu.device_count() == torch.cpu.device_count()


def test_functional_aliases_at_top_level():
    torch = require_torch()
    import numpy as np
    x = np.random.RandomState(0).randn(2, 4, 6, 6).astype(np.float32)
    for name, args in [("max_pool2d", (2,)), ("pixel_shuffle", (2,)), ("hardshrink", ()), ("avg_pool1d", None)]:
        if args is None:
            a, b = getattr(cthtorch, name)(cthtorch.tensor(x[0]), 2), getattr(torch, name)(torch.tensor(x[0]), 2)
        else:
            a, b = getattr(cthtorch, name)(cthtorch.tensor(x), *args), getattr(torch, name)(torch.tensor(x), *args)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
    t = cthtorch.tensor(x)
    np.testing.assert_allclose(t.hardshrink(0.3).numpy(), torch.tensor(x).hardshrink(0.3).numpy())
    w = cthtorch.tensor([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(t.prelu(w).numpy(), torch.tensor(x).prelu(torch.tensor([0.1, 0.2, 0.3, 0.4])).numpy(),
                               rtol=1e-6)


def test_checkpoint_recomputes_with_the_same_dropout_and_grads_as_torch():
    torch = require_torch()
    import warnings
    from cthtorch.utils.checkpoint import checkpoint, checkpoint_sequential
    results = []
    for lib, ck, seq in ((cthtorch, checkpoint, checkpoint_sequential),
                         (torch, torch.utils.checkpoint.checkpoint, torch.utils.checkpoint.checkpoint_sequential)):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Dropout(0.5), lib.nn.Linear(8, 2))
        x = lib.randn(3, 4, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = ck(m, x, use_reentrant=True)
            y.sum().backward()
            r = [y.sum().item(), x.grad.sum().item(), m[0].weight.grad.sum().item()]
            x.grad = None
            m.zero_grad()
            y2 = seq(m, 2, x, use_reentrant=True)
            y2.sum().backward()
        results.append(r + [y2.sum().item(), x.grad.sum().item()])
    assert results[0] == pytest.approx(results[1], rel=1e-5, abs=1e-6)


def test_fft_helpers_match_torch():
    torch = require_torch()   # the transforms themselves: tests/test_fft.py
    assert cthtorch.fft.fftfreq(5).tolist() == pytest.approx(torch.fft.fftfreq(5).tolist())
    assert cthtorch.fft.rfftfreq(6, 0.5).tolist() == pytest.approx(torch.fft.rfftfreq(6, 0.5).tolist())
    x = cthtorch.arange(6.0).reshape(2, 3)
    assert cthtorch.fft.fftshift(x).tolist() == torch.fft.fftshift(torch.arange(6.0).reshape(2, 3)).tolist()


def test_legacy_storage_view_matches_torch():
    torch = require_torch()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (cthtorch, torch):
            x = lib.arange(6.0).reshape(2, 3)
            s = x.storage()
            assert (len(s), s.size(), s.tolist(), s[4], s.element_size(), s.nbytes()) == \
                (6, 6, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 4.0, 4, 24)
            assert x[1].storage().data_ptr() == s.data_ptr()
        assert repr(cthtorch.tensor([1, 2]).storage()) == repr(torch.tensor([1, 2]).storage())
    cthtorch.storage._reset_warn_typed_storage_removal()   # torch warns once per process, as cthtorch does
    with pytest.warns(UserWarning, match="TypedStorage is deprecated") as rec:
        cthtorch.ones(1).storage()
    assert rec[0].filename == __file__   # names the line calling .storage() (dlwpt p1ch3 prints it), as torch's does
    cthtorch.storage._reset_warn_typed_storage_removal()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated") as rec:
        cthtorch.TypedStorage([1.0])
    assert rec[0].filename == __file__


def test_nn_attention_and_common_types():
    torch = require_torch()
    ct = cthtorch
    from cthtorch.nn.attention import SDPBackend, sdpa_kernel
    from cthtorch.nn.common_types import _size_2_t  # noqa: F401
    assert list(SDPBackend.__members__) == list(torch.nn.attention.SDPBackend.__members__)
    assert [int(b) for b in SDPBackend] == [int(getattr(torch.nn.attention.SDPBackend, n))
                                            for n in SDPBackend.__members__]
    q = ct.randn(1, 2, 3, 4)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert ct.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 4)
    with pytest.raises(AssertionError, match="must be an instance of SDPBackend"):
        with sdpa_kernel(3):
            pass


def test_set_default_tensor_type_warns_once_per_process_as_torch():
    """torch 2.1 deprecated it with a TORCH_WARN_ONCE: the first call in a process warns, later ones do not"""
    require_torch()
    code = ("import importlib, sys, warnings\nm = importlib.import_module(sys.argv[1])\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    m.set_default_tensor_type(m.DoubleTensor); d = m.ones(1).dtype\n"
            "    m.set_default_tensor_type('torch.FloatTensor')\n"
            "print(str(d).split('.')[-1], m.ones(1).dtype is m.float32, len(w), w[0].category.__name__,\n"
            "      str(w[0].message).split(' (Triggered')[0])\n")
    outs = oracle.fresh_process_outputs(code)
    assert outs[0] == outs[1] and outs[0].startswith("float64 True 1 UserWarning")
