"""Corners of the torch namespace that real programs touch: torch.version,
the absent-accelerator modules, legacy storage classes, torch-level
functional aliases, utils._pytree, utils.benchmark and GradScaler; each
checked against torch."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import cthtorch
import oracle

torch = oracle.require_torch()


def _outcome(fn):
    """('ok', value) or (exception type name, message) of calling fn."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - comparing whatever each raises
        return type(e).__name__, str(e)


# ---- torch.version ----

def test_version_module_matches_torch_fields():
    for name in ("cuda", "hip", "rocm", "xpu", "debug"):
        assert getattr(cthtorch.version, name) == getattr(torch.version, name)
    assert cthtorch.version.__version__ == cthtorch.__version__
    assert isinstance(cthtorch.version.git_version, str)
    assert sorted(cthtorch.version.__all__) == sorted(torch.version.__all__)


def test_version_prints_none_for_cuda():
    code = "import cthtorch as torch; print(torch.version.cuda, torch.version.hip)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "None None"


@pytest.mark.parametrize("a,b", [("2.13.0+cpu", "2.2"), ("2.13.0+cpu", "2.13.0"), ("2.0", "2.0.0"),
                                 ("2.0.dev1", "2.0a1"), ("2.0rc1", "2.0"), ("2.0.post1", "2.0"),
                                 ("2.0+cpu", "2.0+abc"), ("parrot", "2.0"), ("1.10.0", "1.9")])
def test_torch_version_compares_like_torch(a, b):
    from torch.torch_version import TorchVersion as Ref
    from cthtorch.torch_version import TorchVersion as Ours
    for op in ("__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"):
        assert getattr(Ours(a), op)(b) == getattr(Ref(a), op)(b), (a, b, op)
    assert (Ours(a) > (1, 2)) == (Ref(a) > (1, 2)) if a != "parrot" else True


def test_dunder_version_is_a_torch_version():
    v = cthtorch.__version__
    assert isinstance(v, str) and v.startswith("2.13.0")
    assert v >= "2.2" and v < (2, 14) and v > (1, 13)
    assert hash(v) == hash(str(v))


def test_config_reports_have_torchs_layout():
    """torch.__config__.show() / parallel_info(), which environment reports print: the same headings and
    thread lines as torch's, the module importable by its dotted name"""
    cfg = importlib.import_module("cthtorch.__config__")
    assert cthtorch.__config__ is cfg
    show, theirs = cfg.show(), torch.__config__.show()
    assert show.splitlines()[0] == theirs.splitlines()[0] == "PyTorch built with:"
    assert "TORCH_VERSION=2.13.0" in show and "USE_CUDA=0" in show and "USE_CUDA=0" in theirs
    info, tinfo = cfg.parallel_info(), torch.__config__.parallel_info()
    for head in ("ATen/Parallel:", "Environment variables:", "ATen parallel backend: OpenMP"):
        assert head in info and head in tinfo
    assert "at::get_num_threads() : %d" % cthtorch.get_num_threads() in info


# ---- accelerators absent from this build ----

_DEVICE_CALLS = {
    "mps": ["is_available", "device_count", "synchronize", "empty_cache", "get_rng_state", "seed",
            "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
            ("manual_seed", 0), ("set_per_process_memory_fraction", 0.5)],
    "xpu": ["is_available", "device_count", "is_initialized", "synchronize", "empty_cache", "current_device",
            "get_device_name", "get_rng_state", "memory_allocated", "max_memory_allocated", "memory_reserved",
            "seed", "seed_all", "initial_seed", "get_device_properties", "is_bf16_supported", "init",
            "current_stream", "get_arch_list", "get_rng_state_all", "mem_get_info", "memory_stats", "Event",
            "Stream", ("manual_seed", 0), ("manual_seed_all", 0), ("set_device", 0)],
    "mtia": ["is_available", "device_count", "is_initialized", "synchronize", "empty_cache", "current_device",
             "init", "get_rng_state", "initial_seed", "memory_allocated", "is_bf16_supported", "snapshot",
             ("manual_seed", 0), ("set_device", 0)],
}


@pytest.mark.parametrize("dev", sorted(_DEVICE_CALLS))
def test_absent_device_module_answers_like_torch(dev):
    ours, ref = importlib.import_module("cthtorch." + dev), getattr(torch, dev)
    for call in _DEVICE_CALLS[dev]:
        name, args = (call, ()) if isinstance(call, str) else (call[0], call[1:])
        a = _outcome(lambda: getattr(ours, name)(*args))
        b = _outcome(lambda: getattr(ref, name)(*args))
        if a[0] == "ok" and b[0] == "ok":
            assert a[1] == b[1], (dev, name)
        else:
            assert a[0] == b[0] and b[1].startswith(a[1]), (dev, name, a, b)


def test_backends_mps_is_an_importable_module():
    mod = importlib.import_module("cthtorch.backends.mps")
    import torch.backends.mps as ref
    assert cthtorch.backends.mps is mod
    assert mod.is_available() is ref.is_available() is False
    assert mod.is_built() is ref.is_built() is False
    assert _outcome(mod.is_macos13_or_newer) == _outcome(ref.is_macos13_or_newer)


def test_import_device_modules_in_a_fresh_interpreter():
    code = ("import cthtorch.mps, cthtorch.xpu, cthtorch.backends.mps as b; import cthtorch as torch; "
            "print(torch.mps.is_available(), torch.xpu.device_count(), b.is_built())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False 0 False"


# ---- torch-level functional aliases ----

def _same(a, b, atol=1e-5):
    """Compares a cthtorch result with torch's: tensors by dtype, shape and
    values, sequences item by item, anything else by ==."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, cthtorch.Tensor), (a, b)
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (a, b)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-5)
    elif isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, atol)
    else:
        assert a == b, (a, b)


def _compare(call, atol=1e-5):
    """Runs call(module, make) with cthtorch and with torch, where make(*shape)
    builds the same seeded float32 tensor in either; results or error types match."""
    results = []
    for mod in (cthtorch, torch):
        rng = np.random.default_rng(0)

        def make(*shape, low=None, mod=mod, rng=rng):
            arr = rng.standard_normal(shape) if low is None else rng.uniform(low, 1.0, shape)
            return mod.tensor(arr.astype("float32"))
        results.append(_outcome(lambda: call(mod, make)))
    (kind_a, a), (kind_b, b) = results
    assert kind_a == kind_b, (results[0], results[1])
    if kind_a == "ok":
        _same(a, b, atol)
    return results[0]


_LOSS_CALLS = {
    "kl_div_default": lambda t, m: t.kl_div(m(3, 4), m(3, 4, low=0.0)),
    "kl_div_sum_log_target": lambda t, m: t.kl_div(m(3, 4), m(3, 4), 2, log_target=True),
    "kl_div_mean": lambda t, m: t.kl_div(m(3, 4), m(3, 4, low=0.0), 1),
    "kl_div_str_reduction": lambda t, m: t.kl_div(m(3, 4), m(3, 4), "mean"),
    "kl_div_log_target_positional": lambda t, m: t.kl_div(m(3, 4), m(3, 4), 1, True),
    "poisson_nll_loss": lambda t, m: t.poisson_nll_loss(m(3, 4), m(3, 4, low=0.0), True, True, 1e-8, 2),
    "poisson_nll_loss_linear": lambda t, m: t.poisson_nll_loss(m(3, 4, low=0.1), m(3, 4, low=0.0), False, False,
                                                               1e-8, 1),
    "poisson_nll_loss_missing": lambda t, m: t.poisson_nll_loss(m(3), m(3)),
    "margin_ranking_loss": lambda t, m: t.margin_ranking_loss(m(5), m(5), t.tensor([1., -1, 1, -1, 1]), 0.5, 2),
    "margin_ranking_loss_default": lambda t, m: t.margin_ranking_loss(m(5), m(5), -t.ones(5)),
    "triplet_margin_loss": lambda t, m: t.triplet_margin_loss(m(3, 4), m(3, 4), m(3, 4), 1.0, 2, 1e-6, True, 1),
    "triplet_margin_loss_default": lambda t, m: t.triplet_margin_loss(m(3, 4), m(3, 4), m(3, 4)),
    "hinge_embedding_loss": lambda t, m: t.hinge_embedding_loss(m(4), t.tensor([1., -1, 1, -1]), 0.5, 1),
    "cosine_embedding_loss": lambda t, m: t.cosine_embedding_loss(m(3, 4), m(3, 4), t.tensor([1., -1, 1]), 0.1),
    "bce_with_logits": lambda t, m: t.binary_cross_entropy_with_logits(m(3, 4), m(3, 4, low=0.0), m(4),
                                                                       t.full((4,), 2.0), 2),
    "bce_with_logits_float_reduction": lambda t, m: t.binary_cross_entropy_with_logits(m(2), m(2), reduction=1.0),
    "bce_with_logits_bool_reduction": lambda t, m: t.binary_cross_entropy_with_logits(m(2), m(2), reduction=True),
    "out_of_range_reduction_is_none": lambda t, m: t.margin_ranking_loss(m(3), m(3), t.ones(3), 0.0, 7),
    "ctc_loss_lists": lambda t, m: t.ctc_loss(m(5, 2, 4).log_softmax(2), t.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2]),
    "ctc_loss_mean": lambda t, m: t.ctc_loss(m(5, 2, 4).log_softmax(2), t.tensor([[1, 2], [1, 1]]),
                                             t.tensor([5, 4]), t.tensor([2, 1]), 0, 1),
    "matrix_rank": lambda t, m: t.matrix_rank(t.eye(3)),
}


@pytest.mark.parametrize("name", sorted(_LOSS_CALLS))
def test_torch_level_losses(name):
    _compare(_LOSS_CALLS[name])


def test_reduction_type_error_text_matches_torch():
    kind, msg = _compare(_LOSS_CALLS["kl_div_str_reduction"])
    assert msg == "kl_div(): argument 'reduction' (position 3) must be int, not str"
    kind, msg = _compare(_LOSS_CALLS["matrix_rank"])
    assert kind == "RuntimeError" and "torch.linalg.matrix_rank" in msg


_NET_CALLS = {
    "constant_pad_nd": lambda t, m: t.constant_pad_nd(m(3, 4), [1, 1]),
    "constant_pad_nd_value_negative": lambda t, m: t.constant_pad_nd(m(3, 4), [-1, 0, 2, 1], 2.5),
    "constant_pad_nd_odd": lambda t, m: t.constant_pad_nd(m(3, 4), (1, 1, 1)),
    "native_dropout_eval": lambda t, m: t.native_dropout(m(3, 4), 0.5, False),
    "native_dropout_int": lambda t, m: t.native_dropout(t.arange(3), 0.5, True),
    "instance_norm": lambda t, m: t.instance_norm(m(2, 3, 4), m(3), m(3), None, None, True, 0.1, 1e-5, False),
    "instance_norm_no_stats": lambda t, m: t.instance_norm(m(2, 3, 4), None, None, None, None, False, 0.1, 1e-5,
                                                           False),
    "lstm_cell": lambda t, m: t.lstm_cell(m(2, 3), (m(2, 4), m(2, 4)), m(16, 3), m(16, 4), m(16), m(16)),
    "lstm_cell_one_state": lambda t, m: t.lstm_cell(m(2, 3), (m(2, 4),), m(16, 3), m(16, 4)),
    "gru_cell": lambda t, m: t.gru_cell(m(2, 3), m(2, 4), m(12, 3), m(12, 4), m(12), m(12)),
    "rnn_tanh_cell": lambda t, m: t.rnn_tanh_cell(m(2, 3), m(2, 4), m(4, 3), m(4, 4)),
    "rnn_relu_cell": lambda t, m: t.rnn_relu_cell(m(2, 3), m(2, 4), m(4, 3), m(4, 4), m(4), m(4)),
    "get_device": lambda t, m: t.get_device(m(2)),
    "get_device_int": lambda t, m: t.get_device(3),
    "binomial_int_count": lambda t, m: t.binomial(t.tensor([10, 5]), t.tensor([0.5, 0.2])),
    "binomial_dtype_mismatch": lambda t, m: t.binomial(t.tensor([10., 5.]), t.tensor([0.5, 0.2], dtype=t.float64)),
    "binomial_certain": lambda t, m: t.binomial(t.tensor([10., 0., 7.]), t.tensor([1.0, 0.5, 0.0])),
}
for _im in (0, 1):
    for _pm in (0, 1, 2):
        for _ac in (False, True):
            _NET_CALLS["grid_sampler_%d_%d_%d" % (_im, _pm, _ac)] = (
                lambda t, m, im=_im, pm=_pm, ac=_ac: t.grid_sampler(m(1, 2, 3, 3), 1.2 * m(1, 2, 2, 2).tanh(),
                                                                    im, pm, ac))
for _mode in (0, 1, 2):
    for _pad in (None, 4):
        _NET_CALLS["embedding_bag_%d_%s" % (_mode, _pad)] = (
            lambda t, m, mode=_mode, pad=_pad: t.embedding_bag(m(10, 3), t.tensor([1, 2, 4, 5, 4, 3]),
                                                               t.tensor([0, 2]), False, mode, False, None, False, pad))
_NET_CALLS["embedding_bag_last_offset"] = lambda t, m: t.embedding_bag(
    m(10, 3), t.tensor([1, 2, 4, 5, 4, 3]), t.tensor([0, 2, 6]), False, 1, False, None, True)


@pytest.mark.parametrize("name", sorted(_NET_CALLS))
def test_torch_level_layers(name):
    _compare(_NET_CALLS[name])


def test_native_dropout_draws_like_torch():
    for p, train in ((0.5, None), (0.3, True)):
        cthtorch.manual_seed(0)
        torch.manual_seed(0)
        _same(cthtorch.native_dropout(cthtorch.ones(4, 5), p, train), torch.native_dropout(torch.ones(4, 5), p, train))


def test_instance_norm_running_stats_like_torch():
    def run(t, m):
        rm, rv = t.zeros(3), t.ones(3)
        out = t.instance_norm(m(2, 3, 4), None, None, rm, rv, True, 0.1, 1e-5, False)
        return out, rm, rv, t.instance_norm(m(2, 3, 4), None, None, rm, rv, False, 0.1, 1e-5, False)
    _compare(run)


def test_instance_norm_module_tracks_running_stats_like_torch():
    def run(t, m):
        mod = t.nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
        y = mod(m(4, 3, 5))
        mod.eval()
        return y, mod.running_mean, mod.running_var, mod(m(4, 3, 5))
    _compare(run)


def test_in_place_dropouts_return_their_input():
    for name in ("alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_"):
        x = cthtorch.randn(2, 3, 4)
        ref = x.clone()
        assert getattr(cthtorch, name)(x, 0.5, False) is x and cthtorch.equal(x, ref)
        cthtorch.manual_seed(0)
        assert getattr(cthtorch, name)(x, 0.5, True) is x and not cthtorch.equal(x, ref)
    x = cthtorch.randn(8, 16, 2)
    cthtorch.manual_seed(0)
    y = cthtorch.feature_alpha_dropout(x, 0.5, True)
    # a dropped unit becomes the constant -alpha*a*(1-p); whole channels drop together
    alpha, p = 1.7580993408473766, 0.5
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    dropped = (y - (-alpha * a * (1 - p))).abs() < 1e-5
    assert cthtorch.equal(dropped[:, :, 0], dropped[:, :, 1]) and 0 < int(dropped.sum()) < dropped.numel()
    assert cthtorch.feature_alpha_dropout(x, 0.5, False) is x


def test_binomial_samples_have_binomial_moments():
    cthtorch.manual_seed(0)
    s = cthtorch.binomial(cthtorch.full((20000,), 12.0), cthtorch.full((20000,), 0.25))
    assert s.dtype == cthtorch.float32
    assert abs(s.mean().item() - 3.0) < 0.05 and abs(s.var().item() - 2.25) < 0.1
    assert s.min().item() >= 0 and s.max().item() <= 12 and cthtorch.equal(s, s.round())


# ---- legacy storage classes ----

_STORAGE_NAMES = ("FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
                  "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage")


@pytest.fixture
def quiet():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _storage_outcome(call):
    """call(lib) for cthtorch and torch; class names in messages made comparable."""
    a = _outcome(lambda: call(cthtorch))
    b = _outcome(lambda: call(torch))
    if a[0] != "ok" or b[0] != "ok":
        clean = [(k, m.replace("cthtorch.", "torch.") if isinstance(m, str) else m) for k, m in (a, b)]
        return clean
    return a, b


@pytest.mark.parametrize("name", _STORAGE_NAMES)
def test_legacy_storage_classes_match_torch(quiet, name):
    for make in (lambda lib: getattr(lib, name)(3), lambda lib: getattr(lib, name)([1, 0, 1])):
        ours, ref = make(cthtorch), make(torch)
        assert type(ours).__name__ == type(ref).__name__ == "TypedStorage"
        assert str(ours.dtype) == str(ref.dtype) == str(getattr(torch, name).dtype)
        assert len(ours) == len(ref) == 3 and ours.size() == 3
        assert isinstance(ours, getattr(cthtorch, name)) and isinstance(ours, cthtorch.TypedStorage)
        assert ours.type() == ref.type() and ours.element_size() == ref.element_size()
        assert ours.nbytes() == ref.nbytes()
    ours, ref = getattr(cthtorch, name)([1, 0, 1]), getattr(torch, name)([1, 0, 1])
    assert ours.tolist() == ref.tolist() and [ours[i] for i in (0, -1)] == [ref[i] for i in (0, -1)]
    assert type(ours[0]) is type(ref[0])
    assert repr(ours) == repr(ref)


def test_storage_alias_and_isinstance(quiet):
    assert cthtorch.Storage is cthtorch.FloatStorage and torch.Storage is torch.FloatStorage
    s = cthtorch.DoubleStorage([1.5, 2.5])
    assert not isinstance(s, cthtorch.FloatStorage) and isinstance(s, cthtorch.DoubleStorage)
    assert isinstance(cthtorch.zeros(2).storage(), cthtorch.FloatStorage)
    assert cthtorch.is_storage(s) and cthtorch.is_storage(cthtorch.zeros(1).untyped_storage())
    assert not cthtorch.is_storage(cthtorch.zeros(1)) and not cthtorch.is_storage([1])
    assert repr(cthtorch.FloatStorage()) == repr(torch.FloatStorage())


@pytest.mark.parametrize("call", [
    lambda t: t.FloatStorage(2.5),
    lambda t: t.FloatStorage(3, dtype=t.int32),
    lambda t: t.FloatStorage(2, device="cpu"),
    lambda t: t.FloatStorage(2, 3),
    lambda t: t.FloatStorage(t.zeros(2)),
    lambda t: t.FloatStorage(t.zeros(2).untyped_storage()),
    lambda t: t.FloatStorage([1, 2, 3])[5],
    lambda t: t.FloatStorage([1, 2, 3])[-4],
    lambda t: t.FloatStorage([1, 2, 3])[0:2],
    lambda t: t.FloatStorage("abc"),
    lambda t: t.FloatStorage(wrap_storage=t.tensor([1.0, 2.0]).untyped_storage()).tolist(),
    lambda t: t.LongStorage([[1, 2], [3, 4]]).tolist(),
    lambda t: t.LongStorage([1.7]).tolist(),
    lambda t: t.FloatStorage.from_buffer(b"\x00\x00\x80?\x00\x00\x00@", "little").tolist(),
    lambda t: t.FloatStorage.from_buffer(b"?\x80\x00\x00", "big").tolist(),
    lambda t: list(t.FloatStorage([1, 2])),
])
def test_storage_construction_and_errors_match_torch(quiet, call):
    a, b = _storage_outcome(call)
    assert a[0] == b[0], (a, b)
    if a[0] == "ok" or "out of range" in b[1]:
        assert a[1] == b[1]
    elif "received an invalid combination" in b[1]:   # the last line names the offending type, spelt per library
        assert a[1].rsplit("\n", 1)[0] == b[1].rsplit("\n", 1)[0]


def test_storage_conversions_and_writes(quiet):
    for lib in (cthtorch, torch):
        s = lib.FloatStorage([1.5, 0.0, -2.0])
        s[0] = 7
        assert s.tolist() == [7.0, 0.0, -2.0]
        assert s.clone().tolist() == s.tolist() and s.clone().data_ptr() != s.data_ptr()
        assert s.long().tolist() == [7, 0, -2] and str(s.double().dtype) == "torch.float64"
        assert s.bool().tolist() == [True, False, True] and s.float().data_ptr() != s.data_ptr()
        assert s.cpu() is not s and s.cpu().data_ptr() == s.data_ptr()
        assert lib.FloatStorage(2).fill_(3).tolist() == [3.0, 3.0]
        assert lib.FloatStorage(2).copy_(lib.FloatStorage([4, 5])).tolist() == [4.0, 5.0]
        assert not s.is_pinned()


def test_storage_sizeof_counts_its_bytes(quiet):
    """sys.getsizeof of a storage grows with the bytes it holds, as torch's (torchinfo reports it as Input size)"""
    import sys
    for lib in (cthtorch, torch):
        small, big = lib.zeros(6).untyped_storage(), lib.zeros(1006).untyped_storage()
        assert sys.getsizeof(big) - sys.getsizeof(small) == 4000
        small, big = lib.zeros(6).storage(), lib.zeros(1006).storage()
        assert sys.getsizeof(big) - sys.getsizeof(small) == 4000


def test_legacy_tensor_from_storage_shares_memory(quiet):
    for lib in (cthtorch, torch):
        s = lib.FloatStorage([1, 2, 3])
        t = lib.FloatTensor(s)
        assert t.tolist() == [1.0, 2.0, 3.0] and t.data_ptr() == s.data_ptr()
        t[0] = 9
        assert s[0] == 9.0
        assert lib.DoubleTensor(lib.DoubleStorage([1, 2])).dtype == lib.float64
    assert _storage_outcome(lambda t: t.DoubleTensor(t.FloatStorage([1, 2])))[0] == \
        _storage_outcome(lambda t: t.DoubleTensor(t.FloatStorage([1, 2])))[1]


@pytest.mark.parametrize("call", [
    lambda t: t.empty(0).set_(t.FloatStorage([1, 2, 3])).tolist(),
    lambda t: t.empty(0).set_(t.FloatStorage([1, 2, 3]), 1, (2,)).tolist(),
    lambda t: t.empty(0).set_(t.tensor([1., 2., 3., 4.]).untyped_storage(), 1, (3,), (1,)).tolist(),
    lambda t: t.empty(0).set_(t.tensor([1., 2., 3., 4.]).untyped_storage(), 0, (2, 2), (1, 2)).tolist(),
    lambda t: t.empty(0, dtype=t.float64).set_(t.FloatStorage([1, 2])),
])
def test_set_storage_matches_torch(quiet, call):
    a, b = _storage_outcome(call)
    assert a == b


def _int16_bytes(t):
    return t.arange(3, dtype=t.int16)


@pytest.mark.parametrize("call", [
    lambda t: repr(_int16_bytes(t).untyped_storage()),
    lambda t: repr(t.UntypedStorage(0)),
    lambda t: repr(t.empty(2, device="meta").untyped_storage()),
    lambda t: _int16_bytes(t).untyped_storage().tolist(),
    lambda t: list(_int16_bytes(t).untyped_storage()),
    lambda t: [_int16_bytes(t).untyped_storage()[i] for i in (2, -1, -6)],
    lambda t: _int16_bytes(t).untyped_storage()[6],
    lambda t: _int16_bytes(t).untyped_storage()[-7],
    lambda t: _int16_bytes(t).untyped_storage()[1.5],
    lambda t: _int16_bytes(t).untyped_storage()[True],
    lambda t: (lambda x: (x.untyped_storage().fill_(300), x.tolist())[1])(_int16_bytes(t)),
    lambda t: (lambda x: (x.untyped_storage().fill_(-1), x.tolist())[1])(_int16_bytes(t)),
    lambda t: (lambda x: (x.untyped_storage().__setitem__(1, 257), x.tolist())[1])(_int16_bytes(t)),
    lambda t: _int16_bytes(t).untyped_storage().__setitem__(0, 1.5),
    lambda t: t.zeros(3, dtype=t.int16).untyped_storage().copy_(_int16_bytes(t).untyped_storage()).tolist(),
    lambda t: t.UntypedStorage(2).copy_(t.UntypedStorage(3)),
    lambda t: t.UntypedStorage(2).copy_(t.ones(2)),
    lambda t: (lambda s: (s.clone().tolist(), s.clone().data_ptr() != s.data_ptr()))(_int16_bytes(t).untyped_storage()),
    lambda t: (lambda s: s.cpu() is s)(_int16_bytes(t).untyped_storage()),
    lambda t: (lambda s: (s.type(), s.element_size(), s.is_pinned(), repr(s.new())))(_int16_bytes(t).untyped_storage()),
    lambda t: (lambda x: (x.untyped_storage()._cdata == x[1:].untyped_storage()._cdata,
                          x.untyped_storage()._cdata == x.clone().untyped_storage()._cdata))(_int16_bytes(t)),
    lambda t: (lambda x: x.untyped_storage().data_ptr() == x[1:].untyped_storage().data_ptr())(_int16_bytes(t)),
])
def test_untyped_storage_api_matches_torch(call):
    """torch.UntypedStorage as programs use it: bytes read and written by index, fill_/copy_/clone, its
    printing, and sharing detection through data_ptr() and _cdata."""
    a, b = _storage_outcome(call)
    assert a == b


def test_storage_warns_once_like_torch():
    import warnings
    cthtorch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cthtorch.FloatStorage(2)
        cthtorch.ones(1).storage()
    assert [str(w.message)[:25] for w in caught] == ["TypedStorage is deprecate"]


# ---- torch.utils._pytree ----

import collections  # noqa: E402

import cthtorch.utils._pytree as cpt  # noqa: E402

_Pair = collections.namedtuple("_Pair", "a b")
_TREES = [
    [None, 1, (2, {"b": 3, "a": 4})],
    {"b": 1, "a": [2, 3]},
    collections.OrderedDict(a=1, z=(2,)),
    collections.defaultdict(list, a=1),
    collections.deque([1, 2], maxlen=3),
    _Pair(1, [2, 3]),
    [],
    {},
    5,
    None,
]


@pytest.mark.parametrize("tree", _TREES, ids=[type(t).__name__ for t in _TREES])
def test_pytree_flatten_unflatten_like_torch(tree):
    import warnings
    import torch.utils._pytree as tpt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        leaves, spec = cpt.tree_flatten(tree)
        ref_leaves, ref_spec = tpt.tree_flatten(tree)
        assert leaves == ref_leaves and repr(spec) == repr(ref_spec)
        assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
            (ref_spec.num_leaves, ref_spec.num_nodes, ref_spec.num_children)
        rebuilt = cpt.tree_unflatten([x for x in leaves], spec)
        assert rebuilt == tpt.tree_unflatten(ref_leaves, ref_spec) and type(rebuilt) is type(tree)
        assert cpt.tree_map(lambda x: (x, 0), tree) == tpt.tree_map(lambda x: (x, 0), tree)
        assert cpt.tree_is_leaf(tree) == tpt.tree_is_leaf(tree)


@pytest.mark.parametrize("call", [
    lambda p: p.tree_unflatten([1, 2], p.tree_structure([1, (2, 3)])),
    lambda p: p.tree_map(lambda a, b: a + b, [1, 2], [1]),
    lambda p: p.tree_map(lambda a, b: a + b, [1, 2], (1, 2)),
    lambda p: p.tree_map(lambda a, b: (a, b), {"a": 1}, {"b": 1}),
    lambda p: p.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, {"b": 20, "a": 10}),
    lambda p: p.tree_map(lambda a, b: (a, b), [1, [2]], [1, 3]),
    lambda p: p.tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]),
    lambda p: p.tree_map(lambda a, b: (a, b), [1, 2], [[5], (6, 7)]),
    lambda p: p.tree_map_only(int, lambda x: x * 10, [1, "a", 2.0]),
    lambda p: p.tree_map_only((int, float), lambda x: -x, {"a": 1, "b": "s", "c": 2.5}),
    lambda p: (p.tree_all(lambda x: x > 0, [1, 2]), p.tree_any(lambda x: x > 1, (1, 2))),
    lambda p: (p.tree_all_only(int, lambda x: x > 0, [1, "a", -1.0]),
               p.tree_any_only((float,), lambda x: x < 0, [1, "a", -1.0])),
    lambda p: p.tree_leaves([1, [2, 3]], is_leaf=lambda x: isinstance(x, list) and x == [2, 3]),
    lambda p: list(p.tree_iter([1, (2,)])),
    lambda p: p.tree_structure([1, (2, 3)]) == p.tree_structure([4, (5, 6)]),
    lambda p: p.tree_structure([1, (2, 3)]) == p.tree_structure([4, [5, 6]]),
])
def test_pytree_functions_like_torch(call):
    import torch.utils._pytree as tpt
    a, b = _outcome(lambda: call(cpt)), _outcome(lambda: call(tpt))
    assert a == b


def test_register_pytree_node_like_torch():
    import torch.utils._pytree as tpt

    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    for p in (cpt, tpt):
        p.register_pytree_node(Point, lambda o: ([o.x, o.y], None), lambda c, ctx: Point(*c))
        leaves, spec = p.tree_flatten([Point(1, 2), 3])
        assert leaves == [1, 2, 3]
        out = p.tree_map(lambda v: v * 10, Point(1, 2))
        assert (type(out), out.x, out.y) == (Point, 10, 20)
    assert repr(cpt.tree_structure([Point(1, 2)])) == repr(tpt.tree_structure([Point(1, 2)]))
    a = _outcome(lambda: cpt.register_pytree_node(Point, None, None))
    b = _outcome(lambda: tpt.register_pytree_node(Point, None, None))
    assert a[0] == b[0] == "ValueError" and a[1].endswith("is already registered as pytree node.")


def test_pytree_of_tensors_and_return_types():
    out = cthtorch.max(cthtorch.tensor([[1.0, 3.0], [2.0, 0.0]]), 0)
    leaves, spec = cpt.tree_flatten({"m": out, "x": cthtorch.ones(2)})
    assert len(leaves) == 3 and all(isinstance(t, cthtorch.Tensor) for t in leaves)
    back = cpt.tree_unflatten(leaves, spec)
    assert type(back["m"]) is type(out) and cthtorch.equal(back["m"].indices, out.indices)
    doubled = cpt.tree_map_only(cthtorch.Tensor, lambda t: t * 2, {"a": cthtorch.ones(1), "b": "keep"})
    assert doubled["b"] == "keep" and doubled["a"].item() == 2.0
    seen = []
    assert cpt.tree_map_(seen.append, [1, (2,)]) == [1, (2,)] and seen == [1, 2]
    with pytest.raises(NotImplementedError, match="treespec_dumps"):
        cpt.treespec_dumps(cpt.tree_structure([1]))
    assert cthtorch.utils._pytree is cpt


# ---- GradScaler spellings ----

def _warnings_of(fn):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, sorted((w.category.__name__, str(w.message)) for w in caught)


def test_torch_grad_scaler_is_amp_grad_scaler():
    assert cthtorch.GradScaler is cthtorch.amp.GradScaler
    assert torch.GradScaler is torch.amp.GradScaler


@pytest.mark.parametrize("make", [
    lambda t: t.GradScaler("cpu", init_scale=8.0),
    lambda t: t.amp.GradScaler("cpu"),
    lambda t: t.cpu.amp.GradScaler(init_scale=4.0),
    lambda t: t.cuda.amp.GradScaler(enabled=False),
    lambda t: t.cuda.amp.GradScaler(),
    lambda t: t.amp.GradScaler(),
    lambda t: t.GradScaler("cpu", enabled=False),
])
def test_grad_scaler_spellings_match_torch(make):
    def run(lib):
        scaler, warned = _warnings_of(lambda: make(lib))
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        loss = (w * w).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        return (scaler.is_enabled(), scaler.get_scale(), scaled.item(), w.tolist(), scaler.state_dict(),
                type(scaler).__name__, warned)
    ours, ref = run(cthtorch), run(torch)
    ours_warned = [(k, m.replace("cthtorch", "torch")) for k, m in ours[-1]]
    assert ours[:-1] == ref[:-1] and ours_warned == ref[-1]


def test_cpu_amp_autocast_spelling():
    (ours, ow), (ref, rw) = (_warnings_of(lambda lib=lib: lib.cpu.amp.autocast()) for lib in (cthtorch, torch))
    assert ow == rw and ours.fast_dtype == cthtorch.bfloat16 and str(ref.fast_dtype) == "torch.bfloat16"
    with ours:
        assert cthtorch.is_autocast_enabled("cpu")
    from cthtorch.cpu.amp import GradScaler, autocast  # noqa: F401


# ---- torch.utils.benchmark ----

import cthtorch.utils.benchmark as cbench  # noqa: E402

_RAW_TIMES = [[2.5e-3], [1e-5, 1.2e-5, 0.9e-5, 1.1e-5, 3e-5], [4.0, 4.1, 3.9, 4.05], [5e-8, 5e-8, 5.1e-8, 9e-8]]
_SPECS = [dict(stmt="x + 1", setup="pass"),
          dict(stmt="y = x * 2\ny.sum()", setup="import math", label="mul", sub_label="small", description="d"),
          dict(stmt="x.sum()", setup="x = 1\nz = 2", num_threads=4),
          dict(stmt="f()", setup="", sub_label="s", env="e")]


@pytest.mark.parametrize("case", range(len(_RAW_TIMES)))
def test_measurement_statistics_and_repr_match_torch(case):
    from torch.utils import benchmark as tbench
    from torch.utils.benchmark.utils.common import TaskSpec as TSpec
    from cthtorch.utils.benchmark.utils.common import TaskSpec as CSpec
    ours = cbench.Measurement(10, list(_RAW_TIMES[case]), CSpec(**_SPECS[case]))
    ref = tbench.Measurement(10, list(_RAW_TIMES[case]), TSpec(**_SPECS[case]))
    assert ours.times == ref.times
    for name in ("median", "mean", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(ref, name), rel=1e-12), name
    assert (ours.has_warnings, ours.title, ours.as_row_name, ours.num_threads) == \
        (ref.has_warnings, ref.title, ref.as_row_name, ref.num_threads)
    assert ours.env == ref.env == _SPECS[case].get("env")
    if len(_RAW_TIMES[case]) > 1:
        assert ours.significant_figures == ref.significant_figures
    assert repr(ours).split("\n")[1:] == repr(ref).split("\n")[1:]
    assert repr(ours).startswith("<torch.utils.benchmark.utils.common.Measurement object at 0x")
    merged, ref_merged = cbench.Measurement.merge([ours, ours]), tbench.Measurement.merge([ref, ref])
    assert len(merged) == len(ref_merged) == 1 and merged[0].times == ref_merged[0].times


def test_timer_measures_a_statement():
    x = cthtorch.ones(100)
    calls = []
    t = cbench.Timer("x + 1", globals={"x": x}, label="add", sub_label="ones(100)", description="d")
    m = t.timeit(100)
    assert isinstance(m, cbench.Measurement) and m.number_per_run == 100 and len(m.times) == 1 and m.mean > 0
    assert repr(m).split("\n")[1:3] == ["add: ones(100)", "d"]
    m = t.blocked_autorange(callback=lambda n, s: calls.append((n, s)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(calls) == len(m.times) and m.median > 0 and m.iqr >= 0
    m = cbench.Timer("torch.ones(3).sum()", setup="import math").adaptive_autorange(max_run_time=0.1)
    assert len(m.times) >= 1 and m.mean > 0
    assert cbench.Timer("y = z", setup="z = torch.zeros(2)", num_threads=2).timeit(10).num_threads == 2
    assert cthtorch.get_num_threads() >= 1


@pytest.mark.parametrize("call", [
    lambda b: b.Timer(lambda: 1),
    lambda b: b.Timer("x", global_setup="int a;"),
    lambda b: b.Timer("x", language="rust"),
    lambda b: b.Timer("pass").repeat(),
    lambda b: b.Timer("pass").autorange(),
])
def test_timer_errors_match_torch(call):
    from torch.utils import benchmark as tbench
    assert _outcome(lambda: call(cbench)) == _outcome(lambda: call(tbench))


def test_benchmark_parts_not_implemented():
    for make in (lambda: cbench.Timer("pass", language="c++"),
                 lambda: cbench.Timer("pass").collect_callgrind()):
        with pytest.raises(NotImplementedError, match="cthtorch"):
            make()
    assert cthtorch.utils.benchmark is cbench


def _fuzzed(bench, dtype_int32):
    """What a seeded Fuzzer yields: the benchmark recipe's loguniform sizes, then strict / uniform / float
    parameters, steps, dimension orders and an integer tensor, with the values of the first elements."""
    out = []
    f = bench.Fuzzer(parameters=[bench.FuzzedParameter("k0", minval=1, maxval=10000, distribution="loguniform"),
                                 bench.FuzzedParameter("k1", minval=1, maxval=10000, distribution="loguniform")],
                     tensors=[bench.FuzzedTensor("x", size=("k0", "k1"), min_elements=128, max_elements=10000000,
                                                 probability_contiguous=0.6)], seed=0)
    for t, tp, p in f.take(10):
        out.append((p, {k: tuple(v) if k == "order" else v for k, v in tp["x"].items()}, tuple(t["x"].shape),
                    t["x"].stride(), t["x"].flatten()[:3].tolist()))
    out.append(f.rejection_rate)
    f = bench.Fuzzer(parameters=[[bench.FuzzedParameter("a", minval=1, maxval=10, distribution="uniform", strict=True)],
                                 bench.FuzzedParameter("b", minval=1, maxval=10, distribution="uniform"),
                                 bench.FuzzedParameter("c", minval=0.5, maxval=2.0, distribution="uniform")],
                     tensors=[bench.FuzzedTensor("x", size=("a", "b", 3), steps=("b", 2, 1), probability_contiguous=0.3),
                              bench.FuzzedTensor("y", size=(3, "a"), dtype=dtype_int32)],
                     constraints=[lambda p: p["a"] + p["b"] > 9], seed=3)
    for t, tp, p in f.take(5):
        out.append((p, {n: {k: tuple(v) if k == "order" else v for k, v in tp[n].items()} for n in tp},
                    {n: (tuple(v.shape), v.stride(), v.flatten()[:4].tolist()) for n, v in t.items()}))
    out.append(f.rejection_rate)
    return out


def test_fuzzer_yields_torchs_parameters_layouts_and_values():
    from torch.utils import benchmark as tbench
    assert _fuzzed(cbench, cthtorch.int32) == _fuzzed(tbench, torch.int32)
    # the same seed gives the same sequence on every take; an alias takes its target's value
    f = cbench.Fuzzer([cbench.FuzzedParameter("n", 2, 9, "uniform"),
                       cbench.FuzzedParameter("m", distribution={1: 0.3, cbench.ParameterAlias("n"): 0.7})],
                      [cbench.FuzzedTensor("x", size=("n", "m"))], seed=1)
    first = [p for _, _, p in f.take(20)]
    assert first == [p for _, _, p in f.take(20)]
    assert all(p["m"] in (1, p["n"]) for p in first) and {1} < {p["m"] for p in first}
    with pytest.raises(NotImplementedError, match="roll_parameter"):
        cbench.FuzzedTensor("x", size=(2,), roll_parameter="r")


# ---- smaller names programs touch ----

@pytest.mark.parametrize("call", [
    lambda t: t.eig(t.eye(3)),
    lambda t: t.symeig(t.eye(3)),
    lambda t: t.lstsq(t.eye(3), t.eye(3)),
    lambda t: t.solve(t.eye(3), t.eye(3)),
    lambda t: t.matrix_rank(t.eye(3)),
    lambda t: (t.has_lapack, t.has_openmp),
    lambda t: (t.is_vulkan_available(), t.init_num_threads()),
    lambda t: [m.__name__.split(".")[-1] for m in (t.get_device_module("cpu"), t.get_device_module(t.device("cuda")),
                                                   t.get_device_module(), t.get_device_module("cuda:0"),
                                                   t.get_device_module("mps"))],
    lambda t: (t.compiler.is_compiling(), t.compiler.is_dynamo_compiling(), t.compiler.is_exporting()),
    lambda t: (t.compiler.disable(len)([1]), t.compiler.disable()(len)([1]),
               t.compiler.disable(recursive=False)(len)([1])),
    lambda t: t.compiler.allow_in_graph(len) is len,
])
def test_small_names_match_torch(call):
    assert _outcome(lambda: call(cthtorch)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize("call", [
    lambda t, m: t.norm_except_dim(m(2, 3), 2, 0),
    lambda t, m: t.norm_except_dim(m(2, 3), 2, 1),
    lambda t, m: t.norm_except_dim(m(2, 3, 4), 1, 1),
    lambda t, m: t.norm_except_dim(m(2, 3), 3, -1),
    lambda t, m: t.norm_except_dim(m(4)),
    lambda t, m: t.affine_grid_generator(m(1, 2, 3), [1, 1, 2, 3], False),
    lambda t, m: t.affine_grid_generator(m(2, 2, 3), [2, 1, 3, 2], True),
    lambda t, m: t.grid_sampler_2d(m(1, 2, 3, 3), m(1, 2, 2, 2).tanh(), 0, 1, False),
    lambda t, m: t.grid_sampler_2d(m(1, 2, 3, 3, 3), m(1, 2, 2, 2, 3), 0, 1, False),
    lambda t, m: t.native_channel_shuffle(m(1, 4, 2), 2),
])
def test_small_functions_match_torch(call):
    _compare(call)


def test_error_classes_and_compiler_module():
    assert issubclass(cthtorch.OutOfMemoryError, RuntimeError) and issubclass(cthtorch.AcceleratorError, RuntimeError)
    assert cthtorch.cuda.OutOfMemoryError is cthtorch.OutOfMemoryError
    with cthtorch.compiler.set_stance("force_eager"):
        assert cthtorch.compiler.list_backends() == []
    lin = cthtorch.nn.Linear(2, 2)
    assert cthtorch.compiler.compile(lin)._orig_mod is lin and cthtorch.compile(lin, disable=True) is lin
    with pytest.raises(RuntimeError, match="at start of device string: foo"):
        cthtorch.get_device_module("foo")


def test_compile_wraps_a_module_as_torchs_optimized_module(tmp_path):
    """torch.compile(module) is torch._dynamo.eval_frame.OptimizedModule around it (run eagerly here): the
    '_orig_mod.' state_dict prefix, attribute reads and writes passed through, train/eval shared, repr, the
    module's own results and gradients, pickling; a function and disable=True come back as given; torch's
    mode/options errors; torch._logging.set_logs"""
    seen = []
    for lib in (cthtorch, torch):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        opt = lib.compile(lin, mode="max-autotune-no-cudagraphs")
        x = lib.ones(4, 3)
        opt(x).sum().backward()
        opt.foo = 1
        opt.eval()
        path = str(tmp_path / ("m_%s.pt" % lib.__name__))
        lib.save(opt, path)
        back = lib.load(path, weights_only=False)
        seen.append([type(opt).__name__, type(opt).__module__.split(".", 1)[1], opt._orig_mod is lin,
                     opt.weight is lin.weight, list(opt.state_dict()), lin.foo, "foo" in opt.__dict__,
                     opt.training, lin.training, repr(opt), lin.weight.grad.tolist(), type(back).__name__,
                     type(back._orig_mod).__name__, lib.compile(lin, disable=True) is lin,
                     lib.compile(len) is len or lib.compile(len)([1]) == 1, lib.compile()(lin)._orig_mod is lin])
        with pytest.raises(RuntimeError, match="^Unrecognized mode=bad, should be one of: default, lite, "
                                               "reduce-overhead, max-autotune-no-cudagraphs, max-autotune$"):
            lib.compile(lin, mode="bad")
        with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
            lib.compile(lin, mode="default", options={})
        lib._logging.set_logs(graph_breaks=False, dynamo=30)
        with pytest.raises(TypeError):
            lib._logging.set_logs(not_a_log=True)
    assert seen[0] == seen[1]


def test_deprecated_autocast_setters_like_torch():
    def run(t):
        _, warned = _warnings_of(lambda: t.set_autocast_cpu_enabled(True))
        state = [t.is_autocast_enabled("cpu")]
        _warnings_of(lambda: t.set_autocast_cpu_enabled(False))
        _warnings_of(lambda: t.set_autocast_cpu_dtype(t.float16))
        state.append(str(t.get_autocast_dtype("cpu")))
        _warnings_of(lambda: t.set_autocast_cpu_dtype(t.bfloat16))
        _warnings_of(lambda: t.set_autocast_gpu_dtype(t.bfloat16))
        state.append(str(t.get_autocast_dtype("cuda")))
        _warnings_of(lambda: t.set_autocast_gpu_dtype(t.float16))
        return state, [(k, m.split(" (Triggered")[0]) for k, m in warned]
    assert run(cthtorch) == run(torch)


@pytest.mark.parametrize("call", [
    lambda t, m: t.nn.InstanceNorm1d(3)(m(3, 4)),
    lambda t, m: t.nn.InstanceNorm2d(3)(m(3, 2, 4)),
    lambda t, m: t.nn.InstanceNorm3d(2)(m(2, 2, 2, 3)),
    lambda t, m: t.nn.InstanceNorm1d(3)(m(5)),
    lambda t, m: t.nn.InstanceNorm2d(3)(m(1, 3, 2, 2, 2)),
    lambda t, m: t.nn.InstanceNorm1d(4, affine=True)(m(2, 3, 4)),
    lambda t, m: t.nn.LazyInstanceNorm1d()(m(2, 3, 4)),
    lambda t, m: repr(t.nn.InstanceNorm3d(2, affine=True)),
])
def test_instance_norm_modules_take_unbatched_input_like_torch(call):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare(call)


_SEG = {
    "lengths_" + red: (lambda t, m, red=red: t.segment_reduce(m(6), red, lengths=t.tensor([2, 0, 3, 1])))
    for red in ("sum", "mean", "max", "min", "prod", "amax", "amin")
}
_SEG.update({
    "initial_" + red: (lambda t, m, red=red: t.segment_reduce(m(6), red, lengths=t.tensor([2, 0, 3, 1]), initial=0.5))
    for red in ("sum", "mean", "max", "min", "prod")
})
_SEG.update({
    "offsets": lambda t, m: t.segment_reduce(m(6), "sum", offsets=t.tensor([0, 2, 2, 5, 6])),
    "2d_data": lambda t, m: t.segment_reduce(m(6, 2), "mean", lengths=t.tensor([2, 0, 3, 1])),
    "2d_lengths": lambda t, m: t.segment_reduce(m(2, 3), "sum", lengths=t.tensor([[1, 2], [3, 0]]), axis=1),
    "2d_offsets": lambda t, m: t.segment_reduce(m(2, 6), "max", offsets=t.tensor([[0, 2, 6], [0, 6, 6]]), axis=1),
    "bad_sum": lambda t, m: t.segment_reduce(m(6), "sum", lengths=t.tensor([2, 2])),
    "unsafe": lambda t, m: t.segment_reduce(m(6), "sum", lengths=t.tensor([2, 2]), unsafe=True),
    "bad_reduce": lambda t, m: t.segment_reduce(m(6), "bad", lengths=t.tensor([6])),
    "no_lengths": lambda t, m: t.segment_reduce(m(6), "sum"),
    "indices": lambda t, m: t.segment_reduce(m(6), "sum", indices=t.tensor([6])),
    "axis_range": lambda t, m: t.segment_reduce(m(6), "sum", lengths=t.tensor([6]), axis=1),
    "axis_not_last": lambda t, m: t.segment_reduce(m(2, 6), "sum", lengths=t.tensor([2, 4]), axis=1),
    "int_data": lambda t, m: t.segment_reduce(t.arange(6), "sum", lengths=t.tensor([6])),
    "negative": lambda t, m: t.segment_reduce(m(6), "sum", lengths=t.tensor([2, -1, 5])),
})


@pytest.mark.parametrize("name", sorted(_SEG))
def test_segment_reduce_matches_torch(name):
    _compare(_SEG[name])


def test_segment_reduce_gradient_like_torch():
    def run(t, m):
        x = m(6).requires_grad_()
        t.segment_reduce(x, "mean", lengths=t.tensor([2, 0, 3, 1]), initial=0.0).sum().backward()
        return x.grad
    _compare(run)


def test_tensor_constructor_over_a_storage_like_torch(quiet):
    for lib in (cthtorch, torch):
        s = lib.FloatStorage([1, 2])
        t = lib.Tensor(s)
        t[0] = 5
        assert s.tolist() == [5.0, 2.0] and type(t) is lib.Tensor
        assert lib.Tensor(lib.zeros(3).untyped_storage()).tolist() == [0.0, 0.0, 0.0]
        assert lib.Tensor(2, 3).shape == (2, 3) and lib.Tensor([1, 2]).tolist() == [1.0, 2.0]
    a, b = _storage_outcome(lambda t: t.Tensor(t.DoubleStorage([1, 2])))
    assert a == b and a[0] == "RuntimeError"


def _compare_tables(bench, spec_cls):
    def m(n, times, stmt, label="add", sub=None, desc="d", env=None, th=1):
        return bench.Measurement(n, times, spec_cls(stmt, "pass", label=label, sub_label=sub, description=desc,
                                                    env=env, num_threads=th))
    results = [m(100, [1e-3, 1.1e-3, 1.2e-3, 0.9e-3], "x+1", desc="float"), m(10, [2e-2, 2.1e-2], "x+1", desc="double"),
               m(100, [3e-3, 3e-3, 3.1e-3, 2.9e-3], "x*2", desc="float"),
               m(100, [5e-3, 9e-3, 1e-2, 4e-3], "x*2", desc="double", sub="mul"),
               m(100, [1e-3, 1.1e-3], "x+1", desc="float", th=4),
               m(100, [2.5e-4, 2.6e-4], "x-1", label="envs", desc="float", th=2, env="A"),
               m(100, [2.5e-4, 2.6e-4], "x-1", label="envs", desc="float", th=2, env="B"),
               m(100, [2.5e-4, 2.6e-4], "x-3", label="envs", desc="float", th=1, env="B"),
               m(100, [2.5e-4, 2.9e-4], "x-2", label="envs", desc="double", th=2, env="A"),
               m(1, [4.0, 4.2], "big", label="other", desc="cpu")]
    c = bench.Compare(results[:3])
    c.extend_results(results[3:])
    tables = [str(c)]
    for step in (c.trim_significant_figures, c.highlight_warnings, c.colorize, lambda: c.colorize(rowwise=True)):
        step()
        tables.append(str(c))
    return tables


def test_compare_tables_match_torch():
    from torch.utils import benchmark as tbench
    from torch.utils.benchmark.utils.common import TaskSpec as TSpec
    from cthtorch.utils.benchmark.utils.common import TaskSpec as CSpec
    ours, ref = _compare_tables(cbench, CSpec), _compare_tables(tbench, TSpec)
    assert ours == ref
    assert "\n4 threads: " in ours[0] and "(! XX%)" in ours[2] and "\x1b[92m" in ours[3]
    assert _outcome(lambda: cbench.Compare([1])) == _outcome(lambda: tbench.Compare([1]))


def test_pytree_key_paths_match_torch():
    import warnings
    import torch.utils._pytree as tpt

    def run(p):
        tree = [1, {"x": 2, "y": (3, _Pair(4, 5))}, collections.OrderedDict(z=6), collections.deque([7]),
                collections.defaultdict(int, k=8), None]
        pairs, spec = p.tree_flatten_with_path(tree)
        out = [(repr(k), p.keystr(k), v, p.key_get(tree, k)) for k, v in pairs]
        out.append(repr(spec))
        out.append(p.tree_map_with_path(lambda k, v: p.keystr(k), {"a": [1, 2]}))
        out.append(p.tree_map_with_path(lambda k, v, w: v + w, [1, 2], [10, 20]))
        out.append(p.tree_leaves_with_path([[1]], is_leaf=lambda x: x == [1]))
        out.append(repr(p.tree_flatten_with_path(5)))

        class NoKeys:
            def __init__(self, x):
                self.x = x
        p.register_pytree_node(NoKeys, lambda o: ([o.x], None), lambda c, ctx: NoKeys(*c))
        kind, msg = _outcome(lambda: p.tree_flatten_with_path([NoKeys(1)]))
        out.append((kind, msg.split(":")[0]))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, ref = run(cpt), run(tpt)
    assert [str(x) for x in ours] == [str(x) for x in ref]


def test_storage_module_names():
    from cthtorch.storage import TypedStorage, UntypedStorage
    assert UntypedStorage is cthtorch.UntypedStorage and TypedStorage is cthtorch.TypedStorage


# ---- torch.backends submodules, torch._dynamo, torch.types ----

@pytest.mark.parametrize("name", ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "cpu", "opt_einsum"])
def test_backends_submodules_import_like_torch(name):
    mod = importlib.import_module("cthtorch.backends." + name)
    assert getattr(cthtorch.backends, name) is mod
    ref = importlib.import_module("torch.backends." + name)
    assert hasattr(mod, "is_available") == hasattr(ref, "is_available")


def test_backends_flags_default_like_torch():
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        assert getattr(cthtorch.backends.cuda.matmul, name) == getattr(torch.backends.cuda.matmul, name)
    for name in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled"):
        assert getattr(cthtorch.backends.cuda, name)() == getattr(torch.backends.cuda, name)()
    assert cthtorch.backends.opt_einsum.enabled == torch.backends.opt_einsum.enabled
    assert cthtorch.backends.opt_einsum.strategy == torch.backends.opt_einsum.strategy
    assert cthtorch.backends.openmp.is_available() is True
    assert cthtorch.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert cthtorch.backends.mkldnn.enabled == torch.backends.mkldnn.enabled


def test_backends_cuda_matmul_refuses_unknown_names_like_torch():
    for lib in (cthtorch, torch):
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            lib.backends.cuda.matmul.foo = 1
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            lib.backends.cuda.matmul.foo
    old = cthtorch.backends.cuda.matmul.allow_tf32
    cthtorch.backends.cuda.matmul.allow_tf32 = True
    assert cthtorch.backends.cuda.matmul.allow_tf32 is True
    cthtorch.backends.cuda.matmul.allow_tf32 = old


def test_sdp_switches_share_sdpa_kernel_state_like_torch():
    from cthtorch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention import SDPBackend as TB, sdpa_kernel as tk
    for lib, kernel, B in ((cthtorch, sdpa_kernel, SDPBackend), (torch, tk, TB)):
        c = lib.backends.cuda
        with kernel(B.MATH):
            assert (c.flash_sdp_enabled(), c.math_sdp_enabled()) == (False, True)
        with pytest.warns(FutureWarning, match="sdp_kernel"):
            with c.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
                assert (c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled()) == \
                    (False, False, True)
        assert c.flash_sdp_enabled()
        c.enable_flash_sdp(False)
        try:
            assert not c.flash_sdp_enabled()
        finally:
            c.enable_flash_sdp(True)
    # turning the fused backend off sends sdpa to the math path, values unchanged
    q = cthtorch.randn(2, 3, 5, 8)
    fused = cthtorch.nn.functional.scaled_dot_product_attention(q, q, q)
    cthtorch.backends.cuda.enable_flash_sdp(False)
    try:
        math = cthtorch.nn.functional.scaled_dot_product_attention(q, q, q)
    finally:
        cthtorch.backends.cuda.enable_flash_sdp(True)
    np.testing.assert_allclose(fused.numpy(), math.numpy(), rtol=1e-5, atol=1e-6)


def test_dynamo_config_like_torch():
    import cthtorch._dynamo
    import torch._dynamo
    for name in ("suppress_errors", "cache_size_limit", "recompile_limit", "verbose", "optimize_ddp",
                 "capture_scalar_outputs", "automatic_dynamic_shapes", "assume_static_by_default"):
        assert getattr(cthtorch._dynamo.config, name) == getattr(torch._dynamo.config, name), name
    for lib in (cthtorch, torch):
        with pytest.raises(AttributeError, match="torch._dynamo.config.no_such_knob does not exist"):
            lib._dynamo.config.no_such_knob = 1
        with pytest.raises(AttributeError, match="torch._dynamo.config.no_such_knob does not exist"):
            lib._dynamo.config.no_such_knob
        assert lib._dynamo.is_compiling() is False
        lib._dynamo.reset()
    with pytest.raises(NotImplementedError):
        cthtorch._dynamo.explain(lambda x: x)(cthtorch.ones(1))


def _compiled_module_facts(lib):
    import copy
    import pickle
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
    c = lib.compile(m)
    c.tag = 5                                   # attribute writes reach the wrapped module
    c.train(False)
    facts = [type(c).__name__, type(c).__module__.replace("cthtorch", "torch"), c._orig_mod is m, m.tag,
             "tag" in c.__dict__, m.training, c.training, repr(c), len(c), c[0] if False else None,
             list(c.state_dict()), [n for n, _ in c.named_parameters()], [n for n, _ in c.named_modules()],
             isinstance(c, lib._dynamo.eval_frame.OptimizedModule), c(lib.ones(1, 2)).tolist(),
             type(copy.deepcopy(c)).__name__, list(pickle.loads(pickle.dumps(c)).state_dict()),
             type(lib.compile(m, mode="reduce-overhead")).__name__, lib.compile(len)([1, 2])]
    with pytest.raises(TypeError, match="Linear does not support len()"):
        len(lib.compile(lib.nn.Linear(1, 1)))
    with pytest.raises(TypeError, match="'OptimizedModule' object is not subscriptable"):
        c[0]
    return facts


def test_compile_wraps_a_module_as_torchs_optimized_module():
    """torch.compile(module) is an OptimizedModule around it (run eagerly here): state_dict keys carry
    '_orig_mod.' as nanoGPT's and llm.c's checkpoints do, model._orig_mod is the module, other attributes,
    train/eval and len go to it; a function comes back callable as itself"""
    assert _compiled_module_facts(cthtorch) == _compiled_module_facts(torch)


def test_inductor_config_like_torch():
    """llm.c's train_gpt2.py imports torch._inductor.config and sets coordinate_descent_tuning; the knobs keep
    torch's defaults, nested ones (triton, cpp) included, and misspelt ones are refused with torch's message"""
    import cthtorch._inductor.config as cc
    import torch._inductor.config as tc
    for name in ("coordinate_descent_tuning", "max_autotune", "freezing", "fx_graph_cache", "epilogue_fusion",
                 "shape_padding", "debug", "fallback_random"):
        assert getattr(cc, name) == getattr(tc, name), name
    assert (cc.triton.cudagraphs, cc.triton.unique_kernel_names) == (tc.triton.cudagraphs, tc.triton.unique_kernel_names)
    assert cc.cpp.threads == tc.cpp.threads
    for c, lib in ((cc, "torch"), (tc, "torch")):
        assert hasattr(c, "coordinate_descent_tuning")
        with c.patch(coordinate_descent_tuning=True):
            assert c.coordinate_descent_tuning is True
        assert c.coordinate_descent_tuning is False
        with pytest.raises(AttributeError, match="torch._inductor.config.no_such_knob does not exist"):
            c.no_such_knob = 1
        with pytest.raises(AttributeError, match="torch._inductor.config.triton.no_such_knob does not exist"):
            c.triton.no_such_knob = 1
        # dotted names reach the nested knobs, as torch's patch({"triton.cudagraphs": True}) does
        with c.patch({"triton.cudagraphs": True, "cpp.threads": 3}):
            assert (c.triton.cudagraphs, getattr(c, "cpp.threads")) == (True, 3)
        assert (c.triton.cudagraphs, c.cpp.threads) == (False, -1)
        with pytest.raises(AttributeError, match="torch._inductor.config.triton.no_such_knob does not exist"):
            with c.patch("triton.no_such_knob", 1):
                pass
        assert c.triton.cudagraphs is False
    assert cthtorch._inductor.config is cc


def test_types_aliases_like_torch():
    import torch.types as tt
    import cthtorch.types as ct
    assert ct._Number == tt._Number
    assert ct.__all__ == tt.__all__
    assert str(ct.Number) == str(tt.Number)
    assert str(ct.Device) == str(tt.Device)
    assert isinstance(cthtorch.ones(1), ct.Tensor)


def _dynamo_config_use(lib):
    c = lib._dynamo.config
    out = [c.guard_nn_modules, c.accumulated_cache_size_limit, hasattr(c, "cache_size_limit_warning")]
    with c.patch("recompile_limit", 3):
        out.append(c.cache_size_limit)
        with c.patch({"verbose": True, "cache_size_limit": 5}):
            out.append((c.verbose, c.recompile_limit))
        out.append((c.verbose, c.recompile_limit))
    out.append(c.cache_size_limit)

    @c.patch(suppress_errors=True)
    def f():
        return c.suppress_errors
    out.append((f(), c.suppress_errors))
    for bad in (lambda: c.patch({"verbose": True}, suppress_errors=True), lambda: c.patch("verbose"),
                lambda: c.patch(no_such_knob=1).__enter__()):
        try:
            bad()
        except (AssertionError, AttributeError) as e:
            out.append((type(e).__name__, str(e)))
    out.append(c.verbose)
    return out


def test_dynamo_config_aliases_and_patch_like_torch():
    """guard_nn_modules' default, cache_size_limit as recompile_limit's alias, patch() as a context manager and
    decorator (nested, restored, its argument checks), no knob torch lacks"""
    import torch._dynamo  # noqa: F401
    assert _dynamo_config_use(cthtorch) == _dynamo_config_use(torch)


def _mkldnn_switches(lib):
    m = lib.backends.mkldnn
    out = [(m.enabled, m.deterministic, m.fp32_precision)]
    with m.flags(enabled=False, deterministic=True, allow_tf32=False, fp32_precision="none"):
        out.append((m.enabled, m.deterministic, m.fp32_precision))
    out.append((m.enabled, m.deterministic, m.fp32_precision))
    for mod, kw in ((m, "level"), (lib.backends.mkl, "enable")):
        with mod.verbose(**{kw: mod.VERBOSE_OFF}) as v:
            out.append(v)
    return out


def test_mkldnn_flags_and_verbose_take_torchs_arguments():
    """mkldnn.flags(enabled, deterministic, allow_tf32, fp32_precision) restores on exit; mkldnn.verbose(level)
    and mkl.verbose(enable) give None at VERBOSE_OFF, as torch's"""
    assert _mkldnn_switches(cthtorch) == _mkldnn_switches(torch)


def test_compiled_module_passes_len_train_flags_and_deepcopy_through():
    """torch.compile(module) gives an OptimizedModule holding it as _orig_mod: state_dict keys and
    parameter names carry the `_orig_mod.` prefix programs strip (nanoGPT), the repr nests the original,
    attributes and train/eval pass through, deepcopy keeps the wrapper; functions come back callable"""
    import copy
    torch = oracle.require_torch()

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Dropout(0.5), lib.nn.Linear(4, 2))
        cm = lib.compile(m)
        out = [type(cm).__name__, cm._orig_mod is m, repr(cm), list(cm.state_dict()),
               [n for n, _ in cm.named_parameters()], len(cm)]
        cm.eval()
        out += [cm.training, m.training, m[1].training]
        cm.note = 3
        out += [m.note, cm(lib.ones(2, 3)).tolist(), type(copy.deepcopy(cm)).__name__,
                type(lib.compile(m, disable=True)).__name__, lib.compile(lambda x: x * 2)(lib.ones(2)).tolist(),
                lib.compile(mode="max-autotune")(lambda x: x + 1)(lib.ones(1)).tolist()]
        with pytest.raises(RuntimeError) as e:
            lib.compile(m, mode="default", options={})
        return out + [str(e.value)]
    assert run(cthtorch) == run(torch)
def test_quasirandom_sobol_engine_imports_and_refuses_clearly():
    """torch.quasirandom.SobolEngine: importable under both names, its constants and dimension check as
    torch's; drawing is not implemented (the Sobol direction-number table is not carried), so constructing
    one is a NotImplementedError naming why, never other numbers"""
    from cthtorch.quasirandom import SobolEngine
    assert SobolEngine is cthtorch.quasirandom.SobolEngine
    assert (SobolEngine.MAXBIT, SobolEngine.MAXDIM) == (torch.quasirandom.SobolEngine.MAXBIT,
                                                         torch.quasirandom.SobolEngine.MAXDIM)
    for d in (0, 21202):
        with pytest.raises(ValueError) as ec:
            SobolEngine(d)
        with pytest.raises(ValueError) as et:
            torch.quasirandom.SobolEngine(d)
        assert str(ec.value) == str(et.value)
    with pytest.raises(NotImplementedError, match="direction numbers"):
        SobolEngine(3, scramble=True, seed=1)


def test_compile_turns_distribution_validation_off_as_torchs_dynamo_patch():
    """the first torch.compile of a process (a module or a function, not disable=True) sets Distribution's
    default validate_args to False for the whole process, as torch's TorchPatcher.patch does, once: a later
    set_default_validate_args(True) stays (each library in a fresh process)"""
    script = """if 1:
        import sys, importlib
        lib = importlib.import_module(sys.argv[1])
        D = lib.distributions.Distribution
        row = [D._validate_args]
        lib.compile(lib.nn.Linear(2, 2), disable=True)
        row.append(D._validate_args)
        lib.compile(lambda x: x)
        row.append(D._validate_args)
        row.append(lib.distributions.Normal(0.0, -1.0).scale.item())
        D.set_default_validate_args(True)
        lib.compile(lib.nn.Linear(2, 2))
        print(row + [D._validate_args])
    """
    out = [subprocess.run([sys.executable, "-c", script, name], capture_output=True, text=True, check=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))).stdout
           for name in ("cthtorch", "torch")]
    assert out[0] == out[1] == "[True, True, False, -1.0, True]\n"


def test_submodules_expose_the_package_as_torch_like_torch():
    """torch.sparse.torch (and functional's, fft's, ...) is the package: capsule-network code builds one-hot
    labels with torch.sparse.torch.eye(n).index_select(0, labels)"""
    import cthtorch.nn.functional as CF
    names = ["sparse", "fft", "special", "autograd", "random"]
    assert all(getattr(getattr(torch, n), "torch") is torch for n in names) and torch.nn.functional.torch is torch
    assert all(getattr(getattr(cthtorch, n), "torch") is cthtorch for n in names) and CF.torch is cthtorch
    assert cthtorch.nn.init.torch is cthtorch
    labels = [2, 0, 1]
    ours = cthtorch.sparse.torch.eye(3).index_select(dim=0, index=cthtorch.tensor(labels))
    theirs = torch.sparse.torch.eye(3).index_select(dim=0, index=torch.tensor(labels))
    assert ours.tolist() == theirs.tolist()
