"""Handles returned by register_hook-style calls."""


class RemovableHandle:
    """Removes a hook from the dict it was registered in."""
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        import weakref
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if extra_dict is not None:
            dicts = extra_dict if isinstance(extra_dict, list) else [extra_dict]
            self.extra_dict_ref = tuple(weakref.ref(d) for d in dicts)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None and self.id in d:
            del d[self.id]
        for ref in self.extra_dict_ref:
            e = ref()
            if e is not None and self.id in e:
                del e[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.remove()


class _ListHandle:
    """Removes one entry from a hook list (tensor and node hooks)."""

    def __init__(self, lst, item):
        self._list = lst
        self._item = item

    def remove(self):
        for i, x in enumerate(self._list):
            if x is self._item:
                del self._list[i]
                return

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.remove()
