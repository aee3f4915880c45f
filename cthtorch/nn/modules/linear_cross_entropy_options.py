"""LinearCrossEntropyOptions (torch.nn.modules.linear_cross_entropy_options): torch's settings for a chunked
linear_cross_entropy. They are validated and kept as torch does; cthtorch evaluates the loss in one piece,
which gives the same value (and allows any number of backward passes)."""
import dataclasses

import cthtorch

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError("invalid acc_policy: %r" % (self.acc_policy,))
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError("invalid chunking_method: %r" % (self.chunking_method,))
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got %r" % (self.batch_chunk_size,))
        if self.acc_dtype is not None and self.acc_dtype not in (cthtorch.float16, cthtorch.bfloat16, cthtorch.float32,
                                                                 cthtorch.float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             "torch.float64}, got %r. Pass acc_dtype=None to let the op pick automatically."
                             % (self.acc_dtype,))
