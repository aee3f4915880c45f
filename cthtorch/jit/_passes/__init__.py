"""Graph passes (torch._C._jit_pass_* and the graph rewrites behind
torch.jit.freeze / optimize_for_inference). Each pass edits a Graph in place
unless it says it returns a copy."""
from .constant_pooling import constant_pooling
from .constant_propagation import constant_propagation
from .cse import eliminate_common_subexpression
from .dce import eliminate_dead_code, has_side_effects
from .freeze import freeze_module, optimize_frozen_graph
from .inline import inline_calls

__all__ = ["inline_calls", "eliminate_dead_code", "has_side_effects", "constant_pooling", "constant_propagation",
           "eliminate_common_subexpression", "freeze_module", "optimize_frozen_graph"]
