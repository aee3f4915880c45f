"""QConfigMapping (torch.ao.quantization.qconfig_mapping): the qconfigs FX graph-mode quantization assigns
by module type and name. cthtorch has no FX quantization (prepare_fx raises NotImplementedError), but
programs build the mapping first, so it exists and records what they set."""
from collections import OrderedDict

from cthtorch.ao.quantization.qconfig import get_default_qconfig, get_default_qat_qconfig

__all__ = ["QConfigMapping", "get_default_qconfig_mapping", "get_default_qat_qconfig_mapping"]


class QConfigMapping:
    """A global qconfig and per-type / per-name overrides (set_* return self, as torch's)."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def to_dict(self):
        return {"": self.global_qconfig,
                "object_type": list(self.object_type_qconfigs.items()),
                "module_name_regex": list(self.module_name_regex_qconfigs.items()),
                "module_name": list(self.module_name_qconfigs.items()),
                "module_name_object_type_order": [(*k, v) for k, v in
                                                  self.module_name_object_type_order_qconfigs.items()]}

    @classmethod
    def from_dict(cls, qconfig_dict):
        mapping = cls()
        if "" in qconfig_dict:
            mapping.set_global(qconfig_dict[""])
        for object_type, qconfig in qconfig_dict.get("object_type", []):
            mapping.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get("module_name_regex", []):
            mapping.set_module_name_regex(regex, qconfig)
        for name, qconfig in qconfig_dict.get("module_name", []):
            mapping.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in qconfig_dict.get("module_name_object_type_order", []):
            mapping.set_module_name_object_type_order(name, object_type, index, qconfig)
        return mapping


def get_default_qconfig_mapping(backend="x86", version=0):
    """A mapping whose global qconfig is get_default_qconfig(backend) (torch's also lists fixed-qparams
    ops, which only FX quantization reads)."""
    return QConfigMapping().set_global(get_default_qconfig(backend, version))


def get_default_qat_qconfig_mapping(backend="x86", version=1):
    return QConfigMapping().set_global(get_default_qat_qconfig(backend, version))
