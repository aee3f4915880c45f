"""Seeded example programs print the same numbers under cthtorch as under
torch: same initial weights (torch's RNG streams), same shuffling and dropout
masks, same maths to float rounding. Each program takes the library's name."""
import os
import subprocess
import sys

import pytest

from oracle import require_torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(prog, lib):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, os.path.join(HERE, "programs", prog), lib], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


def numbers(tokens):
    vals = []
    for t in tokens:
        try:
            vals.append(float(t.strip("[]:,")))
        except ValueError:
            pass
    return vals


@pytest.mark.parametrize("prog", ["vae_small.py", "dcgan_small.py", "word_lm_small.py", "nanogpt_small.py",
                                  "char_rnn_classify_small.py", "cifar_shufflenetv2_small.py", "pytorch_gan_small.py"])
def test_program_prints_torchs_numbers(prog):
    require_torch()
    ours, theirs = numbers(run(prog, "cthtorch")), numbers(run(prog, "torch"))
    assert len(ours) == len(theirs) and len(ours) > 3
    assert ours == pytest.approx(theirs, rel=1e-4, abs=1e-5)


def test_swap_tensors_recipe_prints_torchs_output():
    """swap_tensors exchanges data, autograd state, __dict__ and class, refuses weakly referenced tensors,
    and module conversion under set_swap_module_params_on_conversion keeps the Parameter objects"""
    require_torch()
    assert run("swap_tensors_recipe.py", "cthtorch") == run("swap_tensors_recipe.py", "torch")
