"""Single-copy all-reduce for the ranks of a group that share one node.

Why: MPICH's shared-memory path copies every byte twice per hop (into its
shared cells, then out), which on this 2-core machine left our all-reduce no
faster than gloo. Here MPI still provides the group, the shared memory and
the synchronisation, but the data moves once: through an MPI shared-memory
window (MPI_Win_allocate_shared over the node communicator) where every rank
can read its peers' slots directly.

The algorithm, for P ranks and a flat array of n elements cut into blocks of
BLOCK_BYTES, each block cut into P parts (part q of every block is owned by
rank q):
  copy-in  (block k): rank r copies its values of the parts it does not own
                      into its own slot;
  reduce   (block k): rank r reduces its part across its own array and the
                      peers' slots, in rank order, into its slot, and copies
                      the result back into its array;
  copy-out (block k): rank r copies the parts it does not own from their
                      owners' slots.
The three phases are pipelined one block apart (step s does copy-out s-2,
reduce s-1, copy-in s), with one barrier per step, so each block is still in
the shared cache when its peers read it. The window holds a whole array per
rank, so no region is reused within a call, and every call begins with a
barrier that compares the ranks' sizes, dtypes and ops (the agreement), so
no rank writes its slot before all peers have finished reading it in the
previous call. The barrier is a counter per rank in a second small window
(see _sync for why not MPI_Barrier).

An array that already lives in a window (node_buffers: DDP's gradient
buckets) is reduced in place instead: no copy-in, and each rank reduces its
part straight into its own slot (see _reduce_in_place).

The data moves through cthtorch's own kernels on tensors over the window
memory (copy_ and the ops with out=), which release the GIL over these sizes,
as mpi4py does in the barrier: the autograd engine and other Python threads
run meanwhile. The barrier's counters are read through int64 memoryviews.

Only reductions that give MPI's result bit for bit take this path: SUM, AVG
(a SUM; the caller divides), PRODUCT on any numeric dtype; MIN, MAX and the
bitwise ops on integers (float MIN/MAX differ from MPI's on NaN). Everything
else, small arrays, and groups spread over several nodes use MPI_Allreduce.
"""
import sys
import time

import cthtorch
from cthtorch.distributed import _mpi

# a pipeline block: a few fit the shared cache, and there are few barriers
# (each may cost a time slice when the cores are oversubscribed)
BLOCK_BYTES = 4 << 20
MIN_BYTES = 1 << 18        # below this MPI's own all-reduce is as fast
_HEADER_BYTES = 128        # a rank's arrival counter and call signature, on its own cache lines
_MAX_PAUSE = 2e-4          # longest sleep between looks at the peers' arrival counters
_GROWTH_UNIT = 1 << 20     # window slots grow in whole MB (keeps slots page aligned)

_ANY_NUMERIC = {"SUM": cthtorch.add, "AVG": cthtorch.add, "PRODUCT": cthtorch.mul}
_INTEGER_ONLY = {"MIN": cthtorch.minimum, "MAX": cthtorch.maximum, "BAND": cthtorch.bitwise_and,
                 "BOR": cthtorch.bitwise_or, "BXOR": cthtorch.bitwise_xor}
_OP_NAMES = sorted(_ANY_NUMERIC.keys() | _INTEGER_ONLY.keys())
_DTYPES = [cthtorch.uint8, cthtorch.int8, cthtorch.int16, cthtorch.int32, cthtorch.int64,
           cthtorch.float16, cthtorch.bfloat16, cthtorch.float32, cthtorch.float64]


def _ufunc(op_name, dtype):
    if dtype not in _DTYPES:
        return None   # bool: MPI's logical ops
    if not dtype.is_floating_point:
        return _ANY_NUMERIC.get(op_name) or _INTEGER_ONLY.get(op_name)
    return _ANY_NUMERIC.get(op_name)


def _nbytes(t):
    return t.numel() * t.element_size()


def _window_bytes(win, q, count):
    """Rank q's slot of a shared window as a uint8 tensor over its memory (no copy)."""
    return cthtorch.frombuffer(win.Shared_query(q)[0], dtype=cthtorch.uint8, count=count)


class NodeReducer:
    """A group's shared-memory all-reduce. Made (collectively) by every rank
    of the group on the group's communication thread."""

    def __init__(self, comm):
        MPI = _mpi.mpi()
        self.comm = comm
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
        if node.Get_size() != comm.Get_size():   # spread over nodes: MPI's path
            node.Free()
            node = None
        self.node = node
        self.win = None
        self.slots = []
        self.cap = 0
        self.buffer_windows = []   # (window, my slot's address, size, every rank's slot): see node_buffers
        if node is None:
            return
        self.size, self.rank = node.Get_size(), node.Get_rank()
        # each rank's header, a cache line apart: [arrivals, nbytes, dtype/op code, buffer window + 1, offset]
        self.hwin = MPI.Win.Allocate_shared(_HEADER_BYTES, 1, comm=node)
        self.hwin.Lock_all(MPI.MODE_NOCHECK)
        self.headers = [memoryview(self.hwin.Shared_query(q)[0]).cast("B").cast("q")
                        for q in range(self.size)]
        for i in range(len(self.headers[self.rank])):
            self.headers[self.rank][i] = 0
        self.arrivals = 0
        node.Barrier()   # every header is zeroed before anyone arrives

    def usable(self, arr, op_name):
        return (self.node is not None and self.size > 1 and _nbytes(arr) >= MIN_BYTES
                and _ufunc(op_name, arr.dtype) is not None)

    def _sync(self):
        """A barrier of the node's ranks through their headers. MPI's own
        barrier polls the CPU while it waits (half a core here), which takes
        it from backward when DDP's all-reduces overlap it; this one sleeps,
        backing off from a few microseconds. Win.Sync (a full memory fence)
        orders the block copies (non-temporal stores included) before the
        arrival, and the peers' before what follows."""
        self.arrivals += 1
        n = self.arrivals
        self.hwin.Sync()
        self.headers[self.rank][0] = n
        pause, spins = 2e-6, 0
        while True:
            if all(h[0] >= n for h in self.headers):
                break
            spins += 1
            if spins > 20:
                time.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
        self.hwin.Sync()

    def _agree(self, arr, op_name):
        """Whether every rank brings the same size, dtype and op (else MPI's
        path, which reports the mismatch as before); and the node buffer
        window arr lies in on every rank at the same offset, if it does."""
        me = self.headers[self.rank]
        me[1] = _nbytes(arr)
        me[2] = _DTYPES.index(arr.dtype) * 64 + _OP_NAMES.index(op_name)
        me[3], me[4] = self._locate(arr)
        self._sync()
        agreed = all(h[1] == me[1] and h[2] == me[2] for h in self.headers)
        if not agreed:
            self._sync()   # everyone has read the headers before any rank's next call rewrites its own
            return False, None
        in_place = me[3] > 0 and all(h[3] == me[3] and h[4] == me[4] for h in self.headers)
        return True, (self.buffer_windows[me[3] - 1][3], int(me[4])) if in_place else None

    def _locate(self, arr):
        """(buffer window index + 1, byte offset) when arr lies in my slot of one
        of node_buffers' windows, else (0, 0)."""
        addr = arr.data_ptr()
        for i, (_, base, size, _) in enumerate(self.buffer_windows):
            if base <= addr and addr + _nbytes(arr) <= base + size:
                return i + 1, addr - base
        return 0, 0

    def node_buffers(self, sizes):
        """uint8 tensors of the given sizes over a new shared window (collective: every
        rank asks for the same sizes), or None when the group is not on one
        node. An all-reduce of a tensor made on them, at the same place on every
        rank, reduces in place: no copy in, and the result is written straight
        back. The window lives as long as the process (tensors may view it)."""
        if self.node is None or self.size < 2:
            return None
        self._free_buffer_windows(only_unused=True)   # those of DDP models gone since
        MPI = _mpi.mpi()
        offsets, total = [], 0
        for n in sizes:
            offsets.append(total)
            total += -(-n // 64) * 64   # cache-line aligned
        win = MPI.Win.Allocate_shared(max(total, 64), 1, comm=self.node)
        win.Lock_all(MPI.MODE_NOCHECK)
        slots = [_window_bytes(win, q, max(total, 64)) for q in range(self.size)]
        mine = slots[self.rank]
        mine.zero_()
        self.buffer_windows.append((win, mine.data_ptr(), total, slots))
        return [mine[o:o + n] for o, n in zip(offsets, sizes)]

    def _free_buffer_windows(self, only_unused):
        """Frees node_buffers' windows that no tensor views any more (a DDP
        model's buckets, once the model is gone): MPI_Win_free is collective,
        so the ranks first agree on the set. Run on the communication thread."""
        if not self.buffer_windows:
            return
        mask = 0
        for i, (_, _, _, slots) in enumerate(self.buffer_windows):
            # referenced only by this list, the loop's binding and getrefcount's argument
            if not only_unused or sys.getrefcount(slots[self.rank]) <= 3:
                mask |= 1 << i
        mask = self.node.allreduce(mask, op=_mpi.mpi().BAND)
        keep = []
        for i, entry in enumerate(self.buffer_windows):
            if mask >> i & 1:
                entry[3].clear()   # the slot tensors go before the memory under them
                entry[0].Unlock_all()
                entry[0].Free()
            else:
                keep.append(entry)
        self.buffer_windows = keep

    def _ensure(self, nbytes):
        if nbytes <= self.cap:
            return
        MPI = _mpi.mpi()
        if self.win is not None:
            self.slots = []
            self.win.Unlock_all()
            self.win.Free()
            self.win = None
        cap = -(-nbytes // _GROWTH_UNIT) * _GROWTH_UNIT
        self.win = MPI.Win.Allocate_shared(cap, 1, comm=self.node)
        self.win.Lock_all(MPI.MODE_NOCHECK)   # passive access for the whole life: Sync orders the loads/stores
        self.slots = [_window_bytes(self.win, q, cap) for q in range(self.size)]
        self.cap = cap

    def allreduce(self, arr, op_name):
        """Reduce contiguous 1-d arr in place over the group. False (having done
        nothing) when the ranks disagree: the caller then uses MPI."""
        agreed, in_place = self._agree(arr, op_name)
        if not agreed:
            return False
        ufunc = _ufunc(op_name, arr.dtype)
        P, r = self.size, self.rank
        n, nbytes = arr.numel(), _nbytes(arr)
        # in place there is no copy-in to pipeline against: one block, so the
        # fewest barriers (each may cost a time slice on a busy machine)
        block = n if in_place is not None else max(BLOCK_BYTES // arr.element_size(), P)
        nblocks = -(-n // block)

        def part(k, q):
            start = k * block
            m = min(block, n - start)
            return start + m * q // P, start + m * (q + 1) // P

        if in_place is not None:
            slots, offset = in_place
            self._reduce_in_place([sl[offset:offset + nbytes].view(arr.dtype) for sl in slots], ufunc, part,
                                  nblocks)
            return True
        self._ensure(nbytes)
        slots = [s[:nbytes].view(arr.dtype) for s in self.slots]
        mine = slots[r]

        for s in range(nblocks + 2):
            if s >= 2:                       # copy-out: the parts the peers reduced
                k = s - 2
                for q in range(P):
                    if q != r:
                        lo, hi = part(k, q)
                        arr[lo:hi].copy_(slots[q][lo:hi])
            if 1 <= s <= nblocks:            # reduce my part, in rank order
                lo, hi = part(s - 1, r)
                srcs = [arr[lo:hi] if q == r else slots[q][lo:hi] for q in range(P)]
                dst = mine[lo:hi]
                ufunc(srcs[0], srcs[1], out=dst)
                for src in srcs[2:]:
                    ufunc(dst, src, out=dst)
                arr[lo:hi].copy_(dst)
            if s < nblocks:                  # copy-in: my values of the parts others own
                start, end = s * block, min(n, (s + 1) * block)
                lo, hi = part(s, r)
                mine[start:lo].copy_(arr[start:lo])
                mine[hi:end].copy_(arr[hi:end])
            if s <= nblocks:
                self._sync()
        return True

    def _reduce_in_place(self, slots, ufunc, part, nblocks):
        """The all-reduce when every rank's array is its own slot: step s reduces
        my part of block s in place, and copies the peers' parts of block s-1
        out of their slots. The agreement's barrier has ordered everyone's
        values before the first read; the last barrier keeps every slot
        unchanged until all peers have copied out of it."""
        P, r = self.size, self.rank
        mine = slots[r]
        for s in range(nblocks + 1):
            if s < nblocks:
                lo, hi = part(s, r)
                dst = mine[lo:hi]
                # rank order; from rank 2 on my own values are read after the
                # first two ranks', so the partial result must not overwrite them
                acc = dst if r < 2 else cthtorch.empty_like(dst)
                ufunc(slots[0][lo:hi], slots[1][lo:hi], out=acc)
                for q in range(2, P):
                    ufunc(acc, slots[q][lo:hi], out=acc)
                if acc is not dst:
                    dst.copy_(acc)
            if s >= 1:
                for q in range(P):
                    if q != r:
                        lo, hi = part(s - 1, q)
                        mine[lo:hi].copy_(slots[q][lo:hi])
            self._sync()
