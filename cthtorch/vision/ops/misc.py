"""torchvision.ops.misc: the building blocks the model zoo shares (conv-norm-activation stacks, squeeze-and-
excitation, MLP, Permute, FrozenBatchNorm2d)."""
import warnings

import cthtorch
from cthtorch import nn

# kept by torchvision from when F.interpolate refused empty batches; DETR's util.misc.interpolate calls it
interpolate = nn.functional.interpolate


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with statistics and affine parameters fixed as buffers (detection backbones)."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", cthtorch.ones(num_features))
        self.register_buffer("bias", cthtorch.zeros(num_features))
        self.register_buffer("running_mean", cthtorch.zeros(num_features))
        self.register_buffer("running_var", cthtorch.ones(num_features))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_dict.pop(prefix + "num_batches_tracked", None)  # a BatchNorm2d's file loads into it
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x):
        scale = self.weight.reshape(1, -1, 1, 1) * (self.running_var.reshape(1, -1, 1, 1) + self.eps).rsqrt()
        shift = self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale
        return x * scale + shift

    def __repr__(self):
        return "%s(%d, eps=%s)" % (type(self).__name__, self.weight.shape[0], self.eps)


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class ConvNormActivation(nn.Sequential):
    """conv -> norm -> activation, children named 0, 1, 2; padding defaults to 'same' for odd kernels, and the
    conv has a bias only when there is no norm layer."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None,
                 conv_layer=nn.Conv2d):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                n = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else len(dilation)
                kernel_size, dilation = _ntuple(kernel_size, n), _ntuple(dilation, n)
                padding = tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                             groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels
        if type(self) is ConvNormActivation:
            warnings.warn("Don't use ConvNormActivation directly, please use Conv2dNormActivation and "
                          "Conv3dNormActivation instead.")


class Conv2dNormActivation(ConvNormActivation):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(ConvNormActivation):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm3d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-excitation (Hu et al. 2017): the input scaled per channel by
    scale_activation(fc2(activation(fc1(global average)))), the fcs being 1x1 convolutions."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(input)))))

    def forward(self, input):
        return self._scale(input) * input


class MLP(nn.Sequential):
    """Linear layers of the widths in hidden_channels, each but the last followed by [norm], activation and
    dropout; the last by dropout only."""

    def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=nn.ReLU, inplace=None,
                 bias=True, dropout=0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers += [activation_layer(**params), nn.Dropout(dropout, **params)]
            in_dim = hidden_dim
        layers += [nn.Linear(in_dim, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **params)]
        super().__init__(*layers)


class Permute(nn.Module):
    """The input with its dimensions reordered as dims (a view)."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return cthtorch.permute(x, self.dims)
