"""torchvision.ops.deform_conv2d / DeformConv2d: convolution whose kernel taps sample the input at learned
fractional offsets (Deformable ConvNets v1), each tap optionally scaled by a learned mask (v2). Written over
differentiable cthtorch ops (a bilinear gather, then a grouped matmul of the sampled columns), so autograd gives
the input, offset, mask, weight and bias gradients torchvision's kernels compute."""
import cthtorch
from cthtorch import nn
from cthtorch.nn.modules.conv import _ConvNd
from cthtorch.nn.modules.utils import _pair

__all__ = ["deform_conv2d", "DeformConv2d"]


def _bilinear_taps(input, y, x):
    """input (B, G, Cg, H, W) sampled at y, x (B, G, N): torchvision's bilinear_interpolate, zero outside the
    image (a point on or past -1 / H, W reads 0; a corner outside reads 0). Returns (B, G, Cg, N)."""
    B, G, Cg, H, W = input.shape
    flat = input.reshape(B, G, Cg, H * W)
    y0, x0 = cthtorch.floor(y), cthtorch.floor(x)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    inside = (y > -1) & (y < H) & (x > -1) & (x < W)
    y0, x0 = y0.long(), x0.long()
    out = 0
    for yy, wy in ((y0, hy), (y0 + 1, ly)):
        for xx, wx in ((x0, hx), (x0 + 1, lx)):
            ok = inside & (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
            idx = (yy.clamp(0, H - 1) * W + xx.clamp(0, W - 1)).unsqueeze(2).expand(B, G, Cg, y.shape[-1])
            out = out + cthtorch.gather(flat, 3, idx) * (wy * wx * ok).unsqueeze(2)
    return out


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), mask=None):
    """input (B, Cin, H, W); offset (B, 2 * offset_groups * kh * kw, Hout, Wout), (dy, dx) per kernel tap in
    row-major tap order, per offset group; weight (Cout, Cin // groups, kh, kw); mask (B, offset_groups * kh * kw,
    Hout, Wout) or None. Returns (B, Cout, Hout, Wout)."""
    stride_h, stride_w = _pair(stride)
    pad_h, pad_w = _pair(padding)
    dil_h, dil_w = _pair(dilation)
    weights_h, weights_w = weight.shape[-2:]
    batch, n_in_channels, in_h, in_w = input.shape
    n_offset_grps = offset.shape[1] // (2 * weights_h * weights_w)
    n_weight_grps = n_in_channels // weight.shape[1]
    if n_offset_grps == 0:
        raise RuntimeError(
            "the shape of the offset tensor at dimension 1 is not valid. It should be a multiple of 2 * "
            "weight.size[2] * weight.size[3].\nGot offset.shape[1]=%d, while 2 * weight.size[2] * weight.size[3]=%d"
            % (offset.shape[1], 2 * weights_h * weights_w))
    out_h = (in_h + 2 * pad_h - (dil_h * (weights_h - 1) + 1)) // stride_h + 1
    out_w = (in_w + 2 * pad_w - (dil_w * (weights_w - 1) + 1)) // stride_w + 1
    if offset.shape[0] != batch:
        raise RuntimeError("invalid batch size of offset")
    if tuple(offset.shape[2:]) != (out_h, out_w):
        raise RuntimeError("offset output dims: (%d, %d) - computed output dims: (%d, %d)"
                           % (offset.shape[2], offset.shape[3], out_h, out_w))
    taps, n_out = weights_h * weights_w, out_h * out_w
    off = offset.reshape(batch, n_offset_grps, taps, 2, n_out)
    # each tap's sampling point before its offset: the output pixel's window corner plus the dilated tap
    ky = cthtorch.arange(weights_h, dtype=offset.dtype).mul(dil_h).repeat_interleave(weights_w)
    kx = cthtorch.arange(weights_w, dtype=offset.dtype).mul(dil_w).repeat(weights_h)
    oy = (cthtorch.arange(out_h, dtype=offset.dtype) * stride_h - pad_h).repeat_interleave(out_w)
    ox = (cthtorch.arange(out_w, dtype=offset.dtype) * stride_w - pad_w).repeat(out_h)
    y = (ky[:, None] + oy[None, :]) + off[:, :, :, 0]
    x = (kx[:, None] + ox[None, :]) + off[:, :, :, 1]
    cols = _bilinear_taps(input.reshape(batch, n_offset_grps, n_in_channels // n_offset_grps, in_h, in_w),
                          y.reshape(batch, n_offset_grps, taps * n_out), x.reshape(batch, n_offset_grps, taps * n_out))
    cols = cols.reshape(batch, n_offset_grps, -1, taps, n_out)
    if mask is not None:
        cols = cols * mask.reshape(batch, n_offset_grps, 1, taps, n_out)
    cols = cols.reshape(batch, n_weight_grps, (n_in_channels // n_weight_grps) * taps, n_out)
    w = weight.reshape(n_weight_grps, weight.shape[0] // n_weight_grps, -1)
    out = cthtorch.matmul(w.unsqueeze(0), cols).reshape(batch, weight.shape[0], out_h, out_w)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out


class DeformConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.weight = nn.Parameter(cthtorch.empty(out_channels, in_channels // groups, *self.kernel_size))
        if bias:
            self.bias = nn.Parameter(cthtorch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    # nn.Conv2d's initialisation (kaiming-uniform weight, fan-in-bounded bias), which torchvision's repeats
    reset_parameters = _ConvNd.reset_parameters

    def forward(self, input, offset, mask=None):
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride, padding=self.padding,
                             dilation=self.dilation, mask=mask)

    def __repr__(self):
        s = "%s(%d, %d, kernel_size=%s, stride=%s" % (self.__class__.__name__, self.in_channels, self.out_channels,
                                                      self.kernel_size, self.stride)
        s += ", padding=%s" % (self.padding,) if self.padding != (0, 0) else ""
        s += ", dilation=%s" % (self.dilation,) if self.dilation != (1, 1) else ""
        s += ", groups=%d" % self.groups if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"
