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
