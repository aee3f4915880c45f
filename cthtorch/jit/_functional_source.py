"""nn.functional functions that torch's TorchScript compiles from their Python source rather than
mapping to one op (F.embedding: a padding_idx check and the max_norm renorm around aten::embedding).
cthtorch's own F functions are written for eager speed and torch_function dispatch, so the frontend
compiles these typed forms in their place; each runs the ops the eager function runs. They carry
nn.functional's module name, so graphs and archives call them `__torch__.torch.nn.functional.<name>`
as torch's do."""
from typing import Optional

import cthtorch
from cthtorch import Tensor
from cthtorch.nn._functional.sparse import embedding_padding_idx

__all__ = ["embedding"]


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    idx = embedding_padding_idx(weight, padding_idx)
    if max_norm is not None:
        input = input.contiguous()
        cthtorch.embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    return cthtorch.embedding(weight, input, idx, scale_grad_by_freq, sparse)


for _fn in (embedding,):
    _fn.__module__ = "cthtorch.nn.functional"
