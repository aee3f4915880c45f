"""The opt-in `import torch` alias (cthtorch/_torch_alias, enabled by
PYTHONPATH=$(python -m cthtorch.alias_path)): torch.* names resolve to the
cthtorch modules themselves, `python -m torch.distributed.run` is cthtorch's
launcher, and pytorch/examples' distributed/ddp/example.py runs unchanged
under it with 2 ranks. The alias lives only in the subprocesses' environment:
this process imports real torch as the oracle."""
import os
import socket
import subprocess
import sys

import pytest

import cthtorch
import cthtorch.distributed as dist
from cthtorch.alias_path import ALIAS_DIR, pythonpath

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "programs")

needs_mpi = pytest.mark.skipif(not dist.is_available(), reason="mpi4py/MPI is not installed")


def _alias_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=pythonpath(), PYTHONWARNINGS="ignore", **extra)
    return env


def _run(args, tmp_path, timeout=120, **extra):
    # cwd outside the checkout: cthtorch must come from the alias path, not the cwd
    return subprocess.run([sys.executable] + args, env=_alias_env(**extra), capture_output=True, text=True,
                          timeout=timeout, cwd=str(tmp_path))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_alias_path_prints_the_alias_directory():
    r = subprocess.run([sys.executable, "-m", "cthtorch.alias_path"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().split(os.pathsep)[0] == ALIAS_DIR
    assert os.path.isfile(os.path.join(ALIAS_DIR, "torch", "__init__.py"))


def test_names_resolve_to_the_cthtorch_modules(tmp_path):
    code = """
import sys, importlib.util
import torch, cthtorch
assert torch is cthtorch
import torch.distributed as dist, torch.nn.functional as F, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
import cthtorch.nn.parallel, cthtorch.utils.data.distributed
assert dist is cthtorch.distributed and F is cthtorch.nn.functional and mp is cthtorch.multiprocessing
assert DDP is cthtorch.nn.parallel.DistributedDataParallel
assert DistributedSampler is cthtorch.utils.data.distributed.DistributedSampler
import torch.distributed.run
assert torch.nn.Linear is cthtorch.nn.Linear and torch.distributed.run is sys.modules['cthtorch.distributed.run']
# one module per name: no torch.* copy of a cthtorch module
for name, mod in list(sys.modules.items()):
    if name.startswith('torch.'):
        assert mod is sys.modules['cthtorch' + name[5:]], name
spec = importlib.util.find_spec('torch.distributed.run')
assert spec.origin == sys.modules['cthtorch.distributed.run'].__file__
try:
    import torch.no_such_module
except ModuleNotFoundError as e:
    assert str(e) == "No module named 'torch.no_such_module'", str(e)
else:
    raise AssertionError('imported a module that does not exist')
print('names ok')
"""
    r = _run(["-c", code], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "names ok"


def test_torchvision_names_resolve_to_cthtorch_vision(tmp_path):
    # programs import torchvision beside torch; a real torchvision would load a real torch under it
    code = """
import sys
import torchvision
import torchvision.transforms as T
from torchvision import datasets, models, ops
from torchvision.models import resnet18
import torch, cthtorch, cthtorch.vision
assert torch is cthtorch and torchvision is cthtorch.vision
assert T is cthtorch.vision.transforms and datasets is cthtorch.vision.datasets and ops is cthtorch.vision.ops
assert resnet18 is cthtorch.vision.models.resnet18
import torchvision.transforms.v2 as v2
assert v2 is sys.modules['cthtorch.vision.transforms.v2']
for name, mod in list(sys.modules.items()):
    if name.startswith('torchvision.'):
        assert mod is sys.modules['cthtorch.vision' + name[11:]], name
try:
    import torchvision.no_such_module
except ModuleNotFoundError as e:
    assert str(e) == "No module named 'torchvision.no_such_module'", str(e)
else:
    raise AssertionError('imported a module that does not exist')
x = T.Normalize((0.5,), (0.5,))(torch.ones(1, 2, 2))
print('vision ok', x.sum().item())
"""
    r = _run(["-c", code], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "vision ok 4.0"


def test_alias_is_off_by_default(tmp_path):
    # without the alias path, `import torch` finds whatever torch is installed (or nothing), never cthtorch
    code = ("import importlib.util, cthtorch, cthtorch.alias_path\n"
            "spec = importlib.util.find_spec('torch')\n"
            "print('absent' if spec is None else spec.origin)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    origin = r.stdout.strip()
    assert origin == "absent" or not os.path.realpath(origin).startswith(os.path.realpath(ALIAS_DIR)), origin
    # nor here, where torch is the oracle
    assert not any(os.path.realpath(p or ".") == os.path.realpath(ALIAS_DIR) for p in sys.path)
    if "torch" in sys.modules:
        assert sys.modules["torch"] is not cthtorch


@needs_mpi
def test_pytorch_examples_ddp_example_unchanged_under_torch_distributed_run(tmp_path):
    """distributed/ddp/example.py as pytorch/examples has it (it asks for 2
    accelerators and, without them, says so and exits 0): each rank prints
    what the same program prints with real torch on this machine."""
    script = os.path.join(PROGRAMS, "ddp_example_upstream.py")
    r = _run(["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", script], tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    expected = "Unable to locate sufficient 2 gpus to run this example. Exiting."
    assert lines == [expected, expected], r.stdout
    # the same script with real torch, one process (no launcher needed: it stops before init_process_group)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run([sys.executable, "-c", "import importlib.util; print(importlib.util.find_spec('torch') "
                            "is not None)"], env=env, capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    if probe.stdout.strip() != "True":
        return
    ref = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=180, cwd=str(tmp_path),
                         env=env)
    assert ref.returncode == 0, ref.stderr[-3000:]
    if "Initializing process group" in ref.stdout:
        return   # torch found 2 accelerators here and trained on them; cthtorch has none
    assert lines == ref.stdout.splitlines() * 2


def _sampler_orders():
    # cthtorch's order outside the alias (test_ddp checks it against torch's)
    from cthtorch.utils.data.distributed import DistributedSampler
    return [list(DistributedSampler(range(10), num_replicas=2, rank=r)) for r in range(2)]


def _check_ddp_names_job(r):
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = r.stdout
    assert "alias: every torch.* module is cthtorch's" in out, out
    orders = _sampler_orders()
    for rank in (0, 1):
        assert "rank = %d, world_size = 2, backend = gloo" % rank in out, out
        assert "rank %d: replicas equal after one step; sampler %s" % (rank, orders[rank]) in out, out


@needs_mpi
def test_torch_named_ddp_program_under_torch_distributed_run(tmp_path):
    script = os.path.join(PROGRAMS, "ddp_torch_names.py")
    r = _run(["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", script], tmp_path, ALIAS="1")
    _check_ddp_names_job(r)
    # torchrun's environment, as the example reads it
    for rank in (0, 1):
        assert "'RANK': '%d', 'LOCAL_RANK': '%d', 'WORLD_SIZE': '2', 'LOCAL_WORLD_SIZE': '2'" % (rank, rank) in r.stdout
    assert "'MASTER_ADDR': '127.0.0.1'" in r.stdout


@needs_mpi
def test_torch_named_ddp_program_with_torch_multiprocessing_spawn(tmp_path):
    script = os.path.join(PROGRAMS, "ddp_torch_names.py")
    _check_ddp_names_job(_run([script, "--spawn", str(_free_port())], tmp_path, ALIAS="1"))


def test_functorch_resolves_to_cthtorch_transforms(tmp_path):
    # 2022-era programs `from functorch import make_functional, vmap, grad`; the real functorch package
    # imports a real torch's internals, so the alias directory has its own
    code = """
import warnings
import torch, cthtorch, cthtorch.alias_path, cthtorch._functorch.make_functional, functorch
from functorch import make_functional, vmap, grad
assert functorch.__file__.startswith(cthtorch.alias_path.ALIAS_DIR), functorch.__file__
assert functorch.FunctionalModule is cthtorch._functorch.make_functional.FunctionalModule
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    f, params = make_functional(torch.nn.Linear(3, 2))
assert w[0].category is FutureWarning and '`functorch.make_functional` is deprecated' in str(w[0].message)
g = vmap(grad(lambda p, x: f(p, x).sum()), in_dims=(None, 0))(params, torch.ones(4, 3))
print('functorch ok', [tuple(t.shape) for t in g])
"""
    r = _run(["-c", code], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "functorch ok [(4, 2, 3), (4, 2)]"
