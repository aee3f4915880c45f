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
    # one thread each: the suite runs two workers on two cores, where OpenMP's spin-waiting made torch's
    # side of a program take minutes; the printed numbers do not depend on the thread count
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
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
                                  "char_rnn_classify_small.py", "cifar_shufflenetv2_small.py", "pytorch_gan_small.py",
                                  "textcnn_small.py", "seq2seq_attention_small.py", "whisper_small.py",
                                  "sentiment_rnn_small.py", "d2l_transformer_small.py",
                                  "cyclegan_networks_small.py", "gat_small.py", "dino_vit_small.py",
                                  "wrn_functional_small.py", "stargan_small.py", "s4d_small.py",
                                  "vqvae2_small.py", "pytorch_vae_zoo_small.py", "pytorch_template_small.py",
                                  "training_recipes_small.py", "normalizing_flows_small.py", "cleanrl_small.py",
                                  "fno_small.py", "pinn_small.py", "swin_small.py", "yolov5_small.py",
                                  "rwkv_small.py", "llama_complex_small.py", "lstnet_small.py", "nbeats_small.py",
                                  "detr_small.py", "stylegan2_small.py",
                                  "nerf_small.py", "m5_audio_small.py",
                                  "fairseq_modules_small.py", "allennlp_crf_small.py",
                                  "custom_function_conv_bn_small.py"])
def test_program_prints_torchs_numbers(prog):
    require_torch()
    ours, theirs = numbers(run(prog, "cthtorch")), numbers(run(prog, "torch"))
    assert len(ours) == len(theirs) and len(ours) > 3
    # the word language model's 20 losses per model are the acceptance: equal to 1e-5, not relatively
    tol = {"rel": 0, "abs": 1e-5} if prog == "word_lm_small.py" else {"rel": 1e-4, "abs": 1e-5}
    assert ours == pytest.approx(theirs, **tol)


def test_swap_tensors_recipe_prints_torchs_output():
    """swap_tensors exchanges data, autograd state, __dict__ and class, refuses weakly referenced tensors,
    and module conversion under set_swap_module_params_on_conversion keeps the Parameter objects"""
    require_torch()
    assert run("swap_tensors_recipe.py", "cthtorch") == run("swap_tensors_recipe.py", "torch")


def test_backprop_ninja_hand_gradients_match_autograd():
    """makemore part 4: every hand-written gradient through the chunked MLP + batch-norm loss agrees
    with autograd's (cmp says approximate: True, as under torch), and the losses are torch's"""
    require_torch()
    ours, theirs = run("backprop_ninja_small.py", "cthtorch"), run("backprop_ninja_small.py", "torch")
    text = " ".join(ours)
    assert text.count("approximate: True") == 27 and "approximate: False" not in text
    assert " ".join(theirs).count("approximate: True") == 27
    loss = [float(ours[i + 1]) for i, t in enumerate(ours) if t in ("loss", "loss_fast")]
    loss_t = [float(theirs[i + 1]) for i, t in enumerate(theirs) if t in ("loss", "loss_fast")]
    assert len(loss) == 2 and loss == pytest.approx(loss_t, rel=1e-6)


def test_clip_prints_torchs_numbers_and_its_fp16_copy_agrees():
    """CLIP's two vision towers and text tower (float), three Adam steps, and build_model's fp16 copy whose
    features stay close to the float model's (fp16 attention rounds once, as torch's)"""
    require_torch()
    ours, theirs = run("clip_small.py", "cthtorch"), run("clip_small.py", "torch")
    assert " ".join(ours).count("close True") == 2 and " ".join(theirs).count("close True") == 2
    a, b = numbers(ours), numbers(theirs)
    assert len(a) == len(b) and len(a) > 40
    assert a == pytest.approx(b, rel=1e-4, abs=1e-5)
