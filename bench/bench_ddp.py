"""A DistributedDataParallel training step on 2 local ranks: a 5.0M-parameter
MLP (batch 64, SGD), cthtorch (MPI engine) beside torch's gloo DDP. Each
library runs as its own 2-rank job started by its own launcher (default
bucket sizes in both); rank 0 reports the median step time of 20 steps after
3 warm-up steps, and the step with a single bucket (all-reduce only after
backward) for contrast. It also shows the CPU time (all threads, both ranks)
per step: on this shared 2-core machine the step times swing with the load,
the CPU time much less.

The overlap of communication with backward (issue 18: the all-reduce
finishing within 10% of the end of backward), two measures, rank 0, medians:
- both libraries alike: a post-accumulate-grad hook on every parameter
  (registered after DDP's own) marks the last gradient; backward is
  loss.backward()'s call to that mark, and the figure is how long after it
  loss.backward() returned (by then both have the averages in .grad). In
  cthtorch DDP's own hook has run by then, so its copy of the last gradient
  into its bucket falls before the mark; torch runs tensor hooks before its
  reducer's, so there the copy falls after it.
- the reducer's own timestamps (cthtorch): from DDP's hook for the last
  gradient (on entry, before the copy) to the end of the last bucket's
  all-reduce (the averages in .grad), against tb -> that hook. The line
  below it splits that time: the copy into the bucket (of the half the peer
  sums: the last bucket is reduced split on 2 ranks), the hand-over (the
  rest of backward; the last bucket's all-reduce runs on the thread of
  backward, in the engine's end-of-backward callback), the wait for the
  peer (the agreement barrier of the same-node all-reduce: the other rank's
  later end of backward), the sum itself (this rank's half, written to both
  ranks' buckets, and the barrier after it), and loss.backward()'s return.
Rank 0's own view includes the time it waits for a slower rank to finish its
backward; a line measures from the job's end of backward (the later rank's
last gradient) to the last all-reduce's end on any rank.
- the same in CPU time of the thread of backward (cthtorch, rank 0): what
  the last all-reduce costs that thread after DDP's last gradient hook (the
  copy into the bucket and the sum; waits for the peer sleep, so they do not
  count), against what backward cost it before that hook. On a loaded
  machine the wall-clock measures above mostly show how long each rank waits
  for a core (backward takes several times its quiet time), this one much
  less.

Run: PYTHONPATH=. python bench/bench_ddp.py [--repeats N] [--whole]
(--whole: also the step with DDP's last bucket reduced whole, not split.)"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARMUP, STEPS, BATCH = 3, 20, 64
SIZES = (1024, 2048, 1024, 768, 10)   # 4,992,266 parameters
# the reducer's time from the last gradient to the end of its all-reduce, in parts (see the docstring)
PARTS = ("copy into bucket", "hand-over", "peer wait", "sum", "backward returns")


def worker(lib_name, bucket_cap_mb, whole=False):
    import importlib
    torch = importlib.import_module(lib_name)
    dist = importlib.import_module(lib_name + ".distributed")
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    layers = []
    for a, b in zip(SIZES, SIZES[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    nparams = sum(p.numel() for p in net.parameters())
    model = torch.nn.parallel.DistributedDataParallel(net, bucket_cap_mb=bucket_cap_mb)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(BATCH, SIZES[0], generator=g)
    y = torch.randint(0, SIZES[-1], (BATCH,), generator=g)
    timing = {} if lib_name == "cthtorch" else None
    if timing is not None:
        model.reducer.timing = timing
        model.reducer.split_last = not whole
    # the last gradient, seen the same way in both libraries: a post-accumulate-grad hook per parameter
    last_grad = [0.0]
    for p in net.parameters():
        p.register_post_accumulate_grad_hook(lambda p: last_grad.__setitem__(0, time.perf_counter()))
    steps, gaps, backwards, marks, returns, both_backwards, both_returns = [], [], [], [], [], [], []
    cpu_backwards, cpu_afters = [], []
    parts = {k: [] for k in PARTS}
    for i in range(WARMUP + STEPS):
        if i == WARMUP:
            cpu0 = _cpu_seconds()
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        tb = time.perf_counter()
        tb_cpu = time.thread_time()
        loss.backward()
        tr = time.perf_counter()
        opt.step()
        t1 = time.perf_counter()
        if i >= WARMUP:
            steps.append(t1 - t0)
            both_backwards.append(last_grad[0] - tb)
            both_returns.append(tr - last_grad[0])
            if timing is not None and any(k.startswith("done_") for k in timing):
                done = max(v for k, v in timing.items() if k.startswith("done_"))
                backwards.append(timing["last_hook"] - tb)
                gaps.append(done - timing["last_hook"])
                returns.append(tr - timing["last_hook"])
                marks.append((tb, timing["last_hook"], done))
                last = len(model.reducer.buckets) - 1
                cpu_backwards.append(timing["last_hook_cpu"] - tb_cpu)
                cpu_afters.append(timing["done_cpu_%d" % last] - timing["last_hook_cpu"])
                seq = [timing["last_hook"], timing["copied"], timing["start_%d" % last],
                       timing.get("agreed_%d" % last, timing["start_%d" % last]), timing["done_%d" % last], tr]
                for k, a, b in zip(PARTS, seq, seq[1:]):
                    parts[k].append(b - a)
    cpu_all = [None] * dist.get_world_size()
    dist.all_gather_object(cpu_all, (_cpu_seconds() - cpu0) / STEPS)
    if timing is not None:   # perf_counter is the system's monotonic clock: comparable across the ranks
        every = [None] * dist.get_world_size()
        dist.all_gather_object(every, marks)
    if rank == 0:
        out = {"step_ms": 1e3 * statistics.median(steps), "params": nparams, "cpu_ms": 1e3 * sum(cpu_all),
               "hook_backward_ms": 1e3 * statistics.median(both_backwards),
               "hook_returned_ms": 1e3 * statistics.median(both_returns),
               "buckets": len(model.reducer.buckets) if timing is not None else None}
        if timing is not None:
            out["backward_ms"] = 1e3 * statistics.median(backwards)
            out["allreduce_after_backward_ms"] = 1e3 * statistics.median(gaps)
            out["returned_after_backward_ms"] = 1e3 * statistics.median(returns)
            out["parts_ms"] = {k: 1e3 * statistics.median(v) for k, v in parts.items()}
            out["cpu_backward_ms"] = 1e3 * statistics.median(cpu_backwards)
            out["cpu_after_backward_ms"] = 1e3 * statistics.median(cpu_afters)
            # the same against the job's end of backward (the last rank's last
            # gradient), which no communication can precede: rank skew excluded
            job_gaps, job_backwards = [], []
            for step in zip(*every):
                last = max(step, key=lambda m: m[1])
                job_backwards.append(last[1] - last[0])
                job_gaps.append(max(m[2] for m in step) - last[1])
            out["job_backward_ms"] = 1e3 * statistics.median(job_backwards)
            out["job_allreduce_after_backward_ms"] = 1e3 * statistics.median(job_gaps)
        print("RESULT " + json.dumps(out), flush=True)
    dist.destroy_process_group()


def _cpu_seconds():
    """CPU time of this process, all threads (user + system)."""
    import resource
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def run_job(lib_name, bucket_cap_mb=None, whole=False):
    launcher = "torch.distributed.run" if lib_name == "torch" else "cthtorch.distributed.run"
    cmd = [sys.executable, "-m", launcher, "--standalone", "--nproc_per_node=2", os.path.abspath(__file__),
           "--worker", lib_name, str(bucket_cap_mb or "default")] + (["whole"] if whole else [])
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError("%s job failed:\n%s\n%s" % (lib_name, r.stdout[-2000:], r.stderr[-4000:]))


def main(repeats):
    for rep in range(repeats):
        ours = run_job("cthtorch")
        theirs = run_job("torch")
        one_bucket = run_job("cthtorch", bucket_cap_mb=1000)
        whole = run_job("cthtorch", whole=True) if "--whole" in sys.argv else None
        if rep == 0:
            print("DDP step, %d-parameter MLP, batch %d per rank, 2 ranks (median of %d steps):"
                  % (ours["params"], BATCH, STEPS))
        if repeats > 1:
            print("run %d of %d" % (rep + 1, repeats))
        print("  cthtorch (MPI, %d buckets)    %8.2f ms" % (ours["buckets"], ours["step_ms"]))
        print("  torch (gloo)                %8.2f ms   ratio cthtorch/torch %.2f"
              % (theirs["step_ms"], ours["step_ms"] / theirs["step_ms"]))
        print("  cthtorch, one bucket        %8.2f ms   (no overlap: all-reduce starts after backward)"
              % one_bucket["step_ms"])
        print("  CPU time per step, both ranks: cthtorch %.1f ms, torch %.1f ms, cthtorch one bucket %.1f ms"
              % (ours["cpu_ms"], theirs["cpu_ms"], one_bucket["cpu_ms"]))
        print("overlap, both libraries alike (rank 0; last gradient = the last post-accumulate-grad hook, backward = "
              "loss.backward() called to that hook): loss.backward() returned after the last gradient\n"
              "  cthtorch %.2f ms (%.1f%% of its backward %.2f ms); torch gloo %.2f ms (%.1f%% of %.2f ms)"
              % (ours["hook_returned_ms"], 100 * ours["hook_returned_ms"] / ours["hook_backward_ms"],
                 ours["hook_backward_ms"], theirs["hook_returned_ms"],
                 100 * theirs["hook_returned_ms"] / theirs["hook_backward_ms"], theirs["hook_backward_ms"]))
        print("overlap, the reducer's timestamps (cthtorch, rank 0): backward %.2f ms; the last all-reduce finished "
              "%.2f ms after DDP's last gradient hook (%.1f%% of backward); one bucket: %.2f ms (%.1f%%)"
              % (ours["backward_ms"], ours["allreduce_after_backward_ms"],
                 100 * ours["allreduce_after_backward_ms"] / ours["backward_ms"],
                 one_bucket["allreduce_after_backward_ms"],
                 100 * one_bucket["allreduce_after_backward_ms"] / one_bucket["backward_ms"]))
        print("  in parts (medians, ms): " + ", ".join("%s %.2f" % kv for kv in ours["parts_ms"].items()))
        print("  against the job's end of backward (the later rank's last gradient): %.2f ms after it "
              "(%.1f%% of that rank's backward); one bucket: %.1f%%"
              % (ours["job_allreduce_after_backward_ms"],
                 100 * ours["job_allreduce_after_backward_ms"] / ours["job_backward_ms"],
                 100 * one_bucket["job_allreduce_after_backward_ms"] / one_bucket["job_backward_ms"]))
        print("  in CPU time of the thread of backward: backward %.2f ms; the last all-reduce after DDP's last "
              "gradient hook %.2f ms (%.1f%%); one bucket: %.2f ms (%.1f%%)"
              % (ours["cpu_backward_ms"], ours["cpu_after_backward_ms"],
                 100 * ours["cpu_after_backward_ms"] / ours["cpu_backward_ms"], one_bucket["cpu_after_backward_ms"],
                 100 * one_bucket["cpu_after_backward_ms"] / one_bucket["cpu_backward_ms"]))
        if whole is not None:
            print("  the last bucket reduced whole (not split; the last bucket's .grad a tensor of its own): step "
                  "%.2f ms; the last all-reduce %.2f ms after the hook (%.1f%%); in CPU time %.2f ms (%.1f%%)"
                  % (whole["step_ms"], whole["allreduce_after_backward_ms"],
                     100 * whole["allreduce_after_backward_ms"] / whole["backward_ms"],
                     whole["cpu_after_backward_ms"], 100 * whole["cpu_after_backward_ms"] / whole["cpu_backward_ms"]))
            print("    in parts (medians, ms): " + ", ".join("%s %.2f" % kv for kv in whole["parts_ms"].items()))
        print("  loss.backward() returned %.2f ms after DDP's last gradient hook (the averages in .grad); "
              "one bucket: %.2f ms" % (ours["returned_after_backward_ms"], one_bucket["returned_after_backward_ms"]))
        print("  load average during this run: %.1f" % os.getloadavg()[0], flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], None if sys.argv[3] == "default" else float(sys.argv[3]), "whole" in sys.argv[4:])
    else:
        main(int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 1)
