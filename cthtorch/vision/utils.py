"""make_grid / save_image (used by the VAE and DCGAN examples)."""
import math

import cthtorch


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, (list, tuple)):
        tensor = cthtorch.stack(list(tensor), 0)
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = cthtorch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = cthtorch.cat((tensor, tensor, tensor), 1)
    if normalize:
        tensor = tensor.clone()

        def norm_ip(img, lo, hi):
            img.clamp_(min=lo, max=hi)
            img.sub_(lo).div_(max(hi - lo, 1e-5))

        def norm_range(t, r):
            if r is not None:
                norm_ip(t, r[0], r[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))
        if scale_each:
            for t in tensor:
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = cthtorch.full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value,
                         dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    arr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(cthtorch.uint8).numpy()
    Image.fromarray(arr).save(fp, format=format)
