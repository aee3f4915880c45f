"""parallel_apply: each module on its inputs, one per device (torch.nn.parallel.parallel_apply).
Like PyTorch it needs an accelerator to pick the devices from; cthtorch runs the replicas one
after another on the calling thread (the results are the same list)."""
import cthtorch

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    if len(modules) != len(inputs):
        raise AssertionError("The number of modules %d is not equal to the number of inputs %d"
                             % (len(modules), len(inputs)))
    if kwargs_tup is not None:
        assert len(modules) == len(kwargs_tup)
    else:
        kwargs_tup = ({},) * len(modules)
    if not cthtorch.cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    outputs = []
    for module, input, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(input, (list, tuple)):
            input = (input,)
        outputs.append(module(*input, **kwargs))
    return outputs
