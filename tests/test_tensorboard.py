"""cthtorch.utils.tensorboard.SummaryWriter: event files read back with
TensorBoard's own EventAccumulator, and compared with what
torch.utils.tensorboard writes for the same calls."""
import io
import os

import numpy as np
import pytest

pytest.importorskip("tensorboard")

import cthtorch  # noqa: E402
from cthtorch.utils.tensorboard import SummaryWriter  # noqa: E402
from oracle import require_torch  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "images": 0, "histograms": 0, "tensors": 0, "audio": 0})
    acc.Reload()
    return acc


def _png_pixels(encoded):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(encoded)))


def _both(tmp_path, fn):
    """Runs fn(writer, lib) with cthtorch's and torch's SummaryWriter; returns both accumulators."""
    torch = require_torch()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with SummaryWriter(tmp_path / "ct") as w:
        fn(w, cthtorch)
    with TorchWriter(str(tmp_path / "t")) as w:
        fn(w, torch)
    return _read(tmp_path / "ct"), _read(tmp_path / "t")


def test_scalars_read_back(tmp_path):
    w = SummaryWriter(tmp_path)
    for step in range(5):
        w.add_scalar("loss", 1.0 / (step + 1), step)
    w.add_scalar("t0d", cthtorch.tensor(0.25), 7)
    w.add_scalar("new", 3.5, 1, new_style=True)
    w.close()
    acc = _read(tmp_path)
    assert [(e.step, round(e.value, 6)) for e in acc.Scalars("loss")] == [
        (0, 1.0), (1, 0.5), (2, round(1 / 3, 6)), (3, 0.25), (4, 0.2)]
    assert acc.Scalars("t0d")[0].value == 0.25 and acc.Scalars("t0d")[0].step == 7
    assert acc.Tensors("new")[0].tensor_proto.float_val == [3.5]
    with pytest.raises(ValueError, match="scalar should be 0D"):
        SummaryWriter(tmp_path / "x").add_scalar("bad", cthtorch.ones(3))


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    w = SummaryWriter(tmp_path)
    for step in range(3):
        w.add_scalars("run/loss", {"train": step * 1.0, "test": step * 2.0}, step)
    w.close()
    assert sorted(os.listdir(tmp_path / "run_loss_train")) and sorted(os.listdir(tmp_path / "run_loss_test"))
    assert [e.value for e in _read(tmp_path / "run_loss_test").Scalars("run/loss")] == [0.0, 2.0, 4.0]
    assert [e.value for e in _read(tmp_path / "run_loss_train").Scalars("run/loss")] == [0.0, 1.0, 2.0]


def test_histogram_matches_torch(tmp_path):
    x = np.random.RandomState(0).randn(2000).astype(np.float32)

    def log(w, lib):
        w.add_histogram("tf", lib.from_numpy(x.copy()), 3)
        w.add_histogram("auto", lib.from_numpy(x.copy()), 3, bins="auto")
        w.add_histogram("ten", lib.from_numpy(x.copy()), 3, bins=10)
        w.add_histogram("const", lib.ones(5), 0)
    ct, t = _both(tmp_path, log)
    for tag in ("tf", "auto", "ten", "const"):
        a, b = ct.Histograms(tag)[0], t.Histograms(tag)[0]
        assert a.step == b.step
        ha, hb = a.histogram_value, b.histogram_value
        assert (ha.min, ha.max, ha.num) == (hb.min, hb.max, hb.num)
        assert ha.sum == pytest.approx(hb.sum, rel=1e-6) and ha.sum_squares == pytest.approx(hb.sum_squares, rel=1e-6)
        np.testing.assert_allclose(ha.bucket_limit, hb.bucket_limit, rtol=1e-9)
        assert list(ha.bucket) == list(hb.bucket)
    with pytest.raises(ValueError, match="The histogram is empty"):
        SummaryWriter(tmp_path / "e").add_histogram("empty", cthtorch.zeros(0))


def test_images_match_torch(tmp_path):
    rng = np.random.RandomState(1)
    chw = rng.rand(3, 9, 13).astype(np.float32)
    hw = rng.rand(6, 5).astype(np.float32)
    batch = rng.rand(11, 1, 7, 7).astype(np.float32)
    u8 = (rng.rand(8, 4, 3) * 255).astype(np.uint8)

    def log(w, lib):
        w.add_image("chw", lib.from_numpy(chw.copy()), 0)
        w.add_image("hw", lib.from_numpy(hw.copy()), 0, dataformats="HW")
        w.add_image("u8", u8, 0, dataformats="HWC")
        w.add_images("batch", lib.from_numpy(batch.copy()), 0)
    ct, t = _both(tmp_path, log)
    for tag in ("chw", "hw", "u8", "batch"):
        a, b = ct.Images(tag)[0], t.Images(tag)[0]
        assert (a.width, a.height) == (b.width, b.height), tag
        np.testing.assert_array_equal(_png_pixels(a.encoded_image_string), _png_pixels(b.encoded_image_string))
    assert (ct.Images("batch")[0].width, ct.Images("batch")[0].height) == (8 * 7, 2 * 7)
    with pytest.raises(ValueError, match="input format"):
        SummaryWriter(tmp_path / "bad").add_image("x", cthtorch.rand(3, 4), dataformats="CHW")


def test_figure(tmp_path):
    from matplotlib.figure import Figure
    figs = []
    for k in range(3):
        fig = Figure(figsize=(2, 1), dpi=50)
        fig.add_subplot().plot([0, 1], [1, k])
        figs.append(fig)
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", figs[0], 2)
        w.add_figure("figs", figs, 3)              # a list: one grid image, side by side
    acc = _read(tmp_path)
    img = acc.Images("fig")[0]
    assert (img.width, img.height, img.step) == (100, 50, 2)
    assert _png_pixels(img.encoded_image_string).std() > 0
    grid = acc.Images("figs")[0]
    assert (grid.width, grid.height, grid.step) == (300, 50, 3)


def test_text_and_hparams(tmp_path):
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    def log(w, lib):
        w.add_text("note", "hello *tensorboard*", 4)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "nesterov": True, "layers": 3}, {"acc": 0.75, "loss": 0.5},
                      run_name="hp")
    ct, t = _both(tmp_path, log)
    a, b = ct.Tensors("note/text_summary")[0], t.Tensors("note/text_summary")[0]
    assert a.step == b.step == 4 and a.tensor_proto == b.tensor_proto
    assert ct.SummaryMetadata("note/text_summary").plugin_data.plugin_name == "text"
    hp_ct, hp_t = _read(tmp_path / "ct" / "hp"), _read(tmp_path / "t" / "hp")
    assert [e.value for e in hp_ct.Scalars("acc")] == [0.75] and [e.value for e in hp_ct.Scalars("loss")] == [0.5]
    ca, ta = hp_ct.PluginTagToContent("hparams"), hp_t.PluginTagToContent("hparams")
    assert sorted(ca) == sorted(ta)
    for tag in ca:
        pa, pt = HParamsPluginData.FromString(ca[tag]), HParamsPluginData.FromString(ta[tag])
        if tag.endswith("session_end_info"):
            assert pa.session_end_info.status == pt.session_end_info.status
        else:
            assert pa == pt, tag


def test_purge_step_and_reopen_after_close(tmp_path):
    w = SummaryWriter(tmp_path)
    for step in range(6):
        w.add_scalar("x", float(step), step)
    w.close()
    w = SummaryWriter(tmp_path, purge_step=3)    # a resumed run: steps 3.. are redone
    w.add_scalar("x", 30.0, 3)
    w.close()
    w.add_scalar("x", 40.0, 4)                   # after close() the writer reopens a file, as torch's does
    w.close()
    assert [(e.step, e.value) for e in _read(tmp_path).Scalars("x")] == [
        (0, 0.0), (1, 1.0), (2, 2.0), (3, 30.0), (4, 40.0)]


def test_default_logdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    w.close()
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    assert os.listdir(w.get_logdir())[0].startswith("events.out.tfevents.")


def _graph_net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())
            self.fc = nn.Linear(4 * 6 * 6, 10)

        def forward(self, x):
            return self.fc(self.conv(x).flatten(1)).softmax(-1)
    return Net()


def test_add_graph_matches_torch(tmp_path):
    """The traced graph as TensorBoard reads it: the same IO nodes, and the
    same ops under the same module scopes with the same shapes, as torch's
    add_graph of the same model (value numbers may differ)."""
    torch = require_torch()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    m = _graph_net(cthtorch)
    m.train()
    with SummaryWriter(tmp_path / "ct") as w:
        w.add_graph(m, cthtorch.randn(2, 1, 8, 8))
    assert m.training
    with TorchWriter(str(tmp_path / "t")) as w:
        w.add_graph(_graph_net(torch), torch.randn(2, 1, 8, 8))
    graphs = []
    for sub in ("ct", "t"):
        acc = _read(tmp_path / sub)
        g = acc.Graph()
        shape = lambda n: ([d.size for d in n.attr["_output_shapes"].list.shape[0].dim]  # noqa: E731
                           if "_output_shapes" in n.attr else None)
        io = [(n.name, n.op, shape(n)) for n in g.node if n.op == "IO Node"]
        ops = sorted((n.name.rsplit("/", 1)[0], n.op, str(shape(n))) for n in g.node
                     if n.op not in ("IO Node", "prim::Constant", "prim::ListConstruct"))
        names = {n.name for n in g.node}
        for n in g.node:
            if n.op.startswith("aten::"):
                assert all(i in names for i in n.input if "GetAttr" not in i)
        graphs.append((io, ops, acc.Tags()["graph"], acc.Tags()["run_metadata"]))
    assert graphs[0] == graphs[1]
    assert graphs[0][2:] == (True, ["step1"])
    assert ("Net/Sequential[conv]/Conv2d[0]", "aten::_convolution", "[2, 4, 6, 6]") in graphs[0][1]
    assert graphs[0][0] == [("input/x", "IO Node", [2, 1, 8, 8]), ("output/output.1", "IO Node", [2, 10])]


def test_add_embedding_writes_torchs_projector_files(tmp_path):
    """tensors.tsv, metadata.tsv (plain and with a header), sprite.png and projector_config.pbtxt come out
    byte for byte as torch's SummaryWriter writes them, for a non-square sprite and two embeddings"""
    torch = require_torch()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    rs = np.random.RandomState(0)
    mat = rs.rand(5, 3).astype(np.float32)
    img = rs.rand(5, 1, 4, 6).astype(np.float32)
    for lib, W, sub in ((cthtorch, SummaryWriter, "ct"), (torch, TorchWriter, "t")):
        with W(str(tmp_path / sub)) as w:
            w.add_embedding(lib.from_numpy(mat), metadata=list("abcde"), label_img=lib.from_numpy(img),
                            global_step=3)
            w.add_embedding(lib.from_numpy(mat), metadata=[[1, "x"]] * 5, metadata_header=["n", "s"], tag="two")
            # a tag with '/' and '%' is one percent-encoded directory; labels are written as they are
            w.add_embedding(lib.from_numpy(mat), metadata=["a\tb", 1, 2.5, None, "e"], tag="run/1%", global_step=4)
    files = sorted(os.path.relpath(os.path.join(d, f), tmp_path / "t") for d, _, fs in os.walk(tmp_path / "t")
                   for f in fs if not f.startswith("events"))
    assert "00003/default/sprite.png" in files and "projector_config.pbtxt" in files
    assert "00004/run%2f1%25/metadata.tsv" in files
    for f in files:
        with open(tmp_path / "t" / f, "rb") as a, open(tmp_path / "ct" / f, "rb") as b:
            if f.endswith(".png"):
                from PIL import Image
                assert np.array_equal(np.asarray(Image.open(a)), np.asarray(Image.open(b))), f
            else:
                assert a.read() == b.read(), f
    with SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(AssertionError, match="#labels should equal with #data points"):
            w.add_embedding(cthtorch.rand(3, 2), metadata=["a"])


def test_pr_curves_custom_scalars_and_raw_histograms_match_torch(tmp_path):
    """add_pr_curve (TensorBoard's threshold buckets, precision, recall), add_pr_curve_raw, add_histogram_raw and
    the custom_scalars layouts (multiline, margin) write torch's tensors, histograms and plugin data"""
    rs = np.random.RandomState(0)
    labels, preds = rs.randint(0, 2, 50), rs.rand(50)

    def log(w, lib):
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(preds), 3)
        w.add_pr_curve("pr_w", labels, preds, 4, num_thresholds=200, weights=np.linspace(0.5, 1.5, 50))
        w.add_pr_curve_raw("raw", [5, 3, 0], [4, 1, 0], [0, 3, 4], [0, 2, 5], [0.55, 0.75, 0.0], [1.0, 0.6, 0.0],
                           1, num_thresholds=3)
        w.add_histogram_raw("hr", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0, bucket_limits=[1, 2, 3],
                            bucket_counts=[1, 2, 3], global_step=2)
        w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]]}})
        w.add_custom_scalars_multilinechart(["loss/train", "loss/val"], category="c", title="t")
        w.add_custom_scalars_marginchart(["a", "b", "c"])
        with pytest.raises(AssertionError, match="Expected 3 tags, got 2."):
            w.add_custom_scalars_marginchart(["a", "b"])
        with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
            w.add_histogram_raw("bad", 0, 1, 1, 1, 1, [1, 2], [1])
    ct, t = _both(tmp_path, log)
    for tag in ("pr", "pr_w", "raw", "custom_scalars__config__"):
        a, b = ct.Tensors(tag), t.Tensors(tag)
        assert [(e.step, e.tensor_proto) for e in a] == [(e.step, e.tensor_proto) for e in b], tag
        assert ct.SummaryMetadata(tag) == t.SummaryMetadata(tag), tag
    assert [(h.step, h.histogram_value) for h in ct.Histograms("hr")] == \
        [(h.step, h.histogram_value) for h in t.Histograms("hr")]


def test_audio_matches_torch(tmp_path):
    """add_audio: 16-bit mono WAV at the given rate, byte for byte as torch's (a loud clip clipped to [-1, 1])"""
    rs = np.random.RandomState(1)
    clip = rs.rand(1, 400) * 2 - 1

    def log(w, lib):
        w.add_audio("a", lib.tensor(clip), 3, sample_rate=8000)
        w.add_audio("loud", clip[0] * 3, 4)
    ct, t = _both(tmp_path, log)
    for tag in ("a", "loud"):
        a, b = ct.Audio(tag), t.Audio(tag)
        assert [(e.step, e.encoded_audio_string, e.sample_rate, e.length_frames) for e in a] == \
            [(e.step, e.encoded_audio_string, e.sample_rate, e.length_frames) for e in b]
