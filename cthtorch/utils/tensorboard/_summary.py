"""Summary protobufs for SummaryWriter, built with the tensorboard package's
own message classes (tensorboard.compat.proto, the hparams plugin's
api_pb2/plugin_data_pb2), as TensorBoard's readers expect them."""
import io
import math

import numpy as np

import cthtorch
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto


def make_np(x):
    """A tensor, array, list or number as a numpy array (tensors leave the
    graph and the device first)."""
    import cthtorch
    if isinstance(x, cthtorch.Tensor):
        return x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (int, float, bool, np.number, list, tuple)):
        return np.array(x)
    raise NotImplementedError("Got %s, but numpy array or torch tensor are expected." % type(x))


def _plugin(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name, content=content))


def scalar(tag, value, new_style=False, double_precision=False):
    v = make_np(value)
    if v.squeeze().ndim != 0:
        raise ValueError("scalar should be 0D, got a value of shape %s" % (v.shape,))
    v = float(v.reshape(()))
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    if double_precision:
        t = TensorProto(dtype="DT_DOUBLE", double_val=[v], tensor_shape=TensorShapeProto())
    else:
        t = TensorProto(dtype="DT_FLOAT", float_val=[v], tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag=tag, tensor=t, metadata=_plugin("scalars"))])


def _tensorflow_bins():
    """TensorFlow's default histogram edges: +-1e-12 * 1.1**k up to 1e20, and 0."""
    pos = [1e-12 * 1.1 ** k for k in range(int(math.ceil(math.log(1e20 / 1e-12, 1.1))))]
    return [-p for p in reversed(pos)] + [0.0] + pos


def histogram(tag, values, bins="tensorflow", max_bins=None):
    # counted by the declared C op (torch.histogram, numpy's bucket rules)
    import cthtorch
    v = values if isinstance(values, cthtorch.Tensor) else cthtorch.as_tensor(make_np(values))
    v = v.detach().cpu().to(cthtorch.float64).reshape(-1)
    if v.numel() == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    if bins == "tensorflow":
        edges = _tensorflow_bins()
    elif isinstance(bins, str):   # numpy's bin-width estimators ('auto', 'fd', ...) choose the edges only
        edges = np.histogram_bin_edges(v.numpy(), bins=bins)
    else:
        edges = bins
    if not isinstance(edges, int):
        edges = cthtorch.as_tensor(make_np(edges)).to(cthtorch.float64)
    counts, edges = cthtorch.histogram(v, bins=edges)
    if max_bins is not None and counts.numel() > max_bins:
        # merge neighbouring buckets: `group` of them per bucket
        group = -(-counts.numel() // max_bins)
        pad = (-counts.numel()) % group
        counts = cthtorch.cat([counts, counts.new_zeros(pad)]).reshape(-1, group).sum(1)
        edges = cthtorch.cat([edges[:-1:group], edges[-1:]])
    nz = counts.nonzero().reshape(-1).tolist()
    # the empty buckets at both ends say nothing. A bucket is kept by its right
    # edge, so the left edge of the first one goes in as an empty bucket before it
    lo, hi = (nz[0], nz[-1] + 1) if nz else (0, counts.numel())
    proto = HistogramProto(min=v.min().item(), max=v.max().item(), num=v.numel(), sum=v.sum().item(),
                           sum_squares=v.dot(v).item(), bucket_limit=edges[lo:hi + 1].tolist(),
                           bucket=[0.0] + counts[lo:hi].tolist())
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def to_hwc(img, dataformats):
    """An image array in `dataformats` (CHW, HWC, HW, with N for a batch) as
    H x W x C with C 3 or 4 (one channel is repeated); a batch becomes a grid
    of at most 8 images a row."""
    dataformats = dataformats.upper()
    if len(set(dataformats)) != len(dataformats) or img.ndim != len(dataformats) or \
            not set(dataformats) <= set("NCHW"):
        raise ValueError("size of input tensor and input format are different. tensor shape: %s, "
                         "input_format: %s" % (img.shape, dataformats))
    if "N" in dataformats:
        img = img.transpose([dataformats.index(c) for c in "NCHW" if c in dataformats])
        if img.ndim == 3:
            img = img[:, None]
        return to_hwc(_grid(img), "CHW")
    if dataformats == "HW":
        img = img[..., None]
    else:
        img = img.transpose([dataformats.index(c) for c in "HWC"])
    if img.shape[2] == 1:
        img = np.concatenate([img] * 3, 2)
    return img


def _grid(batch, ncols=8):
    """N x C x H x W -> C x (rows H) x (cols W), rows filled left to right."""
    if batch.shape[1] == 1:
        batch = np.concatenate([batch] * 3, 1)
    n, c, h, w = batch.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((c, rows * h, cols * w), dtype=batch.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = batch[i]
    return canvas


def image(tag, img, dataformats="CHW"):
    from PIL import Image
    a = make_np(img)
    hwc = to_hwc(a, dataformats)
    # floats are in [0, 1] (PyTorch's convention); uint8 stays as it is
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = hwc.shape
    buf = io.BytesIO()
    Image.fromarray(hwc, "RGBA" if c == 4 else "RGB").save(buf, format="PNG")
    proto = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def figure_to_array(figure, close=True):
    """A matplotlib figure rendered (Agg) as an H x W x 4 uint8 array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba()).copy()
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return rgba


def figures_to_array(figures, close=True):
    """Several figures of one size as an N x H x W x 4 array."""
    return np.stack([figure_to_array(f, close) for f in figures])


def text(tag, text_string):
    t = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                    tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=_plugin("text"), tensor=t)])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The hparams plugin's three summaries (experiment, session start,
    session end) for one run, as (experiment, start, end)."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    start = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # bools are ints here, logged as numbers (as PyTorch does)
        if isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            dtype = "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            dtype = "DATA_TYPE_STRING"
        else:
            import cthtorch
            if isinstance(v, cthtorch.Tensor):
                start.hparams[k].number_value = make_np(v).item()
                dtype = "DATA_TYPE_FLOAT64"
            else:
                raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        info = HParamInfo(name=k, type=DataType.Value(dtype))
        if k in hparam_domain_discrete:
            for d in hparam_domain_discrete[k]:
                val = info.domain_discrete.values.add()
                if isinstance(d, bool):
                    val.bool_value = d
                elif isinstance(d, (int, float)):
                    val.number_value = d
                else:
                    val.string_value = str(d)
        infos.append(info)
    exp = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))

    def summary(tag, **data):
        content = HParamsPluginData(version=0, **data).SerializeToString()
        # the plugin's own writer puts a 0-d int tensor beside the metadata
        null = TensorProto(dtype="DT_INT32", int_val=[0], tensor_shape=TensorShapeProto())
        return Summary(value=[Summary.Value(tag=tag, metadata=_plugin("hparams", content), tensor=null)])

    return (summary("_hparams_/experiment", experiment=exp),
            summary("_hparams_/session_start_info", session_start_info=start),
            summary("_hparams_/session_end_info", session_end_info=end))


def histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    proto = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares, bucket_limit=bucket_limits,
                           bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def compute_curve(labels, predictions, num_thresholds, weights=None):
    """TensorBoard's pr_curve data: per threshold bucket, the reverse cumulative true/false positives, the
    negatives they leave, and precision and recall (6 x num_thresholds), in float64 as TensorBoard's numpy
    code computes it. Bucketing is a weighted bincount; predictions outside [0, 1] fall in no bucket."""
    f64 = cthtorch.float64
    labels = cthtorch.as_tensor(labels).to(f64).reshape(-1)
    weights = cthtorch.as_tensor(1.0 if weights is None else weights, dtype=f64)
    buckets = (cthtorch.as_tensor(predictions).to(f64).reshape(-1) * (num_thresholds - 1)).floor()
    inside = (buckets >= 0) & (buckets <= num_thresholds - 1)
    buckets = buckets.clamp(0, num_thresholds - 1).long()
    w = cthtorch.broadcast_to(weights, labels.shape) * inside

    def reverse_cumsum(bucket_weights):
        return cthtorch.bincount(buckets, bucket_weights, num_thresholds).flip(0).cumsum(0).flip(0)
    tp, fp = reverse_cumsum(labels * w), reverse_cumsum((1.0 - labels) * w)
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / (tp + fp).clamp(min=1e-7)
    recall = tp / (tp + fn).clamp(min=1e-7)
    return cthtorch.stack((tp, fp, tn, fn, precision, recall))


def _pr_curve_summary(tag, data, num_thresholds):
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    t = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                    tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=data.shape[0]),
                                                       TensorShapeProto.Dim(size=data.shape[1])]))
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin("pr_curves", content), tensor=t)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)   # the plugin's protobuf holds at most 127 thresholds
    return _pr_curve_summary(tag, compute_curve(labels, predictions, num_thresholds, weights), num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)
    return _pr_curve_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), num_thresholds)


def custom_scalars(layout):
    """The custom_scalars plugin's layout: {category: {chart: ['Multiline', tags] or ['Margin', [v, lo, hi]]}}"""
    from tensorboard.plugins.custom_scalar import layout_pb2
    categories = []
    for category, charts in layout.items():
        protos = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                protos.append(layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                protos.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=protos))
    t = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                    tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=t, metadata=_plugin("custom_scalars"))])


def audio(tag, tensor, sample_rate=44100):
    """A mono clip in [-1, 1] (louder is clipped, as torch's writer warns) as 16-bit WAV."""
    import wave
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(array.data)
    proto = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=array.shape[-1],
                          encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=proto)])
