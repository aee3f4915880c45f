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
previous call. The barrier is a counter per rank in a second small shared
segment (see _sync for why not MPI_Barrier).

The shared memory is not an MPI window but a file in /dev/shm per rank,
mapped by every rank of the node and unlinked once all have mapped it
(_shared_segments): MPI_Win_free is collective, so windows could only be
freed where every rank agrees to, and torch's destroy_process_group does not
wait for the peers. A mapping goes when the last tensor or view over it does:
destroy_process_group drops the group's, a DDP model its buckets'.

An array that already lives in shared memory (node_buffers: DDP's gradient
buckets) is reduced in place instead: no copy-in, and each rank reduces its
part straight into its own slot (see _reduce_in_place). DDP's last bucket on 2
ranks is reduced split (allreduce_split): each rank has copied in only the
half the peer sums, and writes the sum of its own half into both slots.

The data moves through cthtorch's own kernels on tensors over the window
memory (copy_ and the ops with out=), which release the GIL over these sizes,
as mpi4py does in the barrier: the autograd engine and other Python threads
run meanwhile. The barrier's counters are read through int64 memoryviews.

Only reductions that give MPI's result bit for bit take this path: SUM, AVG
(a SUM; the caller divides), PRODUCT on any numeric dtype; MIN, MAX and the
bitwise ops on integers (float MIN/MAX differ from MPI's on NaN). Everything
else, small arrays, and groups spread over several nodes use MPI_Allreduce.
"""
import atexit
import functools
import itertools
import mmap
import os
import tempfile
import threading
import time
import weakref

import cthtorch
from cthtorch.distributed import _mpi

# a pipeline block: a few fit the shared cache, and there are few barriers
# (each may cost a time slice when the cores are oversubscribed)
BLOCK_BYTES = 4 << 20
MIN_BYTES = 1 << 18        # below this MPI's own all-reduce is as fast
_HEADER_BYTES = 128        # a rank's counters and call signatures, on its own cache lines
_ARRIVALS, _READS = 0, 9   # header fields: barrier arrivals; sums into outputs finished (after the signatures)
# allreduce(outs=) on a node buffer: up to this many ranks, each sums all slots itself
INTO_MAX_RANKS = 4
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


def split_part(n, size, q):
    """[lo, hi): the elements of an n-element array that rank q of size sums
    in allreduce_split."""
    return n * q // size, n * (q + 1) // size


def fill_own_part(arr, own, scale, lo, hi):
    """arr[lo:hi] = scale * own's values there (allreduce_split's fallback)."""
    for o, src in own:
        a, c = max(o, lo), min(o + src.numel(), hi)
        if a < c:
            cthtorch.mul(src[a - o:c - o], scale, out=arr[a:c])


def _slot_bytes(segment, count):
    """A rank's shared segment as a uint8 tensor over its memory (no copy; it
    keeps the mapping alive)."""
    return cthtorch.frombuffer(segment, dtype=cthtorch.uint8, count=count)


_segment_numbers = itertools.count()
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def _shared_segments(node, nbytes):
    """Collective over node: per rank of it, an mmap of that rank's nbytes of
    zeroed shared memory, mapped here. Each rank makes a file, every rank maps
    every file, and after a barrier each unlinks its own: the memory then
    lives exactly as long as the mappings (no collective free)."""
    rank = node.Get_rank()
    name = os.path.join(_SHM_DIR, "cthtorch-shm-%d-%d" % (os.getpid(), next(_segment_numbers)))
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.ftruncate(fd, nbytes)
            mine = mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
        names = node.allgather(name)
        maps = []
        for q, other in enumerate(names):
            if q == rank:
                maps.append(mine)
                continue
            fd = os.open(other, os.O_RDWR)
            try:
                maps.append(mmap.mmap(fd, nbytes))
            finally:
                os.close(fd)
        node.Barrier()   # every rank has mapped every file
    finally:
        os.unlink(name)
    return maps


_fence_window = None


def _fence():
    """A full memory barrier (non-temporal stores included): MPI_Win_sync on a
    window of this process alone, made once."""
    global _fence_window
    if _fence_window is None:
        MPI = _mpi.mpi()
        _fence_window = MPI.Win.Allocate(8, 1, comm=MPI.COMM_SELF)
        _fence_window.Lock_all(MPI.MODE_NOCHECK)
        # freed before MPI_Finalize (the exit hooks that finalize were registered earlier, so run later)
        atexit.register(_free_fence_window)
    _fence_window.Sync()


def _free_fence_window():
    global _fence_window
    MPI = _mpi._MPI
    if _fence_window is not None and MPI is not None and not MPI.Is_finalized():
        _fence_window.Unlock_all()
        _fence_window.Free()
    _fence_window = None


def _drop_buffer(reducer_ref, number, _segment_ref):
    reducer = reducer_ref()
    if reducer is not None:
        reducer._drop_buffer(number)


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
        self.slots = []
        self.cap = 0
        # (number, my slot's address, size, weak reference to my segment, peers' slots): see node_buffers
        self.buffers = []
        self.buffer_count = 0
        self.lock = threading.RLock()   # buffers change on the communication thread and in a weakref callback
        self.agreed_at = None   # when the last agreement's barrier ended (perf_counter; DDP's timing)
        self.headers = []
        self.reads = 0      # sums into outputs finished (_READS)
        if node is None:
            return
        self.size, self.rank = node.Get_size(), node.Get_rank()
        # each rank's header, a cache line apart: [arrivals, then two call signatures of 4 fields: nbytes,
        # dtype/op code, buffer number + 1, offset, then reads] (zeroed, and mapped by all, when
        # _shared_segments returns).
        # Calls alternate between the signatures: a call into outputs ends at its agreement, so a rank may
        # write its next call's signature while a peer still reads this one's (never two calls ahead: the
        # next agreement waits for that peer)
        self.headers = [memoryview(m).cast("B").cast("q") for m in _shared_segments(node, _HEADER_BYTES)]
        self.arrivals = 0
        self.calls = 0

    def usable(self, arr, op_name):
        return (self.node is not None and self.size > 1 and _nbytes(arr) >= MIN_BYTES
                and _ufunc(op_name, arr.dtype) is not None)

    def _sync(self, check=None):
        """A barrier of the node's ranks through their headers. MPI's own
        barrier polls the CPU while it waits (half a core here), which takes
        it from backward when DDP's all-reduces overlap it; this one sleeps,
        backing off from a few microseconds. Win.Sync (a full memory fence)
        orders the block copies (non-temporal stores included) before the
        arrival, and the peers' before what follows (_fence). check (if
        given) is called every few hundred looks while the peers are awaited:
        it raises when one is dead (off the communication thread nothing
        else would notice)."""
        self.arrivals += 1
        self._publish(_ARRIVALS, self.arrivals)
        self._await(_ARRIVALS, self.arrivals, check)

    def _publish(self, field, n):
        """Sets this rank's counter field to n, after everything it did before
        (_fence)."""
        _fence()
        self.headers[self.rank][field] = n

    def _await(self, field, n, check=None):
        """Waits until every rank's counter field has reached n (see _sync)."""
        pause, spins = 2e-6, 0
        while True:
            if all(h[field] >= n for h in self.headers):
                break
            spins += 1
            if spins > 20:
                time.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
                if check is not None and spins % 256 == 0:
                    check()
        _fence()

    def _agree(self, arr, op_name, mode=0, check=None):
        """Whether every rank brings the same size, dtype, op and mode (0: the
        result in arr, 1: into separate outputs, 2: split, see
        allreduce_split) (else MPI's path, which reports a mismatch as
        before); and the node buffer window arr lies in on every rank at the
        same offset, if it does."""
        me = self.headers[self.rank]
        k = 1 + 4 * (self.calls % 2)
        self.calls += 1
        me[k] = _nbytes(arr)
        me[k + 1] = (_DTYPES.index(arr.dtype) * 64 + _OP_NAMES.index(op_name)) * 4 + mode
        me[k + 2], me[k + 3] = self._locate(arr)
        self._sync(check)
        self.agreed_at = time.perf_counter()
        agreed = all(h[k] == me[k] and h[k + 1] == me[k + 1] for h in self.headers)
        if not agreed:
            return False, None
        in_place = me[k + 2] > 0 and all(h[k + 2] == me[k + 2] and h[k + 3] == me[k + 3] for h in self.headers)
        return True, (self._buffer_slots(me[k + 2] - 1), int(me[k + 3])) if in_place else None

    def _buffer_slots(self, number):
        """Every rank's slot of buffer number, as uint8 tensors (mine made anew
        over my segment: the list holds only a weak reference to it)."""
        with self.lock:
            for n, _, size, ref, peers in self.buffers:
                if n == number:
                    mine = ref()
                    break
            else:
                mine = None
        if mine is None:
            raise AssertionError("node buffer %d is gone" % number)
        return [_slot_bytes(mine, size) if q == self.rank else peers[q] for q in range(self.size)]

    def _locate(self, arr):
        """(buffer number + 1, byte offset) when arr lies in my slot of one of
        node_buffers' segments, else (0, 0). Buffers are numbered in the order
        the ranks made them together, so the numbers agree."""
        addr = arr.data_ptr()
        with self.lock:
            for number, base, size, _, _ in self.buffers:
                if base <= addr and addr + _nbytes(arr) <= base + size:
                    return number + 1, addr - base
        return 0, 0

    def node_buffers(self, sizes):
        """uint8 tensors of the given sizes over new node shared memory
        (collective: every rank asks for the same sizes), or None when the
        group is not on one node. An all-reduce of a tensor made on them, at
        the same place on every rank, reduces in place: no copy in, and the
        result is written straight back.

        The memory lives as long as tensors view it: this reducer keeps only
        a weak reference to my segment, and when the last tensor over it goes
        (a DDP model's buckets, with the model) it drops its mappings of the
        peers' segments too. Nothing is freed collectively, so no rank waits
        for another; each peer's memory goes once every rank has let go."""
        if self.node is None or self.size < 2:
            return None
        offsets, total = [], 0
        for n in sizes:
            offsets.append(total)
            total += -(-n // 64) * 64   # cache-line aligned
        total = max(total, 64)
        segments = _shared_segments(self.node, total)
        mine = _slot_bytes(segments[self.rank], total)
        peers = {q: _slot_bytes(m, total) for q, m in enumerate(segments) if q != self.rank}
        with self.lock:
            number, self.buffer_count = self.buffer_count, self.buffer_count + 1
            ref = weakref.ref(segments[self.rank], functools.partial(_drop_buffer, weakref.ref(self), number))
            self.buffers.append((number, mine.data_ptr(), total, ref, peers))
        del segments
        return [mine[o:o + n] for o, n in zip(offsets, sizes)]

    def _drop_buffer(self, number):
        with self.lock:
            self.buffers = [e for e in self.buffers if e[0] != number]

    def free(self):
        """At destroy_process_group (on the communication thread, after the
        group's last collective): drops every mapping this group holds. The
        memory of a DDP model still alive stays with its tensors."""
        with self.lock:
            self.buffers = []
        self.slots, self.cap, self.headers = [], 0, []
        if self.node is not None:
            self.node.Free()
            self.node = None

    def _ensure(self, nbytes):
        if nbytes <= self.cap:
            return
        self.slots = []
        cap = -(-nbytes // _GROWTH_UNIT) * _GROWTH_UNIT
        self.slots = [_slot_bytes(m, cap) for m in _shared_segments(self.node, cap)]
        self.cap = cap

    def allreduce(self, arr, op_name, outs=None, check=None):
        """Reduce contiguous 1-d arr in place over the group. False (having done
        nothing) when the ranks disagree: the caller then uses MPI.

        outs: (offset, tensor) pairs (DDP's .grad for a bucket) that receive
        the result of arr[offset:offset + numel] instead. When arr is a node
        buffer and the group small, every rank then sums all the ranks' slots
        straight into outs (_reduce_into), and arr keeps this rank's values;
        the peers may still be reading it when this returns, so it must not
        be written before wait_released() has returned. Otherwise the
        result goes to arr as usual, then to outs. check: see _sync."""
        agreed, in_place = self._agree(arr, op_name, int(outs is not None), check)
        if not agreed:
            return False
        ufunc = _ufunc(op_name, arr.dtype)
        nbytes = _nbytes(arr)
        if in_place is not None and outs is not None and self.size <= INTO_MAX_RANKS:
            slots, offset = in_place
            self._reduce_into([sl[offset:offset + nbytes].view(arr.dtype) for sl in slots], ufunc, outs)
            self.reads += 1
            self._publish(_READS, self.reads)
            return True
        self._reduce(arr, ufunc, in_place, check)
        for o, t in outs or ():
            t.copy_(arr[o:o + t.numel()].view(t.shape))
        return True

    def allreduce_split(self, arr, own, scale, check=None):
        """The SUM of node buffer arr over 2 ranks, each rank's values
        divided by 1/scale (a power of two), when this rank has copied in
        only the peer's part of its values (split_part: the part the peer
        sums), the sum of its own part to be read from own: (offset, flat
        tensor) pairs, the undivided values of arr[offset:offset + numel].
        After the agreement each rank sums its part once, from its own
        values and the peer's slot, into its slot and the peer's; a second
        barrier, and both slots hold the whole result. So after the last
        gradient each rank moves 28 bytes per 4-byte element (copy-in half,
        sum half, write it twice) against 40 for a copy-in of everything
        and a sum of all of it into separate outputs; and once it returns no
        rank reads another's slot, so arr may be handed out (DDP's .grad)
        and written at once. False when the ranks disagree: arr then holds
        all of this rank's values divided, for MPI's path."""
        agreed, in_place = self._agree(arr, "SUM", 2, check)
        r = self.rank
        lo, hi = split_part(arr.numel(), self.size, r)
        if not agreed or in_place is None or self.size != 2:
            fill_own_part(arr, own, scale, lo, hi)
            return False
        slots, offset = in_place
        mine, peer = (sl[offset:offset + _nbytes(arr)].view(arr.dtype) for sl in (slots[r], slots[1 - r]))
        self._split_sum(mine, peer, own, scale, lo, hi)
        self._sync(check)   # the peer's part is in my slot, and it reads mine no more
        return True

    def _split_sum(self, mine, peer, own, scale, lo, hi):
        """allreduce_split's sum of my part [lo, hi), into both slots."""
        for o, src in own:
            a, c = max(o, lo), min(o + src.numel(), hi)
            if a < c:   # peer + scale * own: the same bits as the peers' sum of divided values (a + b == b + a)
                cthtorch.add(peer[a:c], src[a - o:c - o], alpha=scale, out=mine[a:c])
        peer[lo:hi].copy_(mine[lo:hi])

    def _reduce(self, arr, ufunc, in_place, check=None):
        """The result in arr: in place when arr is a node buffer, else
        through this group's slots, pipelined by blocks."""
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
                                  nblocks, check)
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
                self._sync(check)
        return True

    def _reduce_into(self, slots, ufunc, outs):
        """Every rank's array is its own slot, and the agreement's barrier has
        ordered everyone's values before this: each rank sums all the slots,
        in rank order (so every rank gets the same bits), straight into outs.
        Against splitting the sum (each rank reduces a part, then copies the
        others' parts, then the result is copied to outs) it reads the slots
        P times, but it has no barrier after the agreement and moves fewer
        bytes for P <= INTO_MAX_RANKS: what ends DDP's backward is this rank's
        own pass over the last bucket, not a wait for a peer's time slice."""
        for o, t in outs:
            k = t.numel()
            srcs = [sl[o:o + k].view(t.shape) for sl in slots]
            ufunc(srcs[0], srcs[1], out=t)
            for src in srcs[2:]:
                ufunc(t, src, out=t)

    def released(self):
        """Whether every peer has finished the sums into outputs (_reduce_into)
        that this rank has finished, so none reads this rank's slots any
        more."""
        return not self.headers or all(h[_READS] >= self.reads for h in self.headers)

    def wait_released(self, check=None):
        """After allreduce(..., outs) calls, before this rank writes its node
        buffers again (DDP's next backward): waits until released(). Each
        rank counts its finished sums in its header, so this is the half of
        a barrier that those calls skipped, waited for only when it matters,
        by then (normally) long passed: no collective, no thread."""
        if not self.released():
            self._await(_READS, self.reads, check)

    def _reduce_in_place(self, slots, ufunc, part, nblocks, check=None):
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
            self._sync(check)
