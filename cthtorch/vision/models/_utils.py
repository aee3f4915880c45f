"""torchvision.models._utils: channel rounding, the weights-forced parameter check and the deprecated
pretrained= / positional-argument interface every builder accepts."""
import functools
import inspect
import warnings

import cthtorch
from cthtorch.vision.models._api import WeightsEnum


def _make_divisible(v, divisor, min_value=None):
    """Round v to a multiple of divisor, never going down by more than 10%."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _ovewrite_named_param(kwargs, param, new_value):
    """Pretrained weights fix some constructor arguments (num_classes, image_size, ...): set it, or refuse a
    different value the caller gave. (torchvision's spelling.)"""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError("The parameter '%s' expected value %s but got %s instead."
                             % (param, new_value, kwargs[param]))
    else:
        kwargs[param] = new_value


def _ovewrite_value_param(param, actual, expected):
    if actual is not None and actual != expected:
        raise ValueError("The parameter '%s' expected value %s but got %s instead." % (param, expected, actual))
    return expected


def _join_names(names):
    quoted = ["'%s'" % n for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def kwonly_to_pos_or_kw(fn):
    """Accept fn's keyword-only parameters positionally too, warning that this is deprecated (the pre-0.13
    builders took pretrained, progress positionally)."""
    params = list(inspect.signature(fn).parameters.values())
    start = next((i for i, p in enumerate(params) if p.kind == p.KEYWORD_ONLY), None)
    if start is None:
        raise TypeError("Found no keyword-only parameter on function '%s'" % fn.__name__)
    kw_names = [p.name for p in params[start:] if p.kind == p.KEYWORD_ONLY]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, extra = args[:start], args[start:]
        if extra:
            if len(extra) > len(kw_names):
                raise TypeError("%s() takes at most %d positional arguments (%d given)"
                                % (fn.__name__, start + len(kw_names), start + len(extra)))
            named = dict(zip(kw_names, extra))
            warnings.warn("Using %s as positional parameter(s) is deprecated since 0.13 and may be removed in the "
                          "future. Please use keyword parameter(s) instead." % _join_names(list(named)))
            kwargs.update(named)
        return fn(*args, **kwargs)
    return wrapper


def handle_legacy_interface(**weights):
    """Builder decorator mapping the deprecated pretrained=<bool> (or a bool given as weights) onto weights:
    weights={param: (legacy_param, default)}, default being the member pretrained=True means (or a function of
    the call's kwargs giving it, or None when the model has no such weights)."""
    def outer(builder):
        @kwonly_to_pos_or_kw
        @functools.wraps(builder)
        def inner(*args, **kwargs):
            for weights_param, (pretrained_param, default) in weights.items():
                missing = object()
                given = kwargs.get(weights_param, missing)
                if ((weights_param not in kwargs and pretrained_param not in kwargs)
                        or isinstance(given, WeightsEnum) or (isinstance(given, str) and given != "legacy")
                        or given is None):
                    continue
                # a non-enum value in weights= is the old positional pretrained
                positional = given is not missing
                if positional:
                    kwargs[pretrained_param] = pretrained = kwargs.pop(weights_param)
                else:
                    pretrained = kwargs[pretrained_param]
                if pretrained:
                    chosen = default(kwargs) if callable(default) else default
                    if not isinstance(chosen, WeightsEnum):
                        raise ValueError("No weights available for model %s" % builder.__name__)
                else:
                    chosen = None
                if not positional:
                    warnings.warn("The parameter '%s' is deprecated since 0.13 and may be removed in the future, "
                                  "please use '%s' instead." % (pretrained_param, weights_param))
                msg = ("Arguments other than a weight enum or `None` for '%s' are deprecated since 0.13 and may be "
                       "removed in the future. The current behavior is equivalent to passing `%s=%s`."
                       % (weights_param, weights_param, chosen))
                if pretrained:
                    msg += (" You can also use `%s=%s.DEFAULT` to get the most up-to-date weights."
                            % (weights_param, type(chosen).__name__))
                warnings.warn(msg)
                del kwargs[pretrained_param]
                kwargs[weights_param] = chosen
            return builder(*args, **kwargs)
        return inner
    return outer


def _transform_input(x):
    """Inputs normalized with ImageNet's mean/std re-normalized to mean 0.5, std 0.5 per channel, what the
    weights GoogLeNet and Inception v3 were ported with expect (their transform_input=True)."""
    channels = [cthtorch.unsqueeze(x[:, c], 1) * (s / 0.5) + (m - 0.5) / 0.5
                for c, (m, s) in enumerate(((0.485, 0.229), (0.456, 0.224), (0.406, 0.225)))]
    return cthtorch.cat(channels, 1)


class IntermediateLayerGetter(cthtorch.nn.ModuleDict):
    """The model's direct children, in registration order, up to the last one named in `return_layers`; forward
    runs them in that order and returns {new_name: output} for the named ones (DETR's and the segmentation
    models' backbones). Children used out of order or nested deeper cannot be asked for."""

    _version = 2

    def __init__(self, model, return_layers):
        if not set(return_layers).issubset(name for name, _ in model.named_children()):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        wanted = set(return_layers)
        kept = {}
        for name, module in model.named_children():
            kept[name] = module
            wanted.discard(name)
            if not wanted:
                break
        super().__init__(kept)
        self.return_layers = orig_return_layers

    def forward(self, x):
        from collections import OrderedDict
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
