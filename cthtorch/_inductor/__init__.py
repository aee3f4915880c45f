"""torch._inductor without a compiler: cthtorch runs eagerly (see cthtorch.compiler); only the
config knobs exist, so programs that tune inductor before an optional torch.compile (karpathy's
llm.c train_gpt2.py imports torch._inductor.config) run unchanged."""
from . import config  # noqa: F401
