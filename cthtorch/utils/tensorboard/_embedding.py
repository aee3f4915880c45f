"""SummaryWriter.add_embedding's files, in the layout TensorBoard's projector
plugin reads: <logdir>/<step, 5 digits>/<tag>/ holds tensors.tsv (one row per
point), metadata.tsv (one label per line, or a header line and tab-separated
columns) and sprite.png (the label images tiled row by row in a square grid,
black-padded to a square);
<logdir>/projector_config.pbtxt lists every embedding written so far."""
import math
import os

import cthtorch
from cthtorch.utils.tensorboard._summary import make_np


def write_metadata(path, metadata, header=None):
    """one label per line, or (with a header) tab-separated columns; values are written as str() gives them,
    as torch's writer does (a tab or newline inside a label is not escaped there either)"""
    if header:
        if len(header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(v) for v in row) for row in [header] + list(metadata)]
    else:
        lines = [str(v) for v in metadata]
    with open(os.path.join(path, "metadata.tsv"), "w", encoding="utf8") as f:
        f.write("\n".join(lines) + "\n")


def write_tensors(path, mat):
    with open(os.path.join(path, "tensors.tsv"), "w", encoding="utf8") as f:
        for row in mat:
            f.write("\t".join(repr(float(x)) for x in row) + "\n")


def write_sprite(path, label_img):
    """N x C x H x W images in [0, 1] (one channel is repeated to three) as one square sprite.png."""
    from PIL import Image
    imgs = cthtorch.as_tensor(make_np(label_img)).to(cthtorch.float32)
    if imgs.dim() != 4:
        raise ValueError("label_img should be 4D (N x C x H x W), got %dD" % imgs.dim())
    if imgs.shape[1] == 1:
        imgs = imgs.expand(-1, 3, -1, -1)
    n, c, h, w = imgs.shape
    side = int(math.ceil(math.sqrt(n)))
    edge = max(side * h, side * w)   # the sprite is square: the short side is padded with black
    canvas = cthtorch.zeros(c, edge, edge)
    for i in range(n):
        r, k = divmod(i, side)
        canvas[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = imgs[i]
    arr = (canvas.clamp(0, 1) * 255).to(cthtorch.uint8).permute(1, 2, 0)   # truncated, as torch's is
    Image.fromarray(arr.contiguous().numpy()).save(os.path.join(path, "sprite.png"))
    return h, w


def _encode_tag(tag):
    """the tag as one directory name: '%', '/' and backslash percent-encoded, as torch's writer does"""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def add_embedding(logdir, config, mat, metadata=None, label_img=None, global_step=None, tag="default",
                  metadata_header=None):
    """Write one embedding's files and append it to `config` (a ProjectorConfig), then rewrite the config."""
    from google.protobuf import text_format
    mat = make_np(mat)
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    n = mat.shape[0]
    if metadata is not None and len(metadata) != n:
        raise AssertionError("#labels should equal with #data points")
    if label_img is not None and make_np(label_img).shape[0] != n:
        raise AssertionError("#images should equal with #data points")
    sub = os.path.join("%05d" % (global_step or 0), _encode_tag(tag))
    path = os.path.join(logdir, sub)
    os.makedirs(path, exist_ok=True)
    write_tensors(path, mat)
    emb = config.embeddings.add()
    emb.tensor_name = "%s:%05d" % (tag, global_step or 0)
    emb.tensor_path = os.path.join(sub, "tensors.tsv")
    if metadata is not None:
        write_metadata(path, metadata, metadata_header)
        emb.metadata_path = os.path.join(sub, "metadata.tsv")
    if label_img is not None:
        h, w = write_sprite(path, label_img)
        emb.sprite.image_path = os.path.join(sub, "sprite.png")
        emb.sprite.single_image_dim.extend([w, h])
    with open(os.path.join(logdir, "projector_config.pbtxt"), "w", encoding="utf8") as f:
        f.write(text_format.MessageToString(config))
