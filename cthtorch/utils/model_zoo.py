"""torch.utils.model_zoo: load_url is hub.load_state_dict_from_url (cache only here)."""
from cthtorch.hub import load_state_dict_from_url as load_url  # noqa: F401
