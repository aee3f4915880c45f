"""state_dict / load_state_dict hooks, extra state, assign=True, set_submodule
and to_empty, run as one script under cthtorch and torch: same output."""
import subprocess
import sys
import textwrap

import oracle

oracle.require_torch()

SCRIPT = textwrap.dedent('''
    import sys, importlib
    torch = importlib.import_module(sys.argv[1])
    nn = torch.nn
    log = []
    class Ex(nn.Module):
        def __init__(self):
            super().__init__(); self.lin = nn.Linear(2, 2); self.count = 3
        def get_extra_state(self): return {"count": self.count}
        def set_extra_state(self, st): self.count = st["count"]
    m = nn.Sequential(Ex(), nn.Linear(2, 1))
    m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix, keep)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", prefix, len(sd))))
    sd = m.state_dict()
    print(list(sd.keys()), log)
    m2 = nn.Sequential(Ex(), nn.Linear(2, 1)); m2[0].count = 0
    m2.register_load_state_dict_pre_hook(lambda mod, sd, prefix, meta, strict, mk, uk, em: log.append(("lpre", prefix)))
    m2.register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.clear())
    sd2 = dict(sd); sd2["bogus"] = torch.ones(1)
    print(m2.load_state_dict(sd2), m2[0].count, log[-1])
    del sd2["0._extra_state"]; del sd2["bogus"]
    try:
        m2.load_state_dict(sd2)
    except RuntimeError as e:
        print("err", str(e))
    m3 = nn.Linear(2, 2)
    w = torch.ones(2, 2)
    m3.load_state_dict({"weight": w, "bias": torch.zeros(2)}, assign=True)
    print(type(m3.weight).__name__, m3.weight.requires_grad, m3.weight.data_ptr() == w.data_ptr())
    m.set_submodule("1", nn.Identity())
    print(m)
    print(m3.to_empty(device="cpu").weight.shape)
''')


def _run(lib):
    return subprocess.run([sys.executable, "-c", SCRIPT, lib], capture_output=True, text=True, timeout=120)


def test_state_dict_hooks_match_torch():
    ours, theirs = _run("cthtorch"), _run("torch")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


def test_load_state_dict_result_prints_as_torchs():
    """the warmstarting recipe prints load_state_dict(strict=False)'s result"""
    import cthtorch
    import torch
    for lib in (cthtorch, torch):
        src = lib.nn.Sequential(lib.nn.Linear(2, 2))
        dst = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        partial, full = dst.load_state_dict(src.state_dict(), strict=False), src.load_state_dict(src.state_dict())
        assert repr(partial) == str(partial) == \
            "_IncompatibleKeys(missing_keys=['1.weight', '1.bias'], unexpected_keys=[])"
        assert repr(full) == "<All keys matched successfully>" and partial.missing_keys == ["1.weight", "1.bias"]
        assert type(partial).__name__ == "_IncompatibleKeys" and isinstance(partial, tuple)
