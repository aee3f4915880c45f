"""torchvision.ops.drop_block: DropBlock (Ghiasi et al. 2018), dropping whole block_size squares (cubes) of
each feature map and rescaling what is kept."""
import cthtorch
from cthtorch import nn
from cthtorch.nn import functional as F


def _drop_block(input, p, block_size, inplace, eps, training, nsp):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != nsp + 2:
        raise ValueError(f"input should be {nsp + 2} dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    spatial = list(input.shape[2:])
    block_size = min([block_size] + spatial[::-1])
    # the seed rate that drops a share p of the map once seeds grow into blocks
    valid, total = 1, 1
    for s in spatial:
        valid *= s - block_size + 1
        total *= s
    gamma = (p * total) / ((block_size ** nsp) * valid)
    noise = cthtorch.empty(tuple(input.shape[:2]) + tuple(s - block_size + 1 for s in spatial), dtype=input.dtype,
                           device=input.device)
    noise.bernoulli_(gamma)
    noise = F.pad(noise, [block_size // 2] * (2 * nsp), value=0)
    pool = F.max_pool2d if nsp == 2 else F.max_pool3d
    noise = pool(noise, stride=(1,) * nsp, kernel_size=(block_size,) * nsp, padding=block_size // 2)
    noise = 1 - noise
    normalize_scale = noise.numel() / (eps + noise.sum())
    if inplace:
        input.mul_(noise).mul_(normalize_scale)
    else:
        input = input * noise * normalize_scale
    return input


def drop_block2d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


class DropBlock2d(nn.Module):
    def __init__(self, p, block_size, inplace=False, eps=1e-06):
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, inplace={self.inplace})"


class DropBlock3d(DropBlock2d):
    def forward(self, input):
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps, self.training)
