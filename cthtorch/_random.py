"""Seeding the default generator (torch.manual_seed and friends)."""
from cthtorch import _C


def manual_seed(seed):
    """Seeds the default generator; the same seed gives the same stream everywhere."""
    return _C.default_generator.manual_seed(int(seed))


def seed():
    return _C.default_generator.seed()


def initial_seed():
    return _C.default_generator.initial_seed()


def get_rng_state():
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    _C.default_generator.set_state(new_state)
