"""nn.DataParallel / nn.parallel.data_parallel as PyTorch runs them: with no
GPU the module runs itself; with one GPU it runs on that GPU."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))


@pytest.mark.skipif(ct.cuda.is_available(), reason="the no-GPU behaviour")
def test_data_parallel_without_gpus_matches_torch():
    x = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    outs = []
    for lib in (ct, torch):
        dp = lib.nn.DataParallel(_model(lib))
        assert dp.device_ids == [] and not hasattr(dp, "dim") and not hasattr(dp, "output_device")
        assert list(dp.state_dict()) == ["module.0.weight", "module.0.bias", "module.2.weight", "module.2.bias"]
        y = dp(lib.tensor(x))
        y.sum().backward()
        outs.append((y.detach().numpy(), dp.module[0].weight.grad.numpy(), repr(dp)))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)
    assert outs[0][2] == outs[1][2]
    assert ct.nn.parallel.DataParallel is ct.nn.DataParallel
    assert ct.nn.DataParallel.__module__.endswith("nn.parallel.data_parallel")
    oracle.raises_like(lambda: ct.nn.parallel.data_parallel(_model(ct), ct.ones(1, 4)),
                       lambda: torch.nn.parallel.data_parallel(_model(torch), torch.ones(1, 4)))


@pytest.mark.skipif(not ct.cuda.is_available(), reason="needs a GPU")
def test_data_parallel_one_gpu_runs_there():
    dp = ct.nn.DataParallel(_model(ct))
    assert dp.device_ids == list(range(ct.cuda.device_count())) and dp.output_device == 0
    if len(dp.device_ids) == 1:
        y = dp(ct.ones(5, 4))
        assert y.device.type == "cuda"
        ref = _model(ct)(ct.ones(5, 4))
        np.testing.assert_allclose(y.cpu().detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(ct.cuda.is_available(), reason="the no-GPU behaviour")
def test_parallel_helpers_import_and_refuse_cpu_like_torch():
    """wide-residual-networks' utils imports Broadcast, scatter, parallel_apply and gather; on the CPU
    they refuse the same way torch's do"""
    from cthtorch.nn.parallel import gather, parallel_apply, scatter
    from cthtorch.nn.parallel._functions import Broadcast, Gather, Scatter  # noqa: F401
    from cthtorch.nn.parallel.scatter_gather import scatter_kwargs  # noqa: F401
    xc, xt = ct.ones(2, 3), torch.ones(2, 3)
    oracle.raises_like(lambda: Broadcast.apply([0], xc), lambda: torch.nn.parallel._functions.Broadcast.apply([0], xt))
    oracle.raises_like(lambda: gather([xc, xc], -1), lambda: torch.nn.parallel.gather([xt, xt], -1))
    oracle.raises_like(lambda: scatter((xc, 1), ["cpu"]), lambda: torch.nn.parallel.scatter((xt, 1), ["cpu"]))
    oracle.raises_like(lambda: parallel_apply([_model(ct)], [xc]),
                       lambda: torch.nn.parallel.parallel_apply([_model(torch)], [xt]))
    assert scatter((), [0]) == torch.nn.parallel.scatter((), [0]) == [()]
    assert scatter(5, [0, 1]) == torch.nn.parallel.scatter(5, [0, 1]) == [5, 5]
