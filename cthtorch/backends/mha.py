"""torch.backends.mha: the switch for nn.MultiheadAttention's inference fast path. cthtorch's attention has
one path; the switch only decides, as in torch, whether nested inputs are refused for that reason first."""
import cthtorch

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast path for TransformerEncoder and MultiHeadAttention is enabled (True while scripting)."""
    if not cthtorch.jit.is_scripting():
        return _is_fastpath_enabled
    return True


def set_fastpath_enabled(value):
    """Sets whether the fast path is enabled."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
