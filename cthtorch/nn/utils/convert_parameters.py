import cthtorch


def parameters_to_vector(parameters):
    return cthtorch.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, cthtorch.Tensor):
        raise TypeError("expected torch.Tensor, but got: %s" % type(vec).__name__)
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
