"""Tensor repr/str in PyTorch's exact format, and the print options that steer it.

The formatter's statistics (largest/smallest magnitudes, whole values) and the
summarised entries are computed with cthtorch's own ops, as torch's _tensor_str
does; the shown values are then read once (tolist) and the rest is plain
Python string work.

How a tensor prints:
  * above `threshold` elements, every dimension longer than 2*edgeitems shows
    only its first and last `edgeitems` entries, with "..." between;
  * one formatter, built from the values actually shown, fixes a common width
    and the style: integers as-is; floats either "int mode" (all values whole:
    `1.`), fixed (`1.5000`) or scientific (`1.5000e+10`), chosen from the
    largest and smallest nonzero finite magnitudes;
  * rows wrap at `linewidth`; nested dimensions are separated by blank lines
    (one fewer than the depth of what they separate);
  * suffixes (`dtype=`, `size=`, `grad_fn=`...) follow the contents and wrap to
    a new line when they would overflow `linewidth`.
"""
import contextlib
import math

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


class _PrintOptions:
    # a plain class, not a dataclass: dataclasses imports inspect, ~20 ms of `import cthtorch`
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None):
        self.precision, self.threshold, self.edgeitems = precision, threshold, edgeitems
        self.linewidth, self.sci_mode = linewidth, sci_mode

    def asdict(self):
        return {k: getattr(self, k) for k in self.__slots__}


PRINT_OPTS = _PrintOptions()

# profile -> (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set the options tensor printing uses.

    precision: digits after the point (default 4); threshold: element count
    above which output is summarised (1000); edgeitems: entries kept at each
    end of a summarised dimension (3); linewidth: characters per line (80);
    profile: 'default', 'short' or 'full' presets, applied before the other
    arguments; sci_mode: True/False forces scientific notation on/off, None
    lets the values decide. As in PyTorch, sci_mode is always reset to the
    value passed (None when omitted).
    """
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold,
         PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (keys as set_printoptions takes them)."""
    return PRINT_OPTS.asdict()


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager: set_printoptions(**kwargs) inside the block, restore after."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------- formatting

class _Formatter:
    """One width and one style for every value printed from a tensor."""

    def __init__(self, values, floating):
        # values: flat tensor of the values that will be shown
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            for v in values.tolist():
                self.width = max(self.width, len(str(v)))
            return
        vals = values[values.isfinite() & (values != 0)].double()
        if vals.numel() == 0:
            # only zeros/nan/inf: keep int mode and ignore a forced sci_mode, as PyTorch does
            return
        mags = vals.abs()
        lo, hi = mags.min().item(), mags.max().item()
        self.int_mode = bool((vals == vals.ceil()).all().item())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)
        p = PRINT_OPTS.precision
        if self.sci_mode:
            self.width = max(len("{:.{}e}".format(v, p)) for v in vals.tolist())
        elif self.int_mode:
            # whole floats print with a trailing "." (one more character)
            self.width = max(len("{:.0f}".format(v)) + 1 for v in vals.tolist())
        else:
            self.width = max(len("{:.{}f}".format(v, p)) for v in vals.tolist())

    def format(self, value):
        """value: a Python scalar; returns it right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = "{:{}.{}e}".format(value, self.width, PRINT_OPTS.precision)
        elif self.int_mode:
            text = "{:.0f}".format(value)
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = "{:.{}f}".format(value, PRINT_OPTS.precision)
        return " " * (self.width - len(text)) + text


class _ComplexFormatter:
    """A complex value as torch prints it: the real part right-aligned to the real
    parts' width, then the imaginary part (its own formatter) with its sign and a j."""

    def __init__(self, values):
        self.re = _Formatter(values.real.contiguous(), True)
        self.im = _Formatter(values.imag.contiguous(), True)
        self.width = self.re.width + self.im.width + 1   # torch's element length, less ", "

    def format(self, value):
        real = self.re.format(value.real)
        imag = (self.im.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _values_of(tensor):
    """The tensor's values on the CPU, without autograd (16-bit floats widened to float32)."""
    t = tensor.detach()
    device = getattr(t, "device", None)
    if device is not None and device.type != "cpu":
        t = t.cpu()
    if str(t.dtype) in ("torch.float16", "torch.bfloat16"):
        t = t.float()
    return t


def _shown(arr, edge):
    """The entries a summarised print shows: each axis longer than 2*edge keeps its
    first and last `edge` entries. Returns (tensor, per-axis 'was cut' flags)."""
    import cthtorch
    cuts = []
    for axis, n in enumerate(arr.shape):
        cut = n > 2 * edge
        if cut:
            keep = cthtorch.tensor(list(range(edge)) + list(range(n - edge, n)), dtype=cthtorch.int64)
            arr = arr.index_select(axis, keep)
        cuts.append(cut)
    return arr, cuts


def _vector(row, cut, indent, fmt):
    """One 1-d row: values joined by ', ', wrapped to the line width."""
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2))))
    items = [fmt.format(v) for v in row]
    if cut:
        edge = PRINT_OPTS.edgeitems
        items = items[:edge] + [" ..."] + items[edge:]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(rows, cuts, indent, fmt):
    """A nested list (from ndarray.tolist()) of depth len(cuts) >= 1, as text."""
    if len(cuts) == 1:
        return _vector(rows, cuts[0], indent, fmt)
    parts = [_nested(r, cuts[1:], indent + 1, fmt) for r in rows]
    if cuts[0]:
        edge = PRINT_OPTS.edgeitems
        parts = parts[:edge] + ["..."] + parts[edge:]
    sep = "," + "\n" * (len(cuts) - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _tensor_str(tensor, indent):
    """The bracketed contents of a non-empty tensor ('[1, 2]', or '1.5' for 0-d)."""
    arr = _values_of(tensor)
    floating = arr.dtype.is_floating_point
    make = _ComplexFormatter if arr.dtype.is_complex else (lambda v: _Formatter(v, floating))
    if arr.dim() == 0:
        return make(arr.reshape(-1)).format(arr.item())
    cuts = [False] * arr.dim()
    if arr.numel() > PRINT_OPTS.threshold:
        if not PRINT_OPTS.edgeitems:
            return "[...]"
        arr, cuts = _shown(arr, PRINT_OPTS.edgeitems)
    fmt = make(arr.reshape(-1))
    return _nested(arr.tolist(), cuts, indent, fmt)


def _add_suffixes(text, suffixes, indent, force_newline=False):
    # (the +1 below makes the first line count two characters long; PyTorch's arithmetic)
    line_len = len(text) - text.rfind("\n") + 1
    out = [text]
    for suffix in suffixes:
        if force_newline or line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
            force_newline = False
        else:
            out.append(", " + suffix)
            line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def _parameter_class():
    # nn may not be imported yet; a Parameter cannot exist before it is
    import cthtorch
    return getattr(vars(cthtorch).get("nn"), "Parameter", None)


def _grad_fn_suffix(tensor):
    try:
        grad_fn = tensor.grad_fn
    except RuntimeError:   # PyTorch's view/inplace rebase error: print, don't raise
        return "grad_fn=<Invalid>"
    if grad_fn is not None:
        name = type(grad_fn).__name__
        if name == "CppFunction":
            name = grad_fn.name().rsplit("::", 1)[-1]
        return "grad_fn=<%s>" % name
    if tensor.requires_grad:
        return "requires_grad=True"
    return None


def _shows_device(tensor):
    """True when the tensor lives elsewhere than the default device (PyTorch's rule)."""
    import cthtorch
    device = getattr(tensor, "device", None)
    if device is None:
        return False
    get_default = getattr(cthtorch, "get_default_device", None)
    default = get_default() if get_default is not None else None
    default_type = default.type if default is not None else "cpu"
    if device.type != default_type:
        return True
    # on the default device type, a GPU other than the current one is still named
    return device.type == "cuda" and cthtorch.cuda.current_device() != device.index


def _str(self, *, tensor_contents=None):
    """repr(tensor). tensor_contents, when given, replaces the bracketed values."""
    import cthtorch
    parameter = _parameter_class()
    plain = type(self) is cthtorch.Tensor or (parameter is not None and type(self) is parameter)
    prefix = "tensor(" if plain else type(self).__name__ + "("
    indent = len(prefix)
    suffixes = []

    if getattr(self, "is_meta", False):
        # no values to show: torch prints the device, the size and any
        # non-default dtype (int64 and bool too) after an ellipsis
        suffixes += ["device='meta'", "size=%s" % (tuple(self.shape),)]
        if self.dtype != cthtorch.get_default_dtype():
            suffixes.append("dtype=%s" % (self.dtype,))
        grad = _grad_fn_suffix(self)
        if grad is not None:
            suffixes.append(grad)
        return _add_suffixes(prefix + "...", suffixes, indent)

    if _shows_device(self):
        suffixes.append("device='%s'" % (self.device,))

    dtype = str(self.dtype)
    default = str(cthtorch.get_default_dtype())
    # the default dtype's complex twin prints no dtype either (torch's rule)
    default_complex = "torch.complex128" if default == "torch.float64" else "torch.complex64"
    if self.numel() == 0:
        # shape and dtype cannot be read off the (absent) values, so say them
        if self.dim() != 1:
            suffixes.append("size=%s" % (tuple(self.shape),))
        if dtype != default:
            suffixes.append("dtype=" + dtype)
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=%s" % (tuple(self.shape),))
        if dtype not in (default, default_complex, "torch.int64", "torch.bool"):
            suffixes.append("dtype=" + dtype)
        body = _tensor_str(self, indent) if tensor_contents is None else tensor_contents
    if tensor_contents is not None:
        body = tensor_contents

    grad = _grad_fn_suffix(self)
    if grad is not None:
        suffixes.append(grad)

    text = _add_suffixes(prefix + body, suffixes, indent)
    if parameter is not None and isinstance(self, parameter) and not plain:
        text = "Parameter(%s)" % text
    return text



def _part_str(name, tensor, indent):
    """'indices=tensor([[0, 1]])' inside a sparse repr (empty parts name their size)."""
    prefix = name + "=tensor("
    if tensor.numel() == 0:
        return prefix + "[], size=%s)" % (tuple(tensor.shape),)
    return prefix + _tensor_str(tensor.detach(), indent + len(prefix)) + ")"


def _sparse_str(self, parts=None):
    """repr of a sparse tensor, PyTorch's layout: its index tensors and values (parts: (name, tensor) pairs;
    COO's indices and values by default), then size/nnz/dtype/layout."""
    import cthtorch
    indent = len("tensor(")
    suffixes = []
    if _shows_device(self):
        suffixes.append("device='%s'" % (self.device,))
    suffixes += ["size=%s" % (tuple(self.shape),), "nnz=%d" % self._nnz()]
    if str(self.dtype) not in (str(cthtorch.get_default_dtype()), "torch.int64", "torch.bool"):
        suffixes.append("dtype=%s" % self.dtype)
    coo = parts is None   # torch starts COO's suffixes on a new line, compressed layouts' after the values
    if coo:
        parts = (("indices", self._indices()), ("values", self._values()))
    body = (",\n" + " " * indent).join(_part_str(name, t, indent) for name, t in parts)
    suffixes.append("layout=%s" % self.layout)
    grad = _grad_fn_suffix(self)
    if grad is not None:
        suffixes.append(grad)
    return _add_suffixes("tensor(" + body, suffixes, indent, force_newline=coo)


def _quantized_str(self, tensor_contents=None):
    """repr of a quantized tensor: its real values, then torch's size/dtype/scheme/parameters suffixes."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = ["size=%s" % (tuple(self.shape),), "dtype=%s" % (self.dtype,),
                "quantization_scheme=%s" % (self.qscheme(),)]
    if self._qparams[4] is None:
        suffixes += ["scale=%s" % (self.q_scale(),), "zero_point=%s" % (self.q_zero_point(),)]
    else:
        suffixes += ["scale=%s" % (self.q_per_channel_scales(),),
                     "zero_point=%s" % (self.q_per_channel_zero_points(),),
                     "axis=%s" % (self.q_per_channel_axis(),)]
    if tensor_contents is not None:
        body = tensor_contents
    else:
        real = self.dequantize()
        body = _tensor_str(real, indent) if real.numel() else "[]"
    return _add_suffixes(prefix + body, suffixes, indent)
