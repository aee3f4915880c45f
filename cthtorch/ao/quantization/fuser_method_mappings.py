"""Which sequences of modules fuse_modules fuses, and into what (torch's fuser_method_mappings)."""
from cthtorch import nn
from cthtorch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_linear_bn", "get_fuser_method"]


def _nni():
    from cthtorch.ao.nn.intrinsic.modules import fused
    return fused


def fuse_conv_bn(is_qat, conv, bn):
    """QAT: a ConvBn module; evaluation: the conv with the batch norm folded into its weights."""
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    kinds = {nn.Conv1d: _nni().ConvBn1d, nn.Conv2d: _nni().ConvBn2d, nn.Conv3d: _nni().ConvBn3d}
    if is_qat:
        if bn.num_features != conv.out_channels:
            raise AssertionError("Output channel of Conv2d must match num_features of BatchNorm2d")
        if not bn.affine:
            raise AssertionError("Only support fusing BatchNorm2d with affine set to True")
        if not bn.track_running_stats:
            raise AssertionError("Only support fusing BatchNorm2d with tracking_running_stats set to True")
        if type(conv) not in kinds:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
        return kinds[type(conv)](conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    if conv.training != bn.training or bn.training != relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        kinds = {nn.Conv1d: _nni().ConvBnReLU1d, nn.Conv2d: _nni().ConvBnReLU2d, nn.Conv3d: _nni().ConvBnReLU3d}
        if type(conv) not in kinds:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return kinds[type(conv)](conv, bn, relu)
    kinds = {nn.Conv1d: _nni().ConvReLU1d, nn.Conv2d: _nni().ConvReLU2d, nn.Conv3d: _nni().ConvReLU3d}
    if type(conv) not in kinds:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return kinds[type(conv)](fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if is_qat:
        return _nni().LinearBn1d(linear, bn)
    return fuse_linear_bn_eval(linear, bn)


def _sequential_of(kind):
    return lambda is_qat, *mods: getattr(_nni(), kind)(*mods)


def _table():
    return {
        (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn, (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
        (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
        (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu, (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
        (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
        (nn.Conv1d, nn.ReLU): _sequential_of("ConvReLU1d"), (nn.Conv2d, nn.ReLU): _sequential_of("ConvReLU2d"),
        (nn.Conv3d, nn.ReLU): _sequential_of("ConvReLU3d"), (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
        (nn.Linear, nn.ReLU): _sequential_of("LinearReLU"), (nn.BatchNorm2d, nn.ReLU): _sequential_of("BNReLU2d"),
        (nn.BatchNorm3d, nn.ReLU): _sequential_of("BNReLU3d"),
    }


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The fuser for a tuple of module types; AssertionError naming it when there is none."""
    mapping = _table()
    mapping.update(additional_fuser_method_mapping or {})
    fuser_method = mapping.get(op_list, None)
    if fuser_method is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fuser_method
