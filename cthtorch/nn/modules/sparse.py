"""torch.nn.modules.sparse: embeddings (import path kept for user code)."""
from cthtorch.nn.modules.layers import Embedding  # noqa: F401
from cthtorch.nn.modules.embedding_bag import EmbeddingBag  # noqa: F401
