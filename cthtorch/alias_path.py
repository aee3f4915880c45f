"""`python -m cthtorch.alias_path` prints the directory that makes `import
torch` mean cthtorch (see cthtorch/_torch_alias/torch/__init__.py), for
PYTHONPATH; processes started with that environment (the ranks of
`python -m torch.distributed.run`, spawn children) inherit the alias.

    PYTHONPATH=$(python -m cthtorch.alias_path) python -m torch.distributed.run --nproc_per_node=2 example.py

The directory comes first, then the one holding cthtorch, unless cthtorch is
installed in site-packages: the ranks run from other directories must find
cthtorch too."""
import os
import site
import sys

__all__ = ["ALIAS_DIR", "pythonpath"]

ALIAS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_alias")


def pythonpath():
    """The PYTHONPATH entries (joined with os.pathsep) that enable the alias."""
    parts = [ALIAS_DIR]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = {os.path.realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()]}
    if os.path.realpath(root) not in installed:
        parts.append(root)
    return os.pathsep.join(parts)


if __name__ == "__main__":
    sys.stdout.write(pythonpath() + "\n")
