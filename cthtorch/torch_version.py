"""torch.torch_version.TorchVersion: a str that compares as a version, so
`torch.__version__ >= "2.0"` and `torch.__version__ < (2, 1)` mean what they
say ("2.13" > "2.2" although the strings sort the other way)."""
from collections.abc import Iterable

__all__ = ["TorchVersion"]

# PEP 440 in brief: release, optional pre-release (a/b/rc), .devN, +local
_PATTERN = r"^v?(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?(?:\.dev(\d+))?(?:\+([a-z0-9.]+))?$"
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}


def _key(text):
    """A tuple that orders versions as packaging.version.Version does, or None
    if text is not a version (then comparisons fall back to str's)."""
    import re   # at first comparison: re (and enum) cost `import cthtorch` ~10 ms
    m = re.match(_PATTERN, text.strip(), re.IGNORECASE)
    if m is None:
        return None
    release, pre, pre_n, post, dev, local = m.groups()
    nums = [int(p) for p in release.split(".")]
    while len(nums) > 1 and nums[-1] == 0:   # 2.0 == 2.0.0
        nums.pop()
    # a final release sorts after its pre-releases; a .devN before everything of its release
    pre_key = (_PRE_RANK[pre.lower()], int(pre_n)) if pre else ((-1, 0) if dev is not None and not post else (3, 0))
    post_key = int(post) if post is not None else -1
    dev_key = int(dev) if dev is not None else float("inf")
    local_key = tuple((0, int(p)) if p.isdigit() else (-1, p) for p in re.split(r"[._-]", local.lower())) \
        if local else ()
    return tuple(nums), pre_key, post_key, dev_key, local_key


def _release_tuple_key(inp):
    return _key(".".join(str(item) for item in inp))


class TorchVersion(str):
    __slots__ = ()

    def _cmp(self, other, op):
        mine = _key(str(self))
        if isinstance(other, str):
            theirs = _key(other)
        elif isinstance(other, Iterable):
            theirs = _release_tuple_key(other)
        else:
            theirs = None
        if mine is None or theirs is None:
            return getattr(str, op)(self, other)
        return getattr(tuple, op)(mine, theirs)

    def __gt__(self, other):
        return self._cmp(other, "__gt__")

    def __lt__(self, other):
        return self._cmp(other, "__lt__")

    def __ge__(self, other):
        return self._cmp(other, "__ge__")

    def __le__(self, other):
        return self._cmp(other, "__le__")

    def __eq__(self, other):
        return self._cmp(other, "__eq__")

    # no __ne__: torch's TorchVersion keeps str's, so "2.0" != "2.0.0" holds there too
    __hash__ = str.__hash__
