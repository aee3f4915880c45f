"""Process groups and DDP models made and destroyed in a loop (2+ ranks,
Linux): node shared memory must not pile up. Each round makes a group, a DDP
model whose buckets live in node shared memory, trains a step, all-reduces a
tensor through the shared staging memory, deletes a second DDP model while
the group lives (its memory must go at once), and destroys the group with
the first model still alive (as ddp tutorials' cleanup() does), dropping it
afterwards. The shared mappings, the memory and the files in /dev/shm must be
the same after the last round as after the first."""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import cthtorch as torch  # noqa: E402
import cthtorch.distributed as dist  # noqa: E402
from cthtorch.distributed import _shm_allreduce as shm  # noqa: E402


def shared_mappings():
    with open("/proc/self/maps") as f:
        return sum(1 for line in f if "cthtorch-shm-" in line)


def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512))


failures = []
seen = []
for rnd in range(6):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = torch.nn.parallel.DistributedDataParallel(mlp())
    in_node = sum(b.buffer.numel() * 4 >= shm.MIN_BYTES for b in model.reducer.buckets)
    if in_node == 0:
        failures.append("round %d: no bucket in node shared memory" % rnd)
    model(torch.randn(8, 512)).sum().backward()
    t = torch.full((1 << 20,), float(rank + 1))
    dist.all_reduce(t)   # the staging memory path
    if not bool((t == world * (world + 1) / 2).all()):
        failures.append("round %d: all_reduce" % rnd)
    during = shared_mappings()
    other = torch.nn.parallel.DistributedDataParallel(mlp())
    if shared_mappings() <= during:
        failures.append("round %d: the second model's buckets are not in node shared memory" % rnd)
    del other
    gc.collect()
    if shared_mappings() != during:
        failures.append("round %d: a deleted DDP model's shared memory stayed mapped (%d, was %d)"
                        % (rnd, shared_mappings(), during))
    dist.destroy_process_group()   # the model is still alive here
    del model, t
    gc.collect()
    seen.append((shared_mappings(), resident_mb()))
first, last = seen[1], seen[-1]   # round 0 also loads code and warms allocators
if last[0] != first[0] or last[0] != 0:
    failures.append("shared mappings after each round: %s" % [m for m, _ in seen])
if last[1] - first[1] > 8:
    failures.append("resident memory grew: %s MB" % ["%.0f" % r for _, r in seen])
left = [n for n in os.listdir(shm._SHM_DIR) if n.startswith("cthtorch-shm-%d-" % os.getpid())]
if left:
    failures.append("files left in %s: %s" % (shm._SHM_DIR, left))
if failures:
    raise SystemExit("rank %d: %s" % (int(os.environ["RANK"]), "; ".join(failures)))
# one write per line: print() writes the text and its newline apart, and the ranks' output interleaves
sys.stdout.write("rank %s ok group lifecycle: mappings %s, resident MB %s\n"
                 % (os.environ["RANK"], [m for m, _ in seen], ["%.0f" % r for _, r in seen]))
sys.stdout.flush()
