"""save/load: round trips, shared storages, safety, corruption, atomicity, torch's files."""
import collections
import io
import os
import pickle
import random
import warnings
import zipfile

import numpy as np
import pytest

import cthtorch as ct
import oracle


def roundtrip(obj, **kw):
    b = io.BytesIO()
    ct.save(obj, b)
    b.seek(0)
    return ct.load(b, **kw)


def test_tensors_and_containers(tmp_path):
    obj = {"a": ct.arange(6.0).view(2, 3), "b": [ct.tensor([1, 2], dtype=ct.int32), 3, "s", 2.5],
           "c": (ct.ones(2, dtype=ct.bool), None), "d": collections.OrderedDict(x=ct.zeros(0)),
           "n": np.arange(4), "h": ct.tensor([1.5]).half(), "bf": ct.tensor([2.0]).bfloat16(), "dt": ct.float64}
    p = tmp_path / "x.pt"
    ct.save(obj, p)
    r = ct.load(p, weights_only=False)   # numpy arrays load only so, as in torch (below)
    assert r["a"].tolist() == obj["a"].tolist() and r["a"].dtype == ct.float32
    assert r["b"][0].dtype == ct.int32 and r["b"][1:] == [3, "s", 2.5]
    assert r["c"][0].tolist() == [True, True] and r["c"][1] is None
    assert isinstance(r["d"], collections.OrderedDict) and r["d"]["x"].shape == (0,)
    assert r["n"].tolist() == [0, 1, 2, 3]
    assert r["h"].dtype == ct.float16 and r["bf"].float().tolist() == [2.0] and r["dt"] == ct.float64


def test_shared_storage_and_views_survive():
    base = ct.arange(10.0)
    v1, v2 = base[2:5], base.view(2, 5).t()
    a, b, c = roundtrip([base, v1, v2])
    assert b.tolist() == [2.0, 3.0, 4.0] and c.stride() == (1, 5)
    a[3] = -1
    assert b[1].item() == -1 and c[3, 0].item() == -1


def test_requires_grad_and_nonleaf():
    """a non-leaf that requires grad saves as torch's does: loaded back as a leaf requiring grad (the saved
    tensors hooks tutorial torch.save()s the tensors autograd hands its pack hook)"""
    w = ct.ones(2, requires_grad=True)
    assert roundtrip(w).requires_grad
    torch = oracle.require_torch()
    got = []
    for L in (ct, torch):
        x = L.tensor([1.0, -2.0], requires_grad=True)
        buf = io.BytesIO()
        L.save({"y": x * 2, "v": (x * 3)[1:]}, buf)
        buf.seek(0)
        d = L.load(buf)
        got.append([(t.tolist(), t.requires_grad, t.is_leaf, t.grad_fn) for t in d.values()])
    assert got[0] == got[1]


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_weights_only_refuses_arbitrary_globals():
    b = io.BytesIO()
    ct.save({"x": Evil()}, b)
    b.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ct.load(b)


class Box:
    pass


def test_weights_only_refusal_reads_as_torchs():
    """a whole object saved (spinningup's logger saves the module) and loaded with the default weights_only"""
    torch = oracle.require_torch()

    def attempt(lib):
        b = io.BytesIO()
        lib.save({"box": Box()}, b)
        b.seek(0)
        lib.load(b)
    oracle.raises_like(lambda: attempt(ct), lambda: attempt(torch))
    b = io.BytesIO()
    ct.save({"box": Box()}, b)
    b.seek(0)
    assert isinstance(ct.load(b, weights_only=False)["box"], Box)


def test_corrupted_and_truncated_files(tmp_path):
    p = tmp_path / "m.pt"
    ct.save({"w": ct.randn(20, 20), "b": ct.arange(5)}, p)
    data = p.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 5):
        with pytest.raises(RuntimeError):
            ct.load(io.BytesIO(data[:cut]))
    rng = random.Random(0)
    for _ in range(150):      # a small fuzz: mutated bytes load or raise cleanly, never crash
        m = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            m[rng.randrange(len(m))] = rng.randrange(256)
        try:
            ct.load(io.BytesIO(bytes(m)))
        except (RuntimeError, pickle.UnpicklingError):
            pass


def test_out_of_bounds_geometry_is_rejected():
    buf = io.BytesIO()
    st = ct.ones(4).untyped_storage()
    with zipfile.ZipFile(buf, "w") as z:
        pk = io.BytesIO()
        p = ct.serialization._Pickler(pk, 2, {})
        from collections import OrderedDict
        from cthtorch.serialization import _StorageOf, _TorchGlobal

        class Bad:
            def __reduce__(self):
                return (_TorchGlobal("torch._utils", "_rebuild_tensor_v2"),
                        (_StorageOf(st, "float32"), 0, (2 ** 62, 4), (4, 1), False, OrderedDict()))
        p.dump(Bad())
        z.writestr("archive/data.pkl", pk.getvalue())
        z.writestr("archive/data/0", bytes(16))
    buf.seek(0)
    with pytest.raises(RuntimeError):
        ct.load(buf)


def test_atomic_save_keeps_old_file_on_failure(tmp_path):
    p = tmp_path / "ckpt.pt"
    ct.save({"v": 1}, p)
    with pytest.raises(Exception):
        ct.save({"bad": lambda: 0}, p)   # unpicklable: fails mid-save
    assert ct.load(p) == {"v": 1}
    assert [x.name for x in tmp_path.iterdir()] == ["ckpt.pt"]



def test_saved_file_mode_follows_the_umask_like_torchs(tmp_path):
    """the atomic save's temporary file is private (0600) until renamed; the checkpoint it becomes has the
    mode torch's open(path, "wb") gives (0644 under umask 022), so other users can read it as with torch"""
    torch = oracle.require_torch()
    old = os.umask(0o022)
    try:
        ct.save({"v": ct.ones(2)}, tmp_path / "c.pt")
        torch.save({"v": torch.ones(2)}, tmp_path / "t.pt")
        os.umask(0o077)
        ct.save({"v": 1}, tmp_path / "c2.pt")
    finally:
        os.umask(old)
    mode = lambda n: os.stat(tmp_path / n).st_mode & 0o777
    assert mode("c.pt") == mode("t.pt") == 0o644
    assert mode("c2.pt") == 0o600

def test_map_location():
    t = roundtrip(ct.ones(2), map_location="cpu")
    assert t.tolist() == [1.0, 1.0]
    assert roundtrip(ct.ones(1), map_location=lambda s, loc: s).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="CUDA"):
        roundtrip(ct.ones(1), map_location="cuda")


def test_loads_files_saved_by_torch(tmp_path):
    torch = oracle.require_torch()
    p = tmp_path / "t.pt"
    src = {"w": torch.arange(6.0).view(2, 3), "i": torch.tensor([1, 2]), "v": torch.arange(4.0)[1:]}
    torch.save(src, p)
    r = ct.load(p)
    assert r["w"].tolist() == src["w"].tolist() and r["i"].dtype == ct.int64 and r["v"].tolist() == [1.0, 2.0, 3.0]


def test_torch_loads_files_saved_by_cthtorch(tmp_path):
    torch = oracle.require_torch()
    m = ct.nn.Sequential(ct.nn.Linear(3, 2), ct.nn.BatchNorm1d(2))
    x = ct.arange(12.0).reshape(3, 4)
    obj = {"sd": m.state_dict(), "epoch": 3, "views": [x, x[1:, ::2], x.t()], "p": ct.nn.Parameter(ct.ones(2)),
           "i8": ct.tensor([1, -2], dtype=ct.int8), "dt": ct.float16, "bf": ct.ones(2, dtype=ct.bfloat16)}
    path = tmp_path / "ckpt.pt"
    ct.save(obj, path)
    got = torch.load(path)   # PyTorch's safe (weights_only) loader
    assert got["epoch"] == 3 and list(got["sd"]) == list(obj["sd"])
    for k in obj["sd"]:
        assert got["sd"][k].tolist() == obj["sd"][k].tolist() and str(got["sd"][k].dtype) == str(obj["sd"][k].dtype)
    assert got["views"][1].tolist() == x[1:, ::2].tolist() and got["views"][2].stride() == (1, 4)
    assert got["views"][0].untyped_storage().data_ptr() == got["views"][1].untyped_storage().data_ptr()
    assert type(got["p"]) is torch.nn.Parameter and got["p"].requires_grad
    assert got["i8"].tolist() == [1, -2] and got["dt"] == torch.float16 and got["bf"].dtype == torch.bfloat16
    # and back: torch re-saves it, cthtorch reads it
    torch.save(got, tmp_path / "again.pt")
    back = ct.load(tmp_path / "again.pt")
    assert back["views"][2].tolist() == x.t().tolist() and type(back["p"]).__name__ == "Parameter"


def test_plain_pickle_of_types_named_torch():
    """device/Size/Generator print as torch.*; plain pickle (multiprocessing spawn) must still
    rebuild cthtorch's objects, where a by-name lookup would find torch's or nothing."""
    for o in (ct.device("cpu"), ct.device("cuda", 1), ct.Size([2, 3]), ct.Size([])):
        r = pickle.loads(pickle.dumps(o))
        assert type(r) is type(o) and r == o
    g = ct.Generator()
    g.manual_seed(7)
    ct.rand(3, generator=g)
    g2 = pickle.loads(pickle.dumps(g))
    assert ct.equal(ct.rand(4, generator=g), ct.rand(4, generator=g2))


def test_device_in_checkpoint_uses_torch_names(tmp_path):
    obj = {"d": ct.device("cuda:1"), "s": ct.Size([2])}
    b = io.BytesIO()
    ct.save(obj, b)
    assert b"cthtorch" not in b.getvalue()
    b.seek(0)
    assert ct.load(b) == obj          # weights_only, as torch allows torch.device there
    torch = oracle.require_torch()
    b.seek(0)
    got = torch.load(b, weights_only=True)
    assert got["d"] == torch.device("cuda:1") and got["s"] == torch.Size([2])


class _TorchNamesToCthtorch(pickle.Unpickler):
    """Resolves torch.* globals to cthtorch.*, as `import torch` does with cthtorch's alias on the path."""

    def find_class(self, module, name):
        if module == "torch" or module.startswith("torch."):
            module = "cthtorch" + module[len("torch"):]
        return super().find_class(module, name)


def test_plain_pickle_of_torch_tensors_loads():
    """pickle.dumps of torch tensors names torch._utils._rebuild_tensor_v2 / _rebuild_parameter and
    torch.storage._load_from_bytes (the pre-zip torch.save format in bytes): each tensor comes back with its
    dtype, geometry, values and Parameter-ness."""
    torch = oracle.require_torch()
    base = torch.arange(12.0).reshape(3, 4)
    obj = {"view": base[1:, 1:3], "t": base.t(), "p": torch.nn.Parameter(torch.ones(2)),
           "i16": torch.tensor([1, -2], dtype=torch.int16), "h": torch.tensor([0.5, 1.5]).half(),
           "bf": torch.tensor([2.0]).bfloat16(), "b": torch.tensor([True, False]), "e": torch.zeros(0, 3)}
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        r = _TorchNamesToCthtorch(io.BytesIO(pickle.dumps(obj, protocol=proto))).load()
        for k, ref in obj.items():
            got = r[k]
            assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape), k
            assert got.stride() == ref.stride() and got.storage_offset() == ref.storage_offset(), k
            assert got.float().tolist() == ref.float().tolist(), k
            assert type(got).__name__ == type(ref).__name__ and got.requires_grad == ref.requires_grad, k
    assert ct._utils._rebuild_tensor_v2 is not None and ct.storage._load_from_bytes is not None


def test_loads_torchs_pre_zip_checkpoints():
    """torch.save(..., _use_new_zipfile_serialization=False) (and every checkpoint before torch 1.6): views of
    one storage share it again, weights_only loads work, a saved storage comes back as a TypedStorage."""
    torch = oracle.require_torch()
    base = torch.arange(6.0)
    lin = torch.nn.Linear(2, 3)
    b = io.BytesIO()
    torch.save({"w": base.view(2, 3), "v": base[2:], "n": 3, "sd": lin.state_dict(),
                "l": torch.tensor([7], dtype=torch.int64)}, b, _use_new_zipfile_serialization=False)
    for weights_only in (True, False):
        r = ct.load(io.BytesIO(b.getvalue()), weights_only=weights_only)
        assert r["w"].tolist() == base.view(2, 3).tolist() and r["v"].tolist() == base[2:].tolist()
        assert r["v"].storage_offset() == 2 and r["n"] == 3 and r["l"].dtype == ct.int64
        assert r["w"].untyped_storage().data_ptr() == r["v"].untyped_storage().data_ptr()
        assert list(r["sd"]) == ["weight", "bias"] and r["sd"]["weight"].tolist() == lin.weight.tolist()
    for zipped in (False, True):
        b = io.BytesIO()
        with warnings.catch_warnings():   # torch's TypedStorage deprecation warning
            warnings.simplefilter("ignore")
            torch.save(base[1:].storage(), b, _use_new_zipfile_serialization=zipped)
        st = ct.load(io.BytesIO(b.getvalue()), weights_only=False)
        assert type(st).__name__ == "TypedStorage" and st.dtype == ct.float32 and st.tolist() == base.tolist()


def test_pre_zip_checkpoint_corruption_is_an_error():
    torch = oracle.require_torch()
    b = io.BytesIO()
    torch.save({"w": torch.arange(6.0)}, b, _use_new_zipfile_serialization=False)
    data = b.getvalue()
    for bad in (data[:-3], data[:-24 - 8]):
        with pytest.raises(RuntimeError):
            ct.load(io.BytesIO(bad))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        b = io.BytesIO()
        torch.save({"f": collections.defaultdict(list)}, b, _use_new_zipfile_serialization=False)
        ct.load(io.BytesIO(b.getvalue()))


def _load_outcome(lib, data):
    try:
        return lib.load(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 - the refusal itself is compared
        return type(e), str(e).replace("cthtorch", "torch")


@pytest.mark.parametrize("legacy", [False, True])
def test_weights_only_allowlist_and_refusal_text_are_torchs(legacy):
    """torch.load's default allowlist: Counter, tensors with Python attributes (_rebuild_from_type_v2) and
    parameters with them (_rebuild_parameter_with_state) load; numpy arrays, frozenset, range (pickled as
    Python 2's xrange), defaultdict and modules are refused, each with torch's whole message"""
    torch = oracle.require_torch()
    t = torch.arange(3.0)
    t.tag = "kept"
    p = torch.nn.Parameter(torch.ones(2))
    p.tag = 7
    b = io.BytesIO()
    torch.save({"c": collections.Counter("abca"), "t": t, "p": p}, b, _use_new_zipfile_serialization=not legacy)
    r = ct.load(io.BytesIO(b.getvalue()))
    assert r["c"] == collections.Counter("abca") and type(r["c"]) is collections.Counter
    assert r["t"].tolist() == [0.0, 1.0, 2.0] and r["t"].tag == "kept" and type(r["t"]) is ct.Tensor
    assert type(r["p"]) is ct.nn.Parameter and r["p"].tag == 7 and r["p"].requires_grad
    for obj in (np.arange(3), np.float64(2.0), frozenset([1]), range(3), collections.defaultdict(list),
                torch.nn.Linear(2, 2)):
        b = io.BytesIO()
        torch.save({"x": obj}, b, _use_new_zipfile_serialization=not legacy)
        ours, theirs = _load_outcome(ct, b.getvalue()), _load_outcome(torch, b.getvalue())
        assert ours[0] is pickle.UnpicklingError and ours == theirs


def test_parameter_attributes_survive_save_and_pickle():
    """a Parameter's Python attributes are written as torch writes them (torch.load reads them back) and
    travel through pickle too; a tensor's likewise"""
    torch = oracle.require_torch()
    p = ct.nn.Parameter(ct.ones(2))
    p.tag = "w"
    t = ct.zeros(2)
    t.note = 3
    b = io.BytesIO()
    ct.save({"p": p, "t": t}, b)
    for r in (ct.load(io.BytesIO(b.getvalue())), torch.load(io.BytesIO(b.getvalue()))):
        assert r["p"].tag == "w" and r["p"].requires_grad and r["t"].note == 3
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is ct.nn.Parameter and q.tag == "w" and q.tolist() == [1.0, 1.0]


def test_whole_module_checkpoint_refused_by_default_with_torchs_text(tmp_path):
    """torch.save(model, path) then torch.load(path) (2017-era code): weights_only=True, the default since 2.6,
    refuses the module's class with torch.load's two-options message, naming the class under its torch.* path;
    weights_only=False loads it"""
    torch = oracle.require_torch()
    msgs = []
    for m in (ct, torch):
        p = tmp_path / ("%s.pt" % m.__name__)
        m.save(m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU()), p)
        with pytest.raises(pickle.UnpicklingError) as e:
            m.load(p)
        msgs.append(str(e.value))
        back = m.load(p, weights_only=False)
        assert type(back).__name__ == "Sequential" and back[0].weight.shape == (3, 2)
    assert msgs[0] == msgs[1] and "GLOBAL torch.nn.modules.container.Sequential" in msgs[0]


def _saved_bytes(lib, obj, path=None):
    if path is None:
        b = io.BytesIO()
        lib.save(obj, b)
        return b.getvalue()
    lib.save(obj, path)
    with open(path, "rb") as fh:
        return fh.read()


def _same_but_serialization_id(a, b):
    """b with a's random serialization id (and its CRC) put in is a, byte for byte"""
    def sid(d):
        z = zipfile.ZipFile(io.BytesIO(d))
        info = [i for i in z.infolist() if i.filename.endswith("/.data/serialization_id")][0]
        return z.read(info), info.CRC.to_bytes(4, "little")
    (ida, crca), (idb, crcb) = sid(a), sid(b)
    return b.replace(idb, ida).replace(crcb, crca) == a


def _checkpoints(lib):
    lib.manual_seed(0)
    nn = lib.nn
    base = lib.arange(24.0).reshape(4, 6)
    return {
        "conv": nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).state_dict(),
        "linear": nn.Linear(5, 3).state_dict(), "linear_nobias": nn.Linear(5, 3, bias=False).state_dict(),
        "batchnorm": nn.BatchNorm2d(4).state_dict(), "lstm": nn.LSTM(4, 5, 2).state_dict(),
        "dtypes": {str(d): lib.arange(5).to(d) for d in (lib.float32, lib.float64, lib.float16, lib.bfloat16,
                                                         lib.int64, lib.int32, lib.int16, lib.int8, lib.uint8,
                                                         lib.bool, lib.complex64)},
        "views": [base, base[1:], base.t(), base[:, 2]], "tensor": lib.ones(3, 3),
        "whole_module": nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.BatchNorm1d(2)),
        "quantized": lib.ao.quantization.quantize_dynamic(
            nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)), {nn.Linear}, dtype=lib.qint8).state_dict(),
        "qtensor": lib.quantize_per_tensor(lib.arange(6.0).reshape(2, 3), 0.1, 3, lib.quint8),
    }


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
@pytest.mark.parametrize("to_path", [False, True], ids=["buffer", "path"])
def test_saved_file_is_torchs_byte_for_byte(tmp_path, to_path):
    # programs print model sizes from saved files: the layout (records, order, 64-byte alignment, zip64 end
    # records, archive folder named after the file) and data.pkl's opcodes must be torch's
    torch = oracle.require_torch()
    ours, theirs = _checkpoints(ct), _checkpoints(torch)
    (tmp_path / "ct").mkdir()
    for name in ours:
        a = _saved_bytes(torch, theirs[name], tmp_path / "temp.p" if to_path else None)
        b = _saved_bytes(ct, ours[name], tmp_path / "ct" / "temp.p" if to_path else None)
        assert len(a) == len(b), name
        assert zipfile.ZipFile(io.BytesIO(b)).namelist() == zipfile.ZipFile(io.BytesIO(a)).namelist(), name
        assert _same_but_serialization_id(a, b), name
        weights_only = name != "whole_module"
        r = torch.load(io.BytesIO(b), weights_only=weights_only)
        back = ct.load(io.BytesIO(a), weights_only=weights_only)
        if name == "whole_module":
            assert type(back).__name__ == "Sequential" and back[0].weight.tolist() == theirs[name][0].weight.tolist()
            assert torch.equal(r[0].weight, theirs[name][0].weight)
        elif name in ("linear", "conv", "batchnorm", "lstm", "dtypes"):
            assert list(r) == list(theirs[name]) and list(back) == list(ours[name])
            for k in r:
                assert r[k].dtype == theirs[name][k].dtype and torch.equal(r[k], theirs[name][k])
                assert back[k].tolist() == ours[name][k].tolist()


def test_saved_file_without_byteorder_record_is_torchs():
    torch = oracle.require_torch()
    a, b = io.BytesIO(), io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, a, _disable_byteorder_record=True)
    ct.save({"w": ct.arange(3.0)}, b, _disable_byteorder_record=True)
    assert zipfile.ZipFile(b).namelist()[-3:-1] == ["archive/version", "archive/byteorder"]
    assert _same_but_serialization_id(a.getvalue(), b.getvalue())


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_pre_zip_format_is_torchs_size_and_loads_both_ways():
    # _use_new_zipfile_serialization=False: torch's legacy stream; storage keys are addresses (random, so
    # only the sizes can be compared, and they agree while both addresses have as many digits)
    torch = oracle.require_torch()
    ours, theirs = _checkpoints(ct), _checkpoints(torch)
    for name in ours:
        if name == "whole_module":   # torch records a module's class with its source text (not done here)
            continue
        a, b = io.BytesIO(), io.BytesIO()
        torch.save(theirs[name], a, _use_new_zipfile_serialization=False)
        ct.save(ours[name], b, _use_new_zipfile_serialization=False)
        assert not zipfile.is_zipfile(b)
        assert len(a.getvalue()) == len(b.getvalue()), name
        r = torch.load(io.BytesIO(b.getvalue()))
        back = ct.load(io.BytesIO(a.getvalue()))
        if name in ("linear", "conv", "batchnorm", "lstm", "dtypes"):
            assert list(r) == list(theirs[name]) and list(back) == list(ours[name])
            for k in r:
                assert r[k].dtype == theirs[name][k].dtype and torch.equal(r[k], theirs[name][k])
                assert back[k].tolist() == ours[name][k].tolist()
    base = ct.arange(6.0)
    r = ct.load(_legacy_bytes(ct, [base, base[2:]]))
    r[1][0] = 100.0   # the view still shares its storage
    assert r[0][2].item() == 100.0 and r[0].shape == (6,)


def _legacy_bytes(lib, obj):
    b = io.BytesIO()
    lib.save(obj, b, _use_new_zipfile_serialization=False)
    b.seek(0)
    return b


_RNN_SAVE_SIZES = """
import io, sys
lib = __import__(sys.argv[1])
nn = lib.nn
lib.manual_seed(0)
sizes = []
for m in (nn.LSTM(4, 5, 2), nn.GRU(3, 4), nn.RNN(3, 4, nonlinearity="relu"),
          nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2), nn.Sequential(nn.LSTM(2, 3), nn.GRU(3, 3))):
    b = io.BytesIO()
    lib.save(m, b)
    sizes.append(len(b.getvalue()))
print(sizes)
"""


def test_whole_recurrent_modules_save_to_torchs_size():
    # each library in its own process: a module's parameter names are the strings setattr interned, so which
    # of them the pickle repeats by reference depends on what the process interned before (torch's too)
    import subprocess
    import sys
    oracle.require_torch()
    root = os.path.dirname(os.path.dirname(os.path.abspath(ct.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = [subprocess.run([sys.executable, "-c", _RNN_SAVE_SIZES, lib], env=env, capture_output=True, text=True,
                          check=True, timeout=300).stdout for lib in ("torch", "cthtorch")]
    assert out[0] == out[1] and out[0].startswith("[")


def test_save_leaves_pythons_random_stream_alone(tmp_path):
    """torch.save draws its archive's serialization id from the OS: a program seeding Python's random module
    and shuffling after a checkpoint gets the order it gets under torch (the N-BEATS trainer does this)"""
    import random
    random.seed(5)
    expected = [random.random() for _ in range(3)]
    random.seed(5)
    ct.save({"w": ct.ones(3)}, str(tmp_path / "a.pt"))
    buf = io.BytesIO()
    ct.save(ct.zeros(2), buf)
    assert [random.random() for _ in range(3)] == expected
