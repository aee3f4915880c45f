"""torchvision.io's image reading and writing (read_file, decode_image, read_image, ImageReadMode, encode_png,
write_png) through PIL: images are uint8 tensors laid out C x H x W, as torchvision's decoders give them."""
import enum

import cthtorch

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "read_image", "encode_png", "write_png"]


class ImageReadMode(enum.Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4   # torchvision's alias


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
              ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-D uint8 tensor."""
    with open(path, "rb") as fh:
        data = fh.read()
    return cthtorch.frombuffer(bytearray(data), dtype=cthtorch.uint8)


def write_file(filename, data):
    with open(filename, "wb") as fh:
        fh.write(bytes(data.contiguous().numpy().tobytes()))


def _mode(mode):
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    return mode


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decodes an image (a path, or its bytes as a 1-D uint8 tensor) to a uint8 C x H x W tensor."""
    import io

    import numpy as np
    from PIL import Image, ImageOps
    if isinstance(input, str):
        input = read_file(input)
    if not isinstance(input, cthtorch.Tensor) or input.dtype != cthtorch.uint8 or input.dim() != 1:
        raise RuntimeError("Expected a one dimensional uint8 tensor, or a path to a file")
    img = Image.open(io.BytesIO(input.numpy().tobytes()))
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    mode = _mode(mode)
    if mode != ImageReadMode.UNCHANGED:
        img = img.convert(_PIL_MODES[mode])
    elif img.mode not in ("L", "LA", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    t = cthtorch.from_numpy(np.array(img, dtype=np.uint8, copy=True))   # PIL's pixels, H x W (x C)
    if t.dim() == 2:
        t = t.unsqueeze(-1)
    return t.permute(2, 0, 1).contiguous()


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """read_file then decode_image."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def encode_png(input, compression_level=6):
    """A uint8 C x H x W tensor (C = 1 or 3) as PNG bytes in a 1-D uint8 tensor."""
    import io

    from PIL import Image
    if input.dtype != cthtorch.uint8 or input.dim() != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError("Input tensor must be a uint8 tensor of shape C x H x W with C = 1 or C = 3")
    arr = input.permute(1, 2, 0).contiguous().numpy()
    img = Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=compression_level)
    return cthtorch.frombuffer(bytearray(buf.getvalue()), dtype=cthtorch.uint8)


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))
