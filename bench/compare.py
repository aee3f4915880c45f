"""`make bench`: ../shared/bench/peer_bench.py for cthtorch, torch and numpy,
run back to back, printed side by side with cthtorch's ratio to torch.

OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are unset for the benchmark runs only
(see peer_bench.py's docstring)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "..", "..", "shared", "bench", "peer_bench.py")
HIGHER_IS_BETTER = ("GBps", "GFLOPs")


def run(lib, only):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["PYTHONPATH"] = os.path.join(HERE, "..") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, PEER, "--lib", lib, "--json"] + (["--only", only] if only else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        print("%s failed:\n%s" % (lib, out.stderr[-2000:]))
        return {}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    if not os.path.exists(PEER):
        sys.exit("peer_bench.py not found at %s" % PEER)
    res = {lib: run(lib, only) for lib in ("cthtorch", "torch", "numpy")}
    keys = [k for k in res["torch"] or res["cthtorch"]]
    print("%-26s %12s %12s %12s %10s" % ("metric", "cthtorch", "torch", "numpy", "ct/torch"))
    for k in keys:
        c, t, n = res["cthtorch"].get(k), res["torch"].get(k), res["numpy"].get(k)
        fmt = lambda v: "%12.3f" % v if v is not None else "%12s" % "-"
        ratio = ""
        if c is not None and t:
            r = c / t
            ratio = "%9.2fx" % r
            better = (r >= 1) if any(k.endswith(s) for s in HIGHER_IS_BETTER) else (r <= 1)
            ratio += " " if better else "!"
        print("%-26s %s %s %s %10s" % (k, fmt(c), fmt(t), fmt(n), ratio))
    print("\nratio = cthtorch / torch; times (_us, _ms, _s): lower is better; rates (GBps, GFLOPs): higher; "
          "'!' marks where cthtorch is behind.")


if __name__ == "__main__":
    main()
