"""torch.ao.quantization.quantize_fx: FX graph-mode quantization, which cthtorch does not have; the
names import so a program fails at the call, with what to use instead."""

__all__ = ["prepare_fx", "prepare_qat_fx", "convert_fx", "convert_to_reference_fx", "fuse_fx"]


def _graph_mode(name):
    def fn(*args, **kwargs):
        raise NotImplementedError("cthtorch has no FX graph-mode quantization (%s); use eager mode: "
                                  "torch.ao.quantization.fuse_modules / prepare / convert, or quantize_dynamic"
                                  % name)
    fn.__name__ = fn.__qualname__ = name
    return fn


prepare_fx = _graph_mode("prepare_fx")
prepare_qat_fx = _graph_mode("prepare_qat_fx")
convert_fx = _graph_mode("convert_fx")
convert_to_reference_fx = _graph_mode("convert_to_reference_fx")
fuse_fx = _graph_mode("fuse_fx")
