"""vmap's random operations, batched by randomness mode (torch.func.vmap's semantics).

'different': every sample draws its own numbers: a random op on a batched value
runs once on the physical tensor (one draw for the whole batch), and a factory
(rand(3), randint(..), randperm, a *_like of an unbatched tensor) draws with the
batch sizes in front. 'same': one draw of the logical shape, shared by every
sample (an unbatched result broadcasts). 'error': any draw raises torch's message.

Factories take no BatchedTensor, so no __torch_function__ reaches them: while a
vmap in 'same'/'different' mode runs batched, the module attributes
(cthtorch.rand, ...) and the in-place Tensor methods (normal_, ...) are replaced
by wrappers that do the above on this thread and delegate everywhere else. A
draw that bypasses both (a reference to cthtorch.rand taken before the call, an
op without a rule here) is caught by comparing the generator state with the one
the last sanctioned draw left: the vmap then reruns func once per sample, which
is always correct.
"""
import functools
import threading

import cthtorch

from ._batched import _RULES, BatchedTensor, _arg, _is_b, _leaves, _only_self_batched, physical

__all__ = ["RANDOM_ERROR", "frame"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap")
_SAME_BATCHED_INPUT = ("Vmap does not currently support same randomness with a batched tensor input. Please file an "
                       "issue with functorch")
_UNBATCHED_INPLACE = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
                      "like same randomness. If this is necessary for your usage, please file an issue with "
                      "functorch.")

_state = threading.local()
_lock = threading.Lock()
_installed = [0]     # how many batched vmap calls (all threads) have the wrappers in place


class _Frame:
    __slots__ = ("level", "B", "mode", "last", "dirty")

    def __init__(self, level, B, mode):
        self.level, self.B, self.mode = level, B, mode
        self.last = cthtorch.get_rng_state() if mode != "error" else None
        self.dirty = False


def _frames():
    f = getattr(_state, "frames", None)
    if f is None:
        f = _state.frames = []
    return f


class frame:
    """The batched run of one vmap level: its mode is what random ops at that level obey. .unsanctioned
    (after exit) says a draw bypassed the batched random paths, so the loop has to redo func."""

    def __init__(self, level, B, mode):
        self.f = _Frame(level, B, mode)
        self.unsanctioned = False

    def __enter__(self):
        _frames().append(self.f)
        if self.f.mode != "error":
            _install()
        return self

    def __exit__(self, *exc):
        _frames().remove(self.f)
        if self.f.mode != "error":
            _uninstall()
            self.unsanctioned = self.f.dirty or not cthtorch.equal(cthtorch.get_rng_state(), self.f.last)
        return False


def _mode(level):
    for f in _frames():
        if f.level == level:
            return f.mode
    return None


class _Draw:
    """Brackets a sanctioned draw: raises in 'error' mode, marks frames whose generator moved since their
    last sanctioned draw (someone drew behind their back), and records the state the draw leaves.
    ceiling: the level whose rule draws (the ops it calls still batch the draw over the vmaps outside it,
    levels below); 0 where the draw already accounts for every level."""

    def __init__(self, ceiling=0):
        self.ceiling = ceiling

    def __enter__(self):
        frames = _frames()
        if any(f.mode == "error" for f in frames):
            raise RuntimeError(RANDOM_ERROR)
        now = cthtorch.get_rng_state()
        for f in frames:
            if not f.dirty and not cthtorch.equal(now, f.last):
                f.dirty = True
        self.depth = getattr(_state, "in_draw", 0)
        self.outer_ceiling = getattr(_state, "ceiling", None)
        _state.in_draw = self.depth + 1
        _state.ceiling = self.ceiling
        return self

    def __exit__(self, *exc):
        _state.in_draw = self.depth
        _state.ceiling = self.outer_ceiling
        if not self.depth:
            now = cthtorch.get_rng_state()
            for f in _frames():
                f.last = now
        return False


def _op(name):
    """the op as func would call it now: under a rule's draw, the wrapper batches the physical call over the
    'different' vmaps outside the rule's level (a value unbatched there still draws per outer sample)"""
    return getattr(cthtorch.Tensor if name in _INPLACE else cthtorch, name)


# ---------------------------------------------------------------- rules (a batched argument)

def _like_rule(func, level, args, kwargs):
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    x, orig = args[0], _op(func.__name__)
    with _Draw(level):
        if _mode(level) == "different":
            return BatchedTensor(orig(x._value, *args[1:], **kwargs), level)
        return orig(x._value[0], *args[1:], **kwargs)     # 'same': one draw, unbatched


def _inplace_rule(func, level, args, kwargs):
    if not _only_self_batched(args, kwargs, level):
        return NotImplemented
    x, orig = args[0], _op(func.__name__)
    with _Draw(level):
        if _mode(level) == "different":
            orig(x._value, *args[1:], **kwargs)
        else:
            one = cthtorch.empty_like(x._value[0])
            orig(one, *args[1:], **kwargs)
            x._value.copy_(one.expand_as(x._value))
    return x


def _value_rule(func, level, args, kwargs):
    """ops whose draws depend on a tensor's values (bernoulli(p), poisson(rates), normal(mean, std),
    multinomial(probs)): 'same' cannot share one draw between samples of different values (torch refuses)"""
    name = func.__name__
    mode = _mode(level)
    if mode == "same":
        with _Draw():
            raise RuntimeError(_SAME_BATCHED_INPUT)
    orig = _op(name)
    with _Draw(level):
        if name == "normal":
            mean, _ = _arg(args, kwargs, 0, "mean")
            std, _ = _arg(args, kwargs, 1, "std", 1.0)
            shape = cthtorch.broadcast_shapes(*[tuple(t.shape) for t in (mean, std) if hasattr(t, "shape")])
            ref = mean if hasattr(mean, "dtype") else std
            noise = BatchedTensor(orig(0.0, 1.0, (_batch_of(level),) + tuple(shape), dtype=ref.dtype), level)
            return mean + std * noise
        if not _only_self_batched(args, kwargs, level):
            return NotImplemented
        v = args[0]._value
        if name == "multinomial":
            flat = v.reshape(-1, v.shape[-1])
            out = orig(flat, *args[1:], **kwargs)
            return BatchedTensor(out.reshape(tuple(v.shape[:-1]) + (out.shape[-1],)), level)
        return BatchedTensor(orig(v, *args[1:], **kwargs), level)


def _batch_of(level):
    for f in _frames():
        if f.level == level:
            return f.B
    raise AssertionError("no vmap frame at level %d" % level)


def _dropout_rule(func, level, args, kwargs):
    x, _ = _arg(args, kwargs, 0, "input")
    p, _ = _arg(args, kwargs, 1, "p", 0.5)
    train, _ = _arg(args, kwargs, 2, "train" if "train" in kwargs else "training", True)
    if not _is_b(x, level) or any(_is_b(a, level) for a in _leaves((args[1:], kwargs))):
        return NotImplemented
    if not train or p == 0 or x.numel() == 0:
        return x
    orig = _op("dropout")
    with _Draw(level):
        if _mode(level) == "different":
            return BatchedTensor(orig(x._value, p, True), level)
        # 'same': one mask (already scaled by 1/(1-p)) for every sample
        mask = orig(cthtorch.ones(tuple(x.shape), dtype=x.dtype), p, True)
        return x * mask


# ---------------------------------------------------------------- factories (no batched argument)

def _below_ceiling():
    """the vmap frames a wrapper still has to batch for: all of them, or under a rule's draw those outside it"""
    ceiling = getattr(_state, "ceiling", None)
    frames = _frames()
    return frames if ceiling is None else [f for f in frames if f.level < ceiling]


def _different_levels():
    return [f for f in _below_ceiling() if f.mode == "different"]


def _nest(value, levels):
    """value with the batch sizes of levels (outermost first) in front, wrapped one level at a time"""
    for f in levels:
        value = BatchedTensor(value, f.level)
    return value


def _split_size(args, kwargs, pos):
    """(size tuple, positional args before it) of a factory whose size starts at args[pos]"""
    if "size" in kwargs:
        return tuple(kwargs["size"]), args
    rest = args[pos:]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list, cthtorch.Size)):
        return tuple(rest[0]), args[:pos]
    return tuple(rest), args[:pos]


def _factory(name, size_pos):
    """rand/randn (size at 0), randint (size after low/high), normal(mean, std, size)"""
    orig = _ORIG[name]

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if not _active() or any(isinstance(a, (cthtorch.Tensor, BatchedTensor)) for a in _leaves((args, kwargs))):
            return orig(*args, **kwargs)
        levels = _different_levels()     # before the draw, which accounts for them all
        with _Draw():
            if not levels:
                return orig(*args, **kwargs)
            pos = size_pos
            if name == "randint" and not ("size" in kwargs) and len(args) == 2:
                pos = 1     # randint(high, size)
            size, head = _split_size(args, kwargs, pos)
            batched = tuple(f.B for f in levels) + size
            kw = {k: v for k, v in kwargs.items() if k != "size"}
            if name in ("normal", "randint"):
                return _nest(orig(*head, batched, **kw), levels)
            return _nest(orig(batched, **kw), levels)
    return wrapper


def _stacked_factory(name):
    """randperm(n): one draw per sample, stacked (no size argument to put the batch in)"""
    orig = _ORIG[name]

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if not _active():
            return orig(*args, **kwargs)
        levels = _different_levels()     # before the draw, which accounts for them all
        with _Draw():
            if not levels:
                return orig(*args, **kwargs)
            n = 1
            for f in levels:
                n *= f.B
            out = cthtorch.stack([orig(*args, **kwargs) for _ in range(n)])
            return _nest(out.reshape(tuple(f.B for f in levels) + tuple(out.shape[1:])), levels)
    return wrapper


def _tensor_input(name):
    """rand_like, bernoulli, dropout, ... of an unbatched tensor: in 'different' mode every sample still draws
    its own, so the tensor goes in expanded over the batch and the batched rule draws"""
    orig = _ORIG[name]

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if not _active() or not args or not isinstance(args[0], cthtorch.Tensor) \
                or any(isinstance(a, BatchedTensor) for a in _leaves((args, kwargs))):
            return orig(*args, **kwargs)
        levels = _different_levels()
        if not levels:
            with _Draw():
                return orig(*args, **kwargs)
        x = args[0]
        for f in levels:
            x = BatchedTensor(physical(x, f.level, f.B), f.level)
        return orig(x, *args[1:], **kwargs)     # the op hands the BatchedTensor to its rule
    return wrapper


def _inplace_method(name):
    orig = _ORIG[name]

    @functools.wraps(orig)
    def wrapper(self, *args, **kwargs):
        if not _active() or isinstance(self, BatchedTensor):
            return orig(self, *args, **kwargs)
        different = _different_levels()
        with _Draw():
            if different:
                raise RuntimeError(_UNBATCHED_INPLACE)
            return orig(self, *args, **kwargs)
    return wrapper


def _active():
    """a batched vmap runs on this thread that the draw under way (if any) has not accounted for"""
    return bool(getattr(_state, "frames", None)) and bool(_below_ceiling())


# ---------------------------------------------------------------- the tables

_FACTORIES = {"rand": 0, "randn": 0, "randint": 2, "normal": 2}
_TENSOR_INPUT = ("rand_like", "randn_like", "randint_like", "bernoulli", "poisson", "multinomial", "dropout")
_INPLACE = ("normal_", "uniform_", "bernoulli_", "exponential_", "random_", "cauchy_", "log_normal_", "geometric_")

_ORIG = {}
for _n in tuple(_FACTORIES) + _TENSOR_INPUT + ("randperm",):
    _ORIG[_n] = getattr(cthtorch, _n)
for _n in _INPLACE:
    _ORIG[_n] = getattr(cthtorch.Tensor, _n)


def _normal_wrapper():
    """normal(mean, std, size) is a factory; normal(mean_tensor, std) depends on values"""
    by_size = _factory("normal", 2)
    orig = _ORIG["normal"]

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if any(isinstance(a, (cthtorch.Tensor, BatchedTensor)) for a in _leaves((args, kwargs))):
            if not _active() or any(isinstance(a, BatchedTensor) for a in _leaves((args, kwargs))):
                return orig(*args, **kwargs)
            levels = _different_levels()
            if not levels:
                with _Draw():
                    return orig(*args, **kwargs)
            mean, _ = _arg(args, kwargs, 0, "mean")
            std, _ = _arg(args, kwargs, 1, "std", 1.0)
            f = levels[-1]
            wrapped = [BatchedTensor(physical(t, f.level, f.B), f.level) if isinstance(t, cthtorch.Tensor) else t
                       for t in (mean, std)]
            return _value_rule(orig, f.level, tuple(wrapped), {})
        return by_size(*args, **kwargs)
    return wrapper


_WRAPPERS = {}
_OWN = {}     # (owner, name) -> whether owner's own __dict__ held name before the wrappers went in


def _build_wrappers():
    for n, pos in _FACTORIES.items():
        if n != "normal":
            _WRAPPERS[(cthtorch, n)] = _factory(n, pos)
    _WRAPPERS[(cthtorch, "normal")] = _normal_wrapper()
    _WRAPPERS[(cthtorch, "randperm")] = _stacked_factory("randperm")
    for n in _TENSOR_INPUT:
        _WRAPPERS[(cthtorch, n)] = _tensor_input(n)
    for n in _INPLACE:
        _WRAPPERS[(cthtorch.Tensor, n)] = _inplace_method(n)


def _install():
    with _lock:
        _installed[0] += 1
        if _installed[0] == 1:
            if not _WRAPPERS:
                _build_wrappers()
            _OWN.clear()
            for (owner, n), w in _WRAPPERS.items():
                _OWN[(owner, n)] = n in vars(owner)
                setattr(owner, n, w)


def _uninstall():
    with _lock:
        _installed[0] -= 1
        if _installed[0] == 0:
            for (owner, n) in _WRAPPERS:
                if _OWN.get((owner, n), True):
                    setattr(owner, n, _ORIG[n])
                else:
                    delattr(owner, n)     # inherited (Tensor's methods live on its C base): inherit again


for _n in ("rand_like", "randn_like", "randint_like"):
    _RULES[_n] = _like_rule
for _n in _INPLACE:
    _RULES[_n] = _inplace_rule
for _n in ("bernoulli", "poisson", "multinomial", "normal"):
    _RULES[_n] = _value_rule
_RULES["dropout"] = _dropout_rule
