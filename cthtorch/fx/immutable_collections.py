"""The containers a Node's args/kwargs are stored in: a list and a dict that
refuse mutation, so a graph's use lists can't silently go stale."""

__all__ = ["immutable_list", "immutable_dict"]

_MUTATION_HINT = ("If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
                  "instead create a new copy of it and assign the copy to the node:\n"
                  "    new_args = ... # copy and mutate args\n"
                  "    node.args = new_args\n")


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError("'%s' object does not support mutation. %s" % (type(self).__name__, _MUTATION_HINT))


class immutable_list(list):
    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    __delitem__ = __setitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (dict(self),))
