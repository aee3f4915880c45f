"""Operator schemas: `aten::add.Tensor(Tensor self, Tensor other, *, Scalar
alpha=1) -> Tensor` parsed into FunctionSchema/Argument objects, as torch._C
exposes them (`_jit_get_schemas_for_operator`).

The registry is built on first use from the op declarations
(src/ATen/declarations/*.yaml: each `func:` plus its in-place and out=
forms) and from the hand-written schemas below for composites (Python ops
that have no declaration), which the frontend and the interpreter need for
overload resolution and output types. A composite missing here still traces:
the tracer records it by name with its arguments as called.
"""
import os
import re
import threading

from cthtorch._schema_text import split_arg, split_func, split_top

from . import _ir

__all__ = ["Argument", "FunctionSchema", "parse_schema", "get_schemas", "all_schemas", "register_schema",
           "match_node", "is_nondeterministic"]


_FACTORY_KW = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

# Composites (registered Python ops) used by common models and scripted code.
# Add a line here when the frontend or the interpreter needs another one.
COMPOSITE_SCHEMAS = [
    "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "aten::tile(Tensor self, SymInt[] dims) -> Tensor",
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "aten::dropout(Tensor input, float p, bool train) -> Tensor",
    "aten::feature_dropout(Tensor input, float p, bool train) -> Tensor",
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "aten::adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor",
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
    "bool ceil_mode=False) -> Tensor",
    "aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
    "bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, "
    "bool allow_tf32) -> Tensor",
    "aten::Int.Tensor(Tensor a) -> int",
    "aten::Float.Tensor(Tensor a) -> float",
    "aten::Bool.Tensor(Tensor a) -> bool",
    "aten::size.int(Tensor self, int dim) -> int",
    "aten::size(Tensor self) -> int[]",
    "aten::dim(Tensor self) -> int",
    "aten::numel(Tensor self) -> int",
    "aten::len.Tensor(Tensor t) -> int",
    "aten::item(Tensor self) -> Scalar",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    "aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    # x.to(device), x.to(None, dtype): TorchScript's own overloads, their dtype an int
    "aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, "
    "bool copy=False) -> Tensor(a|b)",
    "aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(a|b)",
    "aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(a|b)",
    "aten::detach(Tensor(a) self) -> Tensor(a)",
    "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor",
    "aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
    "aten::is_autocast_enabled() -> bool",
    "aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    "aten::is_grad_enabled() -> bool",
    "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
    "bool cudnn_enabled=True) -> Tensor",
    "aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
    "-> (Tensor, Tensor)",
    "aten::gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
    "-> Tensor",
    "aten::rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
    "-> Tensor",
    "aten::rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
    "-> Tensor",
    "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], "
    "SymInt[1] dilation=[1], SymInt groups=1) -> Tensor",
    "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], "
    "SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor",
    "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], "
    "bool ceil_mode=False) -> Tensor",
    "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
    "bool ceil_mode=False) -> Tensor",
    "aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
    "int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
    "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
] + [  # F.interpolate in TorchScript: torch's builtin, one overload per int/list size and scale
    "aten::__interpolate%s(Tensor input, %s size=None, %s scale_factor=None, str mode=\"nearest\", "
    "bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor" % sig
    for sig in ((".scale_list", "int?", "float[]?"), (".size_list_scale_list", "int[]?", "float[]?"),
                ("", "int?", "float?"), (".size_list", "int[]?", "float?"))
] + [
    "aten::conv_transpose%dd.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[%d] stride=1, "
    "SymInt[%d] padding=0, SymInt[%d] output_padding=0, SymInt groups=1, SymInt[%d] dilation=1) -> Tensor"
    % ((n,) * 5) for n in (1, 2, 3)
] + [
    "aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
    "aten::embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)",
    "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
    "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)",
] + [
    "aten::%s.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
    "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)" % f for f in ("gru", "rnn_tanh", "rnn_relu")
] + [  # their packed-sequence (.data) overloads, which the PackedSequence forwards (forward__1) call
    "aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, "
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)",
] + [
    "aten::%s.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
    "float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)" % f for f in ("gru", "rnn_tanh", "rnn_relu")
] + [  # factories (composites): torch's argument lists, which tracing records in full
    "aten::%s(SymInt[] size, *, %s) -> Tensor" % (f, _FACTORY_KW) for f in ("zeros", "ones", "rand", "randn")
] + [
    "aten::empty.memory_format(SymInt[] size, *, %s, MemoryFormat? memory_format=None) -> Tensor" % _FACTORY_KW,
    "aten::full(SymInt[] size, Scalar fill_value, *, %s) -> Tensor" % _FACTORY_KW,
    "aten::arange(Scalar end, *, %s) -> Tensor" % _FACTORY_KW,
    "aten::arange.start(Scalar start, Scalar end, *, %s) -> Tensor" % _FACTORY_KW,
    "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, %s) -> Tensor" % _FACTORY_KW,
    "aten::randint(SymInt high, SymInt[] size, *, ScalarType? dtype=4, %s) -> Tensor" % _FACTORY_KW[23:],
    "aten::randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=4, %s) -> Tensor"
    % _FACTORY_KW[23:],
    "aten::eye(SymInt n, *, %s) -> Tensor" % _FACTORY_KW,
    "aten::linspace(Scalar start, Scalar end, int steps, *, %s) -> Tensor" % _FACTORY_KW,
] + [  # the `.vec` overloads (a size list or scale list, either None) that torch's traces of interpolate record
    "aten::%s.vec(Tensor input, SymInt[]? output_size, %sfloat[]? scale_factors) -> Tensor"
    % (f, "bool align_corners, " if align else "") for f, align in (
        ("upsample_nearest1d", False), ("upsample_nearest2d", False), ("upsample_nearest3d", False),
        ("_upsample_nearest_exact1d", False), ("_upsample_nearest_exact2d", False),
        ("_upsample_nearest_exact3d", False), ("upsample_linear1d", True), ("upsample_bilinear2d", True),
        ("upsample_trilinear3d", True), ("upsample_bicubic2d", True), ("_upsample_bilinear2d_aa", True),
        ("_upsample_bicubic2d_aa", True), ("_upsample_lanczos2d_aa", True))
] + [
    "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
    # TransformerEncoder's sparsity fast path (nested tensors): named by torch's source, see _interpreter
    "aten::_nested_tensor_from_mask_left_aligned(Tensor t, Tensor mask) -> bool",
    "aten::_nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True) -> Tensor",
    "aten::to_padded_tensor(Tensor self, float padding, SymInt[]? output_size=None) -> Tensor",
] + [  # the inference fast path of torch's MultiheadAttention / TransformerEncoderLayer source
    "aten::_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, "
    "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, "
    "bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)",
    "aten::_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, "
    "Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, "
    "Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, "
    "Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor",
] + [  # `a & b` on tensors (masks in scripted activations' backward, e.g. hard_sigmoid's (x >= -3.) & (x <= 3.))
    "aten::%s.%s(Tensor self, %s other) -> Tensor" % (op, ovl, ovl)
    for op in ("__and__", "__or__", "__xor__") for ovl in ("Tensor", "Scalar")
]



def _scalar_arith_schemas():
    """The int/float overloads TorchScript uses for arithmetic on numbers
    (`i < 10` is aten::lt.int), as torch registers them."""
    out = []
    arith = {"add": None, "sub": None, "mul": None, "div": "float", "floordiv": None, "remainder": None,
             "pow": "float"}
    for op, ret in arith.items():
        for ovl, a, b in (("int", "int", "int"), ("float", "float", "float"), ("int_float", "int", "float"),
                          ("float_int", "float", "int")):
            r = ret or ("int" if ovl == "int" else "float")
            out.append("aten::%s.%s(%s a, %s b) -> %s" % (op, ovl, a, b, r))
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        for ovl, a, b in (("int", "int", "int"), ("float", "float", "float"), ("int_float", "int", "float"),
                          ("float_int", "float", "int")):
            out.append("aten::%s.%s(%s a, %s b) -> bool" % (op, ovl, a, b))
        out.append("aten::%s.str(str a, str b) -> bool" % op)
    out += ["aten::eq.bool(bool a, bool b) -> bool", "aten::ne.bool(bool a, bool b) -> bool",
            "aten::neg.int(int a) -> int", "aten::neg.float(float a) -> float",
            "aten::__not__(bool self) -> bool", "aten::__and__.bool(bool a, bool b) -> bool",
            "aten::__or__.bool(bool a, bool b) -> bool", "aten::Int.float(float a) -> int",
            "aten::Int.Scalar(Scalar a) -> int", "aten::Float.int(int a) -> float",
            "aten::Float.Scalar(Scalar a) -> float", "aten::len.t(t[] a) -> int", "aten::str(t elem) -> str",
            "aten::__getitem__.t(t[](a) list, int idx) -> t(*)", "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
            "aten::__is__(t1 self, t2 obj) -> bool", "aten::__isnot__(t1 self, t2 obj) -> bool",
            "prim::NumToTensor.Scalar(Scalar a) -> Tensor", "prim::min.int(int a, int b) -> int",
            "prim::max.int(int a, int b) -> int", "aten::format(str self, ...) -> str",
            "aten::ScalarImplicit(Tensor a) -> Scalar",
            # what torch's own modules' code (and so its archives) calls on non-tensor values
            "aten::__contains__.str_list(str[] l, str item) -> bool",
            "aten::__contains__.int_list(int[] l, int item) -> bool", "aten::device(str a) -> Device",
            "aten::list.t(t[] l) -> t[]", "aten::warn(str message, int stacklevel=2) -> ()",
            "aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]",
            "aten::all.bool(bool[] self) -> bool", "aten::all.int(int[] self) -> bool",
            "aten::any.bool(bool[] self) -> bool", "aten::any.int(int[] self) -> bool",
            "aten::is_floating_point(Tensor self) -> bool",
            "aten::dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
            "aten::feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)"]
    return out


_NONDETERMINISTIC = {"aten::rand", "aten::randn", "aten::randint", "aten::randperm", "aten::rand_like",
                     "aten::randn_like", "aten::randint_like", "aten::bernoulli", "aten::bernoulli_",
                     "aten::normal", "aten::normal_", "aten::uniform_", "aten::multinomial", "aten::poisson",
                     "aten::dropout", "aten::feature_dropout", "aten::feature_dropout_", "aten::alpha_dropout", "aten::rrelu",
                     "aten::exponential_", "aten::geometric_", "aten::cauchy_", "aten::log_normal_",
                     "aten::random_", "aten::native_dropout"}


class Argument:
    """One argument or return of a schema."""

    def __init__(self, name, type, default_value=None, has_default=False, kwarg_only=False, N=None,
                 alias=None, type_str=None):
        self.name = name
        self.type = type
        self.default_value = default_value
        self.has_default = has_default
        self.kwarg_only = kwarg_only
        self.N = N
        self.alias_info = alias
        self._type_str = type_str

    def has_default_value(self):
        return self.has_default

    @property
    def is_out(self):
        return self.kwarg_only and self.alias_info is not None and self.alias_info.endswith("!")

    @property
    def real_type(self):
        return self.type

    def __str__(self):
        s = self._type_str
        if self.name:
            s += " " + self.name
        if self.has_default:
            s += "=" + _fmt_default(self.default_value, self._type_str)
        return s

    __repr__ = __str__


class FunctionSchema:
    def __init__(self, name, overload_name, arguments, returns, text=None):
        self.name = name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns
        self.is_vararg = False
        self.is_varret = False
        self._text = text

    @property
    def is_mutable(self):
        return any(a.alias_info and a.alias_info.endswith("!") for a in self.arguments)

    def __str__(self):
        head = self.name + ("." + self.overload_name if self.overload_name else "")
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        if self.is_vararg:
            args.append("...")
        if len(self.returns) == 1 and not self.returns[0].name:
            rets = str(self.returns[0])
        else:
            rets = "(%s)" % ", ".join(str(r) for r in self.returns)
        return "%s(%s) -> %s" % (head, ", ".join(args), rets)

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def argument_index(self, name):
        for i, a in enumerate(self.arguments):
            if a.name == name:
                return i
        return None


# ---------------------------------------------------------------- parsing

_BASE_TYPES = {
    "Tensor": lambda: _ir.TensorType.get(), "int": lambda: _ir.IntType.get(), "SymInt": lambda: _ir.IntType.get(),
    "float": lambda: _ir.FloatType.get(), "bool": lambda: _ir.BoolType.get(), "str": lambda: _ir.StringType.get(),
    "Scalar": lambda: _ir.NumberType.get(), "ScalarType": lambda: _ir.IntType.get(),
    "Layout": lambda: _ir.IntType.get(), "MemoryFormat": lambda: _ir.IntType.get(),
    "Device": lambda: _ir.DeviceObjType.get(), "Generator": lambda: _ir.GeneratorType.get(),
    "Dimname": lambda: _ir.StringType.get(), "Any": lambda: _ir.AnyType.get(),
    "t": lambda: _ir.AnyType.get(), "t1": lambda: _ir.AnyType.get(), "t2": lambda: _ir.AnyType.get(),
    "complex": lambda: _ir.ComplexType.get(), "number": lambda: _ir.NumberType.get(),
    "NoneType": lambda: _ir.NoneType.get(),
}


def parse_type(s):
    """A schema type string -> (JitType, N, alias): `int[2]`, `Tensor(a!)`,
    `Tensor?[]`, `int[]?`."""
    s = s.strip()
    alias = None
    m = re.match(r"^(\w+(?:\[\])?)\(([^)]*)\)(.*)$", s)
    if m:
        s, alias = m.group(1) + m.group(3), m.group(2)
    opt_outer = s.endswith("?")
    if opt_outer:
        s = s[:-1]
    n = None
    t = None
    m = re.match(r"^(.*)\[(\d*)\]$", s)
    if m:
        inner, _, _ = parse_type(m.group(1))
        n = int(m.group(2)) if m.group(2) else None
        t = _ir.ListType(inner)
    elif s.endswith("?"):
        inner, _, _ = parse_type(s[:-1])
        t = _ir.OptionalType(inner)
    else:
        f = _BASE_TYPES.get(s)
        if f is None:
            raise RuntimeError("schema: unknown type '%s'" % s)
        t = f()
    if opt_outer:
        t = _ir.OptionalType(t)
    return t, n, alias


_MEMORY_FORMATS = {"contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3}


def _parse_default(text, typ):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text in _MEMORY_FORMATS:
        return _MEMORY_FORMATS[text]
    if text.startswith(("'", '"')):
        return text[1:-1]
    if text.startswith("["):
        body = text[1:-1].strip()
        return [_parse_default(x, None) for x in body.split(",")] if body else []
    try:
        v = int(text)
    except ValueError:
        v = float(text)
    # `int[2] stride=1` means [1, 1]: torch keeps the scalar as given
    if isinstance(typ, _ir.FloatType) and isinstance(v, int):
        v = float(v)
    return v


def _fmt_default(v, type_str):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, list):
        return "[%s]" % ", ".join(_fmt_default(x, None) for x in v)
    if isinstance(v, int) and type_str and type_str.startswith("MemoryFormat"):
        return {i: k for k, i in _MEMORY_FORMATS.items()}.get(v, str(v))
    return repr(v)


def _parse_arg(text, kwarg_only):
    ts, name, dflt = split_arg(text)
    t, n, alias = parse_type(ts)
    if not name:   # an unnamed return: "Tensor", "Tensor(a)"
        return Argument("", t, N=n, alias=alias, type_str=ts)
    if dflt is None:
        return Argument(name, t, kwarg_only=kwarg_only, N=n, alias=alias, type_str=ts)
    return Argument(name, t, _parse_default(dflt, t), True, kwarg_only, n, alias, ts)


def parse_schema(text):
    """`ns::name.overload(args) -> returns` -> FunctionSchema ("aten::" is
    assumed when the namespace is left out)."""
    text = text.strip()
    parts = split_func(text)
    if parts is None:
        raise RuntimeError("schema: cannot parse '%s'" % text)
    full, args_s, rets_s = parts
    name, _, ovl = full.partition(".")
    if "::" not in name:
        name = "aten::" + name
    args, kw, vararg = [], False, False
    for a in split_top(args_s):
        if a == "*":
            kw = True
            continue
        if a == "...":
            vararg = True
            continue
        args.append(_parse_arg(a, kw))
    rets_s = rets_s.strip()
    if rets_s.startswith("(") and rets_s.endswith(")"):
        rets = [_parse_arg(r, False) for r in split_top(rets_s[1:-1])]
    else:
        rets = [_parse_arg(rets_s, False)]
    fs = FunctionSchema(name, ovl or "", args, rets, text)
    fs.is_vararg = vararg
    return fs


# ---------------------------------------------------------------- registry

_lock = threading.Lock()
_registry = None     # "aten::add" -> [FunctionSchema]


def _declarations_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "src", "ATen", "declarations")


def _declared_schema_texts():
    import yaml
    d = _declarations_dir()
    texts = []
    if not os.path.isdir(d):
        return texts
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".yaml"):
            continue
        with open(os.path.join(d, fn)) as f:
            entries = yaml.safe_load(f) or []
        for e in entries:
            func = e.get("func") if isinstance(e, dict) else None
            if not func:
                continue
            texts.append(func)
            parts = split_func(func)
            if parts is None:
                continue
            full, args, rets = parts
            base, _, ovl = full.partition(".")
            if e.get("inplace"):
                a = re.sub(r"^Tensor (self|input)\b", r"Tensor(a!) \1", args.strip())
                texts.append("%s_%s(%s) -> Tensor(a!)" % (base, "." + ovl if ovl else "", a))
            if ovl == "Tensor" and args.startswith("Tensor self, Tensor other"):
                # torch's Scalar overload (`x + 1.0` in a script is aten::add.Scalar)
                sargs = args.replace("Tensor other", "Scalar other", 1).replace("*, ", "")
                texts.append("%s.Scalar(%s) -> %s" % (base, sargs, rets))
            if e.get("out"):
                o = "out" if ovl in (None, "", "Tensor") else ovl + "_out"
                sep = ", " if "*" in split_top(args) else ", *, "
                texts.append("%s.%s(%s%sTensor(a!) out) -> Tensor(a!)" % (base, o, args, sep))
    return texts


# Schemas of composites and Scalar overloads that scripted code calls and the
# declarations do not spell out (PyTorch's schema text for each). They are in
# the registry from its first build, where an entry the declarations or
# COMPOSITE_SCHEMAS give for the same name and overload wins. Built in, not
# added on the frontend's first lookup: the tracer infers a schema (-> Tensor)
# for a composite it meets with none, so chunk traced before any script typed
# a scripted chunk's list as one Tensor.
FRONTEND_SCHEMAS = [
    # torch spells tensor() with a type variable (`t[] data`); one line per element type here, the ints
    # first (an int also fits float and, as for int[N], `int[]`): torch.tensor(1) is a 0-d int64
    "aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
    "aten::tensor.int_list(int[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) "
    "-> Tensor",
    "aten::tensor.float_list(float[] data, *, ScalarType? dtype=None, Device? device=None, "
    "bool requires_grad=False) -> Tensor",
    "aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None) -> Tensor",
    "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "aten::matmul(Tensor self, Tensor other) -> Tensor",
    "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
    "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
    "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
    "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
]


def _build():
    reg = {}
    for text in _declared_schema_texts() + COMPOSITE_SCHEMAS + _scalar_arith_schemas() + _extra_texts:
        try:
            s = parse_schema(text)
        except RuntimeError:
            continue
        lst = reg.setdefault(s.name, [])
        if not any(str(x) == str(s) for x in lst):
            lst.append(s)
    for text in FRONTEND_SCHEMAS:
        s = parse_schema(text)
        lst = reg.setdefault(s.name, [])
        if not any(x.overload_name == s.overload_name for x in lst):
            lst.append(s)
    return reg


_extra_texts = []


def _reg():
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                _registry = _build()
    return _registry


def register_schema(text):
    """Adds a schema (a composite's, written by hand) to the registry."""
    s = parse_schema(text)
    _extra_texts.append(text)
    if _registry is not None:
        lst = _registry.setdefault(s.name, [])
        if not any(str(x) == str(s) for x in lst):
            lst.append(s)
    return s


def get_schemas(name):
    """All overloads of `ns::name` (a list, empty for an unknown op)."""
    if "::" not in name:
        name = "aten::" + name
    return list(_reg().get(name, ()))


def all_schemas():
    return [s for lst in _reg().values() for s in lst]


def find_schema(name, overload):
    for s in get_schemas(name):
        if s.overload_name == overload:
            return s
    return None


def _value_fits(v, t):
    vt = v.type()
    if _ir.is_subtype(vt, t):
        return True
    if isinstance(t, _ir.OptionalType):
        return _value_fits(v, t.getElementType())
    if isinstance(t, _ir.NumberType) or (isinstance(t, _ir.FloatType) and isinstance(vt, _ir.IntType)):
        return isinstance(vt, (_ir.IntType, _ir.FloatType, _ir.BoolType, _ir.NumberType))
    if isinstance(t, _ir.ListType) and isinstance(vt, _ir.ListType):
        return _ir.is_subtype(vt.getElementType(), t.getElementType()) or \
            isinstance(t.getElementType(), _ir.OptionalType)
    if isinstance(t, _ir.ListType) and isinstance(vt, _ir.IntType):   # int[2] accepts an int
        return isinstance(t.getElementType(), _ir.IntType)
    return isinstance(vt, _ir.AnyType)


def match_node(node):
    """The schema whose arguments the node's inputs fit (positional, all
    arguments given, as graphs spell calls); None if none does."""
    ins = node.inputs()
    for s in get_schemas(node.kind()):
        if len(s.arguments) != len(ins):
            continue
        if all(_value_fits(v, a.type) for v, a in zip(ins, s.arguments)):
            return s
    return None


def is_nondeterministic(kind):
    return kind in _NONDETERMINISTIC
