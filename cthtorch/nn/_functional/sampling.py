"""affine_grid and grid_sample for 4-d inputs (bilinear/nearest; zeros/border/reflection padding),
as gathers of the four neighbours, so autograd reaches both the input and the grid."""
import warnings

import cthtorch
from cthtorch._utils import _tensor_arg
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary
from cthtorch.overrides import has_torch_function_variadic as _has_torch_function_variadic


def _align_default(align_corners):
    if align_corners is None:   # torch's one text for both functions (so a warning filter shows it once)
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=3)
        return False
    return align_corners


def affine_grid(theta, size, align_corners=None):
    if _has_torch_function_unary(theta):
        return _handle_with_locals(affine_grid, locals())
    align_corners = _align_default(align_corners)
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got %s" % theta.dtype)
    size = list(size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid for 3-d (5-D size) is not implemented in cthtorch")
    if len(size) != 4:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  "respectively. Got size %s." % (size,))
    if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
        raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size %s. Got %s."
                         % (size, theta.shape))
    if min(size) <= 0:
        raise ValueError("Expected non-zero, positive output size. Got %s" % (size,))
    n, _, h, w = size

    def lin(k):
        v = cthtorch.linspace(-1, 1, k, dtype=theta.dtype) if k > 1 else cthtorch.zeros(1, dtype=theta.dtype) - 1
        return v if align_corners else v * ((k - 1) / k)

    xs = lin(w).reshape(1, w).expand(h, w)
    ys = lin(h).reshape(h, 1).expand(h, w)
    base = cthtorch.stack([xs, ys, cthtorch.ones(h, w, dtype=theta.dtype)], -1).reshape(1, h * w, 3)
    return base.matmul(theta.transpose(1, 2)).reshape(n, h, w, 2)


def _unnormalize(c, size, align_corners):
    return (c + 1) / 2 * (size - 1) if align_corners else ((c + 1) * size - 1) / 2


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return c * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (c - lo).abs()
    flips = (c / span).floor()
    extra = c - flips * span
    odd = flips - 2 * (flips / 2).floor()
    return cthtorch.where(odd == 0, extra + lo, span - extra + lo)


def _source_coord(c, size, padding_mode, align_corners):
    c = _unnormalize(c, size, align_corners)
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if _has_torch_function_variadic(input, grid):
        return _handle_with_locals(grid_sample, locals())
    _tensor_arg("grid_sampler", "input", input, 1)
    _tensor_arg("grid_sampler", "grid", grid, 2)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         "got: '%s'" % mode)
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         "'reflection', but got: '%s'" % padding_mode)
    align_corners = _align_default(align_corners)
    if input.dim() == 5:
        raise NotImplementedError("grid_sample for 5-D (volumetric) input is not implemented in cthtorch")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample(mode='bicubic') is not implemented in cthtorch")
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[-1] != 2:
        raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           "input with sizes %s and grid with sizes %s" % (list(input.shape), list(grid.shape)))
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                           "%s and grid with sizes %s" % (list(input.shape), list(grid.shape)))
    n, c, h, w = input.shape
    oh, ow = grid.shape[1], grid.shape[2]
    x = _source_coord(grid[..., 0], w, padding_mode, align_corners)     # (n, oh, ow)
    y = _source_coord(grid[..., 1], h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)

    def tap(xi, yi):
        """Input values at integer positions (xi, yi); zero where outside."""
        inside = ((xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)).to(input.dtype)
        idx = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).to(cthtorch.int64).reshape(n, 1, oh * ow)
        vals = flat.gather(2, idx.expand(n, c, oh * ow)).reshape(n, c, oh, ow)
        return vals * inside.unsqueeze(1)

    if mode == "nearest":
        out = tap(x.detach().round(), y.detach().round())
        # torch's grid gradient is defined (zeros) for nearest sampling
        return out + grid.sum() * 0 if grid.requires_grad else out
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx1, wy1 = (x - x0).unsqueeze(1), (y - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0) * wx0 * wy0 + tap(x0 + 1, y0) * wx1 * wy0 + tap(x0, y0 + 1) * wx0 * wy1
            + tap(x0 + 1, y0 + 1) * wx1 * wy1)
