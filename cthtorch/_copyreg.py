"""Plain-pickle support for the C types that name themselves `torch.*`.

`torch.device`, `torch.Size` and `torch._C.Generator` print with torch's names, so
pickle's by-name lookup of the class finds real torch's object (or nothing) and
refuses. multiprocessing's spawn pickles them in ordinary programs
(pytorch/examples' mnist_hogwild passes a device to its workers), so each is
rebuilt through a function of this module instead. torch.save keeps writing
torch's own names (serialization.py's pickler overrides these).
"""
import copyreg

from . import _C


def _rebuild_device(*args):
    return _C.device(*args)


def _rebuild_size(dims):
    return _C.Size(dims)


def _rebuild_generator(device, state):
    g = _C.Generator(device)
    g.set_state(state)
    return g


def _reduce_device(d):
    return _rebuild_device, ((d.type,) if d.index is None else (d.type, d.index))


def _reduce_size(s):
    return _rebuild_size, (tuple(s),)


def _reduce_generator(g):
    return _rebuild_generator, (str(g.device), g.get_state())


copyreg.pickle(_C.device, _reduce_device)
copyreg.pickle(_C.Size, _reduce_size)
copyreg.pickle(_C.Generator, _reduce_generator)
