"""affine_grid, and grid_sample over 4-d and 5-d inputs (bilinear/nearest, bicubic on 4-d; zeros/border/reflection
padding). grid_sample runs the fused kernels (torch.grid_sampler_2d/3d, src/ATen/ATSampling.c) on the CPU; a composite
of gathers of the 2**d neighbours (4x4 for bicubic), which autograd differentiates through, serves other devices and the
create_graph backward of the kernels (src/python/autograd/FormulasSampling.c)."""
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


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _cubic_weights(t):
    """the cubic convolution weights (A = -0.75, torch's) of the taps at -1, 0, 1, 2 from floor, at fraction t"""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _tap_index(i, size, padding_mode, align_corners):
    """bicubic: padding moves each integer tap (detached), not the coordinate, as torch's"""
    if padding_mode == "border":
        i = i.clamp(0, size - 1)
    elif padding_mode == "reflection":
        i = _reflect(i, 0, 2 * (size - 1)) if align_corners else _reflect(i, -1, 2 * size - 1)
        i = i.clamp(0, size - 1).trunc()
    return i


def _grid_sample_composite(input, grid, mode, padding_mode, align_corners):
    """grid_sample as gathers of the neighbours of each source point (input and grid already checked)"""
    nsp = input.dim() - 2
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])[::-1]          # coordinate d of the grid indexes sizes[d]: x (W), y (H), z (D)
    out_sp = list(grid.shape[1:-1])
    npts, strides, q = 1, [], 1
    for s in out_sp:
        npts *= s
    for s in sizes:
        strides.append(q)
        q *= s
    if mode == "bicubic":
        coords = [_unnormalize(grid[..., d], sizes[d], align_corners) for d in range(nsp)]
    else:
        coords = [_source_coord(grid[..., d], sizes[d], padding_mode, align_corners) for d in range(nsp)]
    flat = input.reshape(n, c, q)

    def tap(idx):
        """input values at integer positions idx (one tensor per coordinate); zero where outside"""
        inside, lin = None, 0
        for i, s, st in zip(idx, sizes, strides):
            ok = (i >= 0) & (i <= s - 1)
            inside = ok if inside is None else inside & ok
            lin = lin + i.clamp(0, s - 1) * st
        lin = lin.to(cthtorch.int64).reshape(n, 1, npts).expand(n, c, npts)
        vals = flat.gather(2, lin).reshape([n, c] + out_sp)
        return cthtorch.where(inside.unsqueeze(1), vals, 0.0)

    if mode == "nearest":
        out = tap([x.detach().round() for x in coords])
        # torch's grid gradient is defined (zeros) for nearest sampling
        return out + grid.sum() * 0 if grid.requires_grad else out
    if mode == "bicubic":
        lo = [x.detach().floor() for x in coords]
        cw = [[w.unsqueeze(1) for w in _cubic_weights(x - f)] for x, f in zip(coords, lo)]
        taps = [[_tap_index(f + (q - 1), s, padding_mode, align_corners) for q in range(4)]
                for f, s in zip(lo, sizes)]
        out = None
        for r in range(4):
            row = None
            for q in range(4):
                term = tap([taps[0][q], taps[1][r]]) * cw[0][q]
                row = term if row is None else row + term
            row = row * cw[1][r]
            out = row if out is None else out + row
        return out
    lo = [x.detach().floor() for x in coords]
    hi_w = [(x - f).unsqueeze(1) for x, f in zip(coords, lo)]
    lo_w = [1 - w for w in hi_w]
    out = None
    for k in range(1 << nsp):
        bits = [(k >> d) & 1 for d in range(nsp)]
        term = tap([f + b for f, b in zip(lo, bits)])
        for d in range(nsp):
            term = term * (hi_w[d] if bits[d] else lo_w[d])
        out = term if out is None else out + term
    return out


def _grid_sampler_grad_composite(grad, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    """the fused backward's (grad_input, grad_grid), recorded through the composite, for create_graph"""
    want = [output_mask is None or bool(output_mask[i]) for i in range(2)]
    wrt = [t for t, w in zip((input, grid), want) if w and t.requires_grad]
    if not wrt:
        return None, None
    with cthtorch.enable_grad():
        out = _grid_sample_composite(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                                     align_corners)
        got = list(cthtorch.autograd.grad(out, wrt, grad, create_graph=True, allow_unused=True))
    res = []
    for t, w in zip((input, grid), want):
        g = got.pop(0) if w and t.requires_grad else None
        res.append(cthtorch.zeros_like(t) if g is None and w and t.requires_grad else g)
    return tuple(res)


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: the 2-d or 3-d kernel by the input's dims"""
    if not 0 <= interpolation_mode < len(_MODES):
        raise RuntimeError("grid_sampler(): unknown interpolation mode %d" % interpolation_mode)
    if not 0 <= padding_mode < len(_PADDINGS):
        raise RuntimeError("grid_sampler(): unknown padding mode %d" % padding_mode)
    if input.device.type != "cpu" and input.dim() in (4, 5) and grid.dim() == input.dim() \
            and grid.shape[-1] == input.dim() - 2 and input.shape[0] == grid.shape[0]:
        return _grid_sample_composite(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                                      bool(align_corners))
    kernel = cthtorch.grid_sampler_3d if input.dim() == 5 else cthtorch.grid_sampler_2d
    return kernel(input, grid, interpolation_mode, padding_mode, bool(align_corners))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if _has_torch_function_variadic(input, grid):
        return _handle_with_locals(grid_sample, locals())
    _tensor_arg("grid_sampler", "input", input, 1)
    _tensor_arg("grid_sampler", "grid", grid, 2)
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         "got: '%s'" % mode)
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         "'reflection', but got: '%s'" % padding_mode)
    align_corners = _align_default(align_corners)
    return _grid_sampler(input, grid, _MODES.index(mode), _PADDINGS.index(padding_mode), align_corners)
