"""torch.backends.quantized: which engine runs quantized ops (torch.backends.quantized.engine).

cthtorch computes every engine's ops itself; the engine picks the arithmetic torch's engine uses where
they differ: dynamic linear layers quantize activations to 7 bits and fuse the final multiply-add on
x86/fbgemm/onednn, and to 8 bits with a separate multiply and add on qnnpack."""
import sys
import types

_ENGINES = ["qnnpack", "onednn", "x86", "fbgemm"]


class _QEngineProp:
    def __get__(self, obj, objtype):
        return obj._engine

    def __set__(self, obj, val):
        if val not in _ENGINES and val != "none":
            raise RuntimeError("%s is not a valid value for quantized engine" % val)
        obj.__dict__["_engine"] = val


class _SupportedQEnginesProp:
    def __get__(self, obj, objtype):
        return list(_ENGINES)

    def __set__(self, obj, val):
        raise RuntimeError("Assignment not supported")


class QuantizedEngine(types.ModuleType):
    engine = _QEngineProp()
    supported_engines = _SupportedQEnginesProp()

    def __init__(self, m, name):
        super().__init__(name)
        self.m = m
        self.__dict__["_engine"] = "x86"

    def __getattr__(self, attr):
        return self.m.__getattribute__(attr)


# replaced by a module whose engine attribute checks what is assigned (torch's arrangement)
sys.modules[__name__] = QuantizedEngine(sys.modules[__name__], __name__)
