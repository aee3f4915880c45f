"""What quantized modules share (torch.ao.nn.quantized.modules.utils)."""
import cthtorch

__all__ = []


# cthtorch's quantized modules run their integer arithmetic in Python: jit.script refuses them
JIT_UNSUPPORTED = ("is a quantized module, which cthtorch cannot compile to TorchScript; run the quantized "
                   "model eagerly")


class _OutputQParams:
    """A module whose output is quantized with (self.scale, self.zero_point): its state_dict holds them as
    the tensors `scale` and `zero_point`, as torch's quantized modules save them."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = cthtorch.tensor(self.scale)
        destination[prefix + "zero_point"] = cthtorch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        if prefix + "scale" in state_dict:
            self.scale = float(state_dict.pop(prefix + "scale"))
        if prefix + "zero_point" in state_dict:
            self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


class _FloatComputed(_OutputQParams):
    """A quantized twin of a float module (norms, activations) computed as torch's reference does: the
    input's real values through the float module, the result quantized with the observed output
    parameters. Mixed in before the float class; _ARGS names its constructor arguments."""
    _jit_unsupported = JIT_UNSUPPORTED
    _ARGS = ()

    def forward(self, input):
        out = super().forward(input.dequantize())
        return cthtorch.quantize_per_tensor(out, self.scale, self.zero_point, input.dtype)

    def _get_name(self):
        return "Quantized" + type(self).__bases__[1].__name__   # (_FloatComputed, the float class)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new = cls(*(getattr(mod, name) for name in cls._ARGS))
        new.load_state_dict({k: v for k, v in mod.state_dict().items()
                             if not k.startswith("activation_post_process.")})
        new.scale, new.zero_point = float(scale), int(zero_point)
        new.train(mod.training)
        return new

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.__dict__.setdefault("scale", 1.0)
        self.__dict__.setdefault("zero_point", 0)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)
