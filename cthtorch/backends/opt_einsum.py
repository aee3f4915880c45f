"""torch.backends.opt_einsum: contraction-order search for einsum with three or
more operands through the opt_einsum package. It is not a dependency of
cthtorch, whose einsum contracts left to right; as in torch, enabled and
strategy report whether it is installed (found without importing it)."""
import importlib.util as _util

_found = _util.find_spec("opt_einsum") is not None
enabled = _found
strategy = "auto" if _found else None


def is_available():
    return _found


def get_opt_einsum():
    if not _found:
        return None
    import opt_einsum
    return opt_einsum
