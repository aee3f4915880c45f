"""The ONNX ModelProto, written by hand in protobuf's wire format, so that
exporting needs no onnx or protobuf package (a tensor's raw_data is its
storage's bytes: this machine's order is ONNX's little-endian). Field numbers are onnx.proto's
(ONNX IR version 3..10); repeated scalars are written unpacked, which both
proto2 and proto3 readers accept.

Each writer returns the message's bytes; a sub-message is a length-delimited
field holding those bytes."""
import struct

# TensorProto.DataType
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = \
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
BFLOAT16 = 16

# AttributeProto.AttributeType
_A_FLOAT, _A_INT, _A_STRING, _A_TENSOR, _A_GRAPH, _A_FLOATS, _A_INTS, _A_STRINGS = 1, 2, 3, 4, 5, 6, 7, 8

# ONNX's type of each cthtorch dtype, by name (bfloat16's bits travel as they are)
_ONNX_OF_DTYPE = {"float32": FLOAT, "float64": DOUBLE, "float16": FLOAT16, "bfloat16": BFLOAT16, "int8": INT8,
                  "uint8": UINT8, "int16": INT16, "int32": INT32, "int64": INT64, "bool": BOOL}


def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF   # negative int64s are their 64-bit two's complement (10 bytes)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _int(field, n):
    return _key(field, 0) + _varint(int(n))


def _bytes(field, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return _key(field, 2) + _varint(len(b)) + b


def _float(field, x):
    return _key(field, 5) + struct.pack("<f", x)


def tensor(name, t):
    """TensorProto with raw_data (little-endian) from a cthtorch tensor."""
    t = t.detach().cpu().clone()   # a fresh contiguous copy: its storage holds exactly its elements
    out = b"".join(_int(1, d) for d in t.shape)
    out += _int(2, _ONNX_OF_DTYPE[str(t.dtype).split(".")[-1]])
    if name:
        out += _bytes(8, name)
    out += _bytes(9, t.untyped_storage().tobytes()[:t.numel() * t.element_size()])
    return out


def attribute(name, kind, value):
    """AttributeProto; kind is one of 'f', 'i', 's', 't', 'g', 'fs', 'is', 'ss'
    (torch's attribute kinds), value the Python value (bytes of a TensorProto
    or GraphProto for 't'/'g')."""
    out = _bytes(1, name)
    if kind == "f":
        out += _float(2, value) + _int(20, _A_FLOAT)
    elif kind == "i":
        out += _int(3, value) + _int(20, _A_INT)
    elif kind == "s":
        out += _bytes(4, value) + _int(20, _A_STRING)
    elif kind == "t":
        out += _bytes(5, value) + _int(20, _A_TENSOR)
    elif kind == "g":
        out += _bytes(6, value) + _int(20, _A_GRAPH)
    elif kind == "fs":
        out += b"".join(_float(7, x) for x in value) + _int(20, _A_FLOATS)
    elif kind == "is":
        out += b"".join(_int(8, x) for x in value) + _int(20, _A_INTS)
    elif kind == "ss":
        out += b"".join(_bytes(9, x) for x in value) + _int(20, _A_STRINGS)
    else:
        raise ValueError("unknown ONNX attribute kind %r" % (kind,))
    return out


def node(op_type, inputs, outputs, name="", domain="", attributes=()):
    """NodeProto; attributes: the bytes of each AttributeProto. An absent
    optional input is the empty name."""
    out = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    if name:
        out += _bytes(3, name)
    out += _bytes(4, op_type)
    out += b"".join(_bytes(5, a) for a in attributes)
    if domain:
        out += _bytes(7, domain)
    return out


def value_info(name, elem_type, shape):
    """ValueInfoProto of a tensor; shape: a list of ints (fixed), strs
    (symbolic dim_param) or None (unknown), or None for an unknown rank."""
    tt = _int(1, elem_type)
    if shape is not None:
        dims = b""
        for d in shape:
            if isinstance(d, str):
                dims += _bytes(1, _bytes(2, d))
            elif d is None:
                dims += _bytes(1, b"")
            else:
                dims += _bytes(1, _int(1, d))
        tt += _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tt))


def graph(name, nodes, inputs, outputs, initializers=(), value_infos=(), doc_string=""):
    out = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, name)
    out += b"".join(_bytes(5, t) for t in initializers)
    if doc_string:
        out += _bytes(10, doc_string)
    out += b"".join(_bytes(11, i) for i in inputs) + b"".join(_bytes(12, o) for o in outputs)
    out += b"".join(_bytes(13, v) for v in value_infos)
    return out


def model(graph_bytes, opsets, ir_version, producer_name="", producer_version="", doc_string=""):
    """ModelProto; opsets: {domain: version} ('' is the default ONNX domain)."""
    out = _int(1, ir_version)
    if producer_name:
        out += _bytes(2, producer_name)
    if producer_version:
        out += _bytes(3, producer_version)
    if doc_string:
        out += _bytes(6, doc_string)
    out += _bytes(7, graph_bytes)
    for dom, ver in opsets.items():
        out += _bytes(8, (_bytes(1, dom) if dom else b"") + _int(2, ver))
    return out
