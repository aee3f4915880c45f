"""The opt-in `import torch` alias: on sys.path (PYTHONPATH=$(python -m
cthtorch.alias_path)), `import torch` gives the cthtorch package itself, and
every `torch.X` (torch.nn.functional, torch.distributed.run, ...) the module
cthtorch.X, the same object under both names: one process group, one
autograd engine, one set of classes.

`import torchvision` beside it gives cthtorch.vision the same way (the
torchvision package in this directory), since a real torchvision would load
a real torch under it.

Nothing imports this directory by default, so a real PyTorch installed beside
cthtorch (the tests' oracle) is never shadowed.

How: this package replaces itself in sys.modules with cthtorch (the import
system returns whatever sys.modules holds once a module has run), and a
finder placed first on sys.meta_path answers every later `torch.X` with a
loader that does the same with cthtorch.X. Without that finder, cthtorch's
__path__ would load each submodule a second time under the torch name. The
loader also hands out cthtorch.X's code, which is what `python -m torch.X`
(runpy) runs.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

# alias name -> the cthtorch module it stands for; the longest match wins
_ROOTS = {"torch": "cthtorch", "torchvision": "cthtorch.vision"}


def _target(fullname):
    root = fullname.split(".", 1)[0]
    if root not in _ROOTS or fullname == root:
        return None   # the roots themselves are this directory's packages
    return _ROOTS[root] + fullname[len(root):]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real_spec):
        self.real_spec = real_spec

    def create_module(self, spec):
        return None   # a placeholder module, replaced by exec_module

    def exec_module(self, module):
        sys.modules[module.__name__] = importlib.import_module(self.real_spec.name)

    # what runpy asks of a loader for `python -m torch.X`
    def get_code(self, fullname):
        return self.real_spec.loader.get_code(self.real_spec.name)

    def is_package(self, fullname):
        return self.real_spec.submodule_search_locations is not None

    def get_source(self, fullname):
        return self.real_spec.loader.get_source(self.real_spec.name)

    def get_filename(self, fullname):
        return self.real_spec.origin


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        target = _target(fullname)
        if target is None:
            return None
        real = importlib.util.find_spec(target)
        if real is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), origin=real.origin,
                                              is_package=real.submodule_search_locations is not None)
        if real.submodule_search_locations is not None:
            spec.submodule_search_locations = list(real.submodule_search_locations)
        spec.has_location = real.has_location
        return spec


def _install():
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    if "cthtorch" not in sys.modules:
        # the cthtorch this alias ships with, when it is not importable from sys.path already
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        if importlib.util.find_spec("cthtorch") is None:
            sys.path.append(root)
    import cthtorch
    sys.modules["torch"] = cthtorch


_install()
