"""gdb pretty-printers for cthtorch's C structs.

Load in gdb with:   source tools/gdb/cthtorch_gdb.py
Then `print *t` for a THTensor* shows dtype, sizes, strides and offset, e.g.
  THTensor(float32, sizes=[2, 3], strides=[3, 1], offset=0, refcount=1)
"""
import gdb

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


class THTensorPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        v = self.val
        nd = int(v["ndim"])
        dt = int(v["dtype"])
        sizes = [int(v["sizes"][i]) for i in range(nd)]
        strides = [int(v["strides"][i]) for i in range(nd)]
        name = DTYPES[dt] if 0 <= dt < len(DTYPES) else "dtype%d" % dt
        return "THTensor(%s, sizes=%s, strides=%s, offset=%d, refcount=%d)" % (
            name, sizes, strides, int(v["offset"]), int(v["refcount"]))


class THStoragePrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        v = self.val
        alloc = v["allocator"]
        name = alloc["name"].string() if int(alloc) else "none"
        return "THStorage(nbytes=%d, allocator=%s, refcount=%d)" % (int(v["nbytes"]), name, int(v["refcount"]))


def lookup(val):
    t = val.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_STRUCT:
        if t.tag == "THTensor":
            return THTensorPrinter(val)
        if t.tag == "THStorage":
            return THStoragePrinter(val)
    return None


gdb.pretty_printers.append(lookup)
