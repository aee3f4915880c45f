"""torch.cuda memory statistics over libTHC's caching allocator.

Before CUDA is initialised (and always without a GPU) every statistic reads
0 and the calls that change state do nothing, as in torch."""
from .. import _C


def _ready():
    return _C._cuda._is_initialized()


def memory_stats(device=None):
    """The allocator's counters (torch's key names, the subset cthtorch tracks)."""
    if not _ready():
        return {}
    return dict(sorted(_C._cuda._memory_stats(device).items()))


def _stat(key, device):
    return memory_stats(device).get(key, 0)


def memory_allocated(device=None):
    """Bytes held by live tensors on the device."""
    return _stat("allocated_bytes.all.current", device)


def max_memory_allocated(device=None):
    return _stat("allocated_bytes.all.peak", device)


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (live tensors + cached blocks)."""
    return _stat("reserved_bytes.all.current", device)


def max_memory_reserved(device=None):
    return _stat("reserved_bytes.all.peak", device)


memory_cached, max_memory_cached = memory_reserved, max_memory_reserved


def reset_peak_memory_stats(device=None):
    if _ready():
        _C._cuda._reset_peak_memory_stats(device)


reset_max_memory_allocated = reset_max_memory_cached = reset_accumulated_memory_stats = reset_peak_memory_stats


def empty_cache():
    """Returns the cached free blocks to the driver (live tensors keep theirs)."""
    _C._cuda._empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of the device, as the driver reports them."""
    return _C._cuda._mem_get_info(device)


def _fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.2f %s" % (n, unit))
        n /= 1024.0


def memory_summary(device=None, abbreviated=False):
    if not _ready():
        return "No CUDA device is available (cthtorch runs on the CPU here)."
    from . import current_device
    st = memory_stats(device)
    dev = current_device() if device is None else device
    rows = [("Allocated memory", st["allocated_bytes.all.current"], st["allocated_bytes.all.peak"]),
            ("Reserved memory", st["reserved_bytes.all.current"], st["reserved_bytes.all.peak"])]
    line = "|" + "=" * 75 + "|"
    out = [line, "|{:^75}|".format("PyTorch CUDA memory summary, device ID %s" % dev), line,
           "| {:<30}| {:>20} | {:>19} |".format("Metric", "Cur Usage", "Peak Usage"), line]
    out += ["| {:<30}| {:>20} | {:>19} |".format(name, _fmt(cur), _fmt(peak)) for name, cur, peak in rows]
    out += ["| {:<30}| {:>20} | {:>19} |".format(name, st[key], "")
            for name, key in (("Allocations", "allocation.all.allocated"), ("Frees", "allocation.all.freed"),
                              ("cudaMalloc retries", "num_alloc_retries"), ("CUDA OOMs", "num_ooms"))]
    out.append(line)
    return "\n".join(out) + "\n"
