"""Graph passes (torch._C._jit_pass_* and the graph rewrites behind
torch.jit.freeze / optimize_for_inference). Each pass edits a Graph in place
unless it says it returns a copy."""
from .inline import inline_calls

__all__ = ["inline_calls"]
