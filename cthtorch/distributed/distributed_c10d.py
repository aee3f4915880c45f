"""torch.distributed's process groups and collectives, on MPI (see _mpi.py).

"gloo" and "mpi" name the same engine. Every group is an MPI communicator
with its own communication thread; a collective checks its arguments here
(with PyTorch's messages), is queued on that thread, and returns a Work.
"""
import atexit
import datetime
import enum
import os
import sys
import threading
import time
import warnings
from queue import SimpleQueue

import cthtorch
from cthtorch.futures import Future
from cthtorch.distributed import _mpi, _shm_allreduce, _watchdog
from cthtorch.distributed._stores import DistBackendError, FileStore, PrefixStore, TCPStore

__all__ = ["Backend", "ReduceOp", "Work", "ProcessGroup", "GroupMember", "group", "P2POp", "init_process_group",
           "destroy_process_group", "is_initialized", "is_available", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "is_backend_available", "is_torchelastic_launched", "get_rank", "get_world_size",
           "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "new_group",
           "new_subgroups", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather",
           "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier",
           "monitored_barrier", "send", "recv", "isend", "irecv", "batch_isend_irecv", "broadcast_object_list",
           "all_gather_object", "gather_object", "scatter_object_list", "default_pg_timeout",
           "get_default_backend_for_device"]

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    # torch's map; "gloo" runs on MPI here, the others raise at init_process_group without their device
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


def get_default_backend_for_device(device):
    """The default backend for a device (or device string), lower case."""
    device_str = device.type if isinstance(device, cthtorch.device) else cthtorch.device(device).type
    backend = Backend.default_device_backend_map.get(device_str)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


class ReduceOp:
    """ReduceOp.SUM etc. are RedOpType members, as torch's (printing
    RedOpType.SUM, comparing equal to themselves and to ReduceOp(op))."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

        def __str__(self):
            return "RedOpType." + self.name

    def __init__(self, op=RedOpType.SUM):
        self.op = ReduceOp.RedOpType(op)

    def __eq__(self, other):
        return int(self.op) == int(getattr(other, "op", other))

    def __hash__(self):
        return hash(int(self.op))

    def __repr__(self):
        return repr(self.op)


for _op in ReduceOp.RedOpType:
    setattr(ReduceOp, _op.name, _op)
ReduceOp.RedOpType.__qualname__ = "ReduceOp.RedOpType"
ReduceOp.__module__ = ReduceOp.RedOpType.__module__ = "torch.distributed"


def _op_type(op):
    if isinstance(op, ReduceOp):
        return op.op
    try:
        return ReduceOp.RedOpType(int(op))
    except (TypeError, ValueError):
        raise TypeError("all_reduce(): invalid op %r: expected a torch.distributed.ReduceOp" % (op,)) from None


# ---------------------------------------------------------------- Work

class Work:
    """A queued or running operation: wait() blocks until it is done (within
    the group's timeout, raising its error), is_completed() asks without
    blocking, get_future() gives a torch.futures.Future of its outputs."""

    def __init__(self, pg, fn, outputs, name, seq):
        self._pg, self._fn, self._outputs, self._name, self._seq = pg, fn, outputs, name, seq
        self._event = threading.Event()
        self._exc = None
        self._future = None
        self._source = -1

    def _run(self):
        try:
            r = self._fn()
            if r is not None:
                self._source = r
        except BaseException as e:   # noqa: B902 -- delivered to the waiter
            self._exc = e if isinstance(e, Exception) else RuntimeError(repr(e))
        self._fn = None
        self._event.set()
        if self._future is not None:
            self._deliver()

    def _deliver(self):
        if self._exc is not None:
            self._future.set_exception(self._exc)
        else:
            self._future.set_result(self._outputs)

    def _test(self):
        return self._event.is_set()

    def is_completed(self):
        return self._test()

    def is_success(self):
        return self._test() and self._exc is None

    def exception(self):
        return self._exc

    def wait(self, timeout=None):
        self._pg._wait(self, timeout)
        if self._exc is not None:
            raise self._exc
        return True

    def synchronize(self):
        self.wait()

    def result(self):
        self.wait()
        return list(self._outputs)

    def source_rank(self):
        self.wait()
        return self._source

    def get_future(self):
        if self._future is None:
            self._future = Future()
            if self._event.is_set():
                self._deliver()
        return self._future

    def __repr__(self):
        return "<torch.distributed.distributed_c10d.Work object: %s>" % self._name


Work.__module__ = "torch.distributed.distributed_c10d"


class _P2PWork(Work):
    """A posted MPI request; waiting tests it (so the wait can time out)."""

    def __init__(self, pg, req, after, outputs, name, seq, peer_group_rank):
        super().__init__(pg, None, outputs, name, seq)
        self._req, self._after, self._status = req, after, None
        self._peer = peer_group_rank
        self._lock = threading.Lock()

    def _test(self):
        if self._event.is_set():
            return True
        with self._lock:
            if self._event.is_set():
                return True
            try:
                done = self._req.Test(self._status)
            except Exception as e:
                self._exc = _mpi.wrap_mpi_error(e)
                done = True
            if done:
                if self._exc is None:
                    try:
                        src = self._status.Get_source() if self._status is not None else -1
                        self._source = self._pg._ranks[src] if src >= 0 else -1
                        if self._after is not None:
                            self._after()
                    except Exception as e:
                        self._exc = e
                self._event.set()
                if self._future is not None:
                    self._deliver()
        return done


# ---------------------------------------------------------------- groups

class ProcessGroup:
    """A set of ranks with an MPI communicator and a communication thread."""

    def __init__(self, comm, ranks, backend, timeout, gid):
        self._comm = comm
        self._ranks = list(ranks)                 # group rank -> global rank
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._backend = backend
        self._timeout = timeout
        self._gid = gid
        self._seq = 0
        self._node_reducer = None   # made on the first all_reduce that can use it (collective)
        self._queue = SimpleQueue()
        self._lock = threading.Lock()
        self._last = None           # the last Work queued or run here (_run_here waits for it)
        self._thread = threading.Thread(target=self._loop, daemon=True, name="cthtorch-dist-comm-%d" % gid)
        self._thread.start()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._backend.upper() if self._backend else ""

    @property
    def group_name(self):
        return str(self._gid)

    def __repr__(self):
        return "<torch.distributed.ProcessGroup (ranks %s, %s)>" % (self._ranks, self._backend)

    def _node_allreduce(self, arr, op_name, outs=None, check=None, split=None):
        """All-reduce arr through node shared memory when the group lives on one
        node (see _shm_allreduce; outs, check: NodeReducer.allreduce's; split:
        (own, scale) of NodeReducer.allreduce_split); False when MPI's
        Allreduce must do it (arr then holds all of this rank's values)."""
        node = None
        if self._size >= 2 and arr.numel() * arr.element_size() >= _shm_allreduce.MIN_BYTES:
            node = self._node()
            if not node.usable(arr, op_name):
                node = None
        if split is not None:
            if node is None or node.node is None:
                own, scale = split
                _shm_allreduce.fill_own_part(arr, own, scale, *_shm_allreduce.split_part(arr.numel(), self._size,
                                                                                           self._rank))
                return False
            return node.allreduce_split(arr, split[0], split[1], check)
        return node is not None and node.allreduce(arr, op_name, outs, check)

    def _node_wait_released(self):
        """Waits, on the calling thread, until every peer has finished reading
        this rank's node buffers (NodeReducer.wait_released), raising as
        _wait would should a peer die meanwhile."""
        node = self._node_reducer
        if node is None or node.released():
            return
        limit = _seconds(self._timeout)
        deadline = time.monotonic() + limit
        # blame a peer that died before it finished this group's last operation
        w = Work(self, None, [], "all_reduce (node buffer release)", self._seq + 1)
        node.wait_released(lambda: self._check(w, deadline, limit))

    def _node(self):
        """The group's NodeReducer, made (collectively) on first use."""
        if self._node_reducer is None:
            self._node_reducer = _shm_allreduce.NodeReducer(self._comm)
        return self._node_reducer

    def _node_buffers(self, sizes):
        """uint8 tensors over node shared memory that all_reduce reduces in place
        (NodeReducer.node_buffers), or None. Collective over the group; run
        on the communication thread, in order with the collectives."""
        out = []

        def fn():
            if self._size >= 2:
                out.append(self._node().node_buffers(sizes))
        self._submit("node_buffers", fn).wait()
        return out[0] if out else None

    def _loop(self):
        while True:
            w = self._queue.get()
            if w is None:
                return
            w._run()

    def _next_seq(self):
        self._seq += 1
        _state.count(self._gid, self._seq)
        return self._seq

    def _submit(self, name, fn, outputs=()):
        _state.check_healthy()
        with self._lock:   # sequence numbers in queue order
            w = Work(self, fn, list(outputs), name, self._next_seq())
            self._last = w
            self._queue.put(w)
        return w

    def _run_here(self, name, fn, outputs=()):
        """Runs fn(check) on the calling thread, in order with the group's
        queued work: once the communication thread has finished everything
        queued before it, and holding the queue's lock so nothing is queued
        meanwhile. For the node all-reduce of DDP's last bucket at the end of
        backward: handing it to the communication thread and waking this one
        again costs two thread switches, each a time slice on a busy machine.
        fn must not block in MPI (which cannot be interrupted); it calls
        check() while it waits for its peers, which raises as _wait would
        (a dead peer, the timeout). Returns the finished Work and fn's
        result."""
        _state.check_healthy()
        while True:
            with self._lock:
                last = self._last
                if last is None or last._event.is_set():
                    w = Work(self, None, list(outputs), name, self._next_seq())
                    self._last = w
                    limit = _seconds(self._timeout)
                    deadline = time.monotonic() + limit
                    out = []
                    w._fn = lambda: out.append(fn(lambda: self._check(w, deadline, limit)))
                    w._run()
                    return w, (out[0] if out else None)
            self._wait(last)

    def _post(self, name, req, after, outputs, peer):
        with self._lock:
            seq = self._next_seq()
        return _P2PWork(self, req, after, list(outputs), name, seq, peer)

    def _wait(self, work, timeout=None):
        """Wait for work; fail (naming the culprit) when a peer is found dead
        or the timeout passes, instead of hanging in MPI."""
        limit = _seconds(timeout if timeout is not None else self._timeout)
        deadline = time.monotonic() + limit
        pause = 0.00005
        while not work._test():
            if isinstance(work, _P2PWork):
                work._event.wait(pause)
                pause = min(pause * 2, 0.002)
            else:
                work._event.wait(0.1)
            if work._test():
                break
            self._check(work, deadline, limit)

    def _check(self, work, deadline, limit):
        """Raises (naming the culprit) when a peer that work waits for is
        found dead, or when its deadline has passed."""
        mon = _state.monitor
        if mon is not None:
            dead = mon.blame(self._gid, work._seq, self._ranks)
            if dead:
                _state.fail(self, work, "; ".join("rank %d %s" % (r, _describe(why)) for r, why in dead))
        if time.monotonic() > deadline:
            lag = mon.lagging(self._gid, work._seq, self._ranks) if mon is not None else []
            why = ("ranks %s had not joined it" % lag) if lag else "every rank had joined it"
            _state.fail(self, work, "timed out after %d ms (%s)" % (round(limit * 1000), why), timeout=True)

    def _shutdown(self):
        """Ends the communication thread after the group's queued work, and
        lets go of the group's node shared memory there (NodeReducer.free).
        Nothing here waits for the peers, as torch's destroy_process_group
        does not (rank 0 of examples/mnist.py evaluates alone before it gets
        there): that memory is unmapped locally, never freed collectively."""
        def release():
            if self._node_reducer is not None:
                self._node_reducer.free()
                self._node_reducer = None
        self._queue.put(Work(self, release, [], "destroy_process_group", 0))
        self._queue.put(None)
        # the group's work is done and its memory unmapped when destroy
        # returns, as torch's destructor drains its work queue; bounded by the
        # group's timeout so a peer that died mid-collective cannot hang it
        if threading.current_thread() is not self._thread:
            self._thread.join(_seconds(self._timeout) if self._timeout is not None else None)


def _describe(state):
    if state == "exited":
        return "has exited"
    if state.startswith("failed: "):
        return "failed with %s" % state[len("failed: "):]
    if state.startswith("killed: "):
        return "was killed " + state[len("killed: "):]
    return "is not responding: " + state


def _seconds(t):
    return t.total_seconds() if isinstance(t, datetime.timedelta) else float(t)


class _NonMember:
    def __repr__(self):
        return "<torch.distributed.GroupMember.NON_GROUP_MEMBER>"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = _NonMember()


class group:   # noqa: N801 -- torch's name
    WORLD = None


_group_ns = group   # the class, where a parameter named `group` hides it


class _State:
    """The default group, the heartbeat monitor and the fault state."""

    def __init__(self):
        self.default = None
        self.store = None
        self.monitor = None
        self.groups = {}          # gid -> ProcessGroup
        self.next_gid = 0
        self.broken = None
        self.exit_comm = None     # the exit barrier's communicator
        self.last_monitor = None
        self._hooks_installed = False

    def count(self, gid, seq):
        if self.monitor is not None:
            self.monitor.issued[gid] = seq

    def check_healthy(self):
        if self.broken is not None:
            raise DistBackendError("the process group is unusable after an earlier failure: " + self.broken)

    def fail(self, pg, work, why, timeout=False):
        msg = "[Rank %d] %s (operation %d on the group of ranks %s) failed: %s" % (
            _world_rank(), work._name, work._seq, pg._ranks, why)
        self.broken = msg
        if self.monitor is not None:
            self.monitor.finish("failed: " + msg)
        raise DistBackendError(msg)


_state = _State()


def _world_rank():
    return _state.default._rank if _state.default is not None else -1


def _mark_failed(exc):
    """This rank is ending with exc: peers waiting on it fail at once."""
    if _state.monitor is not None:
        _state.monitor.finish("failed: %s: %s" % (type(exc).__name__, exc))
    rpc = sys.modules.get("cthtorch.distributed.rpc")
    if rpc is not None:   # RPC peers waiting on this worker fail too
        rpc._mark_failed(exc)


def _exit_hook():
    """At exit: a rank whose group broke cannot finalize MPI (a peer is gone
    and its communication thread is stuck in MPI), so it leaves at once with
    status 1. A healthy rank says it exited, waits for its live peers to
    reach the end too (on a communicator of its own, the GIL released, so a
    store this rank hosts keeps serving them), then finalizes MPI: MPICH's
    launcher takes a rank that ends without MPI_Finalize for a failed one."""
    if _state.broken is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    mon = _state.monitor or _state.last_monitor   # destroy_process_group keeps the last one for this
    if mon is not None:
        mon.finish("exited")
    MPI = _mpi._MPI
    if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized():
        return
    if _state.exit_comm is not None and mon is not None:
        req = _state.exit_comm.Ibarrier()
        while not req.Test():
            time.sleep(0.005)
            if mon.peer_gone() and not req.Test():
                return   # no Finalize: it would wait for the dead peer
    MPI.Finalize()


def _default():
    if _state.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _state.default


def _group(g):
    return _default() if g is None or g is GroupMember.WORLD else g


def _member(g, opname):
    """The group to run on, or None when this rank is not in it (torch warns
    and does nothing)."""
    pg = _group(g)
    if pg is GroupMember.NON_GROUP_MEMBER:
        warnings.warn("Running %s on global rank %d which does not belong to the given group." % (opname, _world_rank()))
        return None
    return pg


# ---------------------------------------------------------------- init

def is_available():
    return _mpi.available()


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    return _mpi.available()


def is_nccl_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return Backend(backend) in (Backend.GLOO, Backend.MPI) and _mpi.available()


def is_initialized():
    return _state.default is not None


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def _env_int(name):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else None


def _rendezvous_store(init_method, rank, world_size, timeout):
    """The store for init_method (env://, tcp://host:port, file://path); rank
    0 hosts a TCPStore unless the launcher's agent hosts it."""
    if init_method.startswith("file://"):
        return FileStore(init_method[len("file://"):].split("?")[0], world_size)
    if init_method.startswith("tcp://"):
        hostport = init_method[len("tcp://"):].split("?")[0].rstrip("/")
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: port number missing")
        host = host.strip("[]")
    elif init_method.startswith("env://"):
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if host is None or port is None:
            return None   # plain mpiexec: the MPI job knows the ranks; rank 0 hosts a store on a free port
    else:
        raise ValueError("No rendezvous handler for %s" % init_method.split("//")[0] + "//")
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    return TCPStore(host, int(port), world_size, is_master=(rank == 0 and not agent), timeout=timeout,
                    wait_for_workers=False)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    if _state.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if store is not None:
        if not world_size > 0:
            raise AssertionError("world_size must be positive if using store")
        if not rank >= 0:
            raise AssertionError("rank must be non-negative if using store")
    backend = Backend(backend) if backend is not None else Backend.GLOO
    if ":" in backend:   # "cpu:gloo,cuda:nccl": the CPU entry decides here
        parts = dict(p.split(":", 1) for p in backend.split(",") if ":" in p)
        backend = Backend(parts.get("cpu", "gloo"))
    if backend == Backend.NCCL:
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    if backend not in (Backend.GLOO, Backend.MPI):
        raise RuntimeError("Invalid backend: '%s'" % backend)
    if not _mpi.available():
        raise RuntimeError("cthtorch.distributed needs mpi4py and an MPI library: pip install mpi4py mpich")
    timeout = timeout if timeout is not None else default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError("Expected timeout argument to be of type datetime.timedelta")
    init_method = init_method if init_method is not None else ("env://" if store is None else None)

    # the ranks the program asked for (arguments first, then the environment)
    want_rank = rank if rank is not None and rank >= 0 else None
    want_size = world_size if world_size is not None and world_size > 0 else None
    if init_method is not None and init_method.startswith("env://"):
        want_rank = want_rank if want_rank is not None else _env_int("RANK")
        want_size = want_size if want_size is not None else _env_int("WORLD_SIZE")

    launched = _mpi.launched_by_mpi()
    if not launched and want_size not in (None, 1):
        raise RuntimeError(
            "cthtorch.distributed: world_size=%d, but this process was not started by an MPI launcher, and MPI "
            "cannot join separately started processes. Start the ranks with `python -m torch.distributed.run "
            "--nproc_per_node=%d script.py`, `mpiexec -n %d python script.py`, or torch.multiprocessing.spawn."
            % (want_size, want_size, want_size))
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    mrank, msize = world.Get_rank(), world.Get_size()
    # A group over part of the job (pytorch/examples rpc/ddp_rpc: 2 trainers
    # of a 4-process job), or with ranks the program numbered itself: the
    # members find each other through init_method's store.
    subset = want_size is not None and (want_size < msize or (want_rank is not None and want_rank != mrank))
    if want_size is not None and want_size > msize or subset and (want_rank is None or store is None and (
            init_method is None or init_method.startswith("env://") and "MASTER_ADDR" not in os.environ)):
        raise RuntimeError(
            "cthtorch.distributed: init_process_group asked for rank %s of world_size %s, but this process is "
            "rank %d of the %d-process MPI job it was started in; a group over part of the job needs its rank, its "
            "world_size and a rendezvous (tcp://, file://, env:// with MASTER_ADDR, or a store)"
            % (want_rank if want_rank is not None else "(any)", want_size if want_size is not None else "(any)",
               mrank, msize))
    if subset and not 0 <= want_rank < want_size:
        raise ValueError("Invalid rank %d, rank should be in the interval [0, %d]" % (want_rank, want_size - 1))
    prank, psize = (want_rank, want_size) if subset else (mrank, msize)

    if store is None and init_method is not None:
        store = _rendezvous_store(init_method, prank, psize, timeout)
    if store is None:
        # no address given: rank 0 hosts a store on a free port and tells the others over MPI
        import socket
        host = socket.gethostname() if msize > 1 else "127.0.0.1"
        addr = None
        if mrank == 0:
            store = TCPStore(host, 0, msize, is_master=True, timeout=timeout, wait_for_workers=False)
            addr = (host, store.port)
        host, port = world.bcast(addr, root=0)
        if mrank != 0:
            store = TCPStore(host, port, msize, is_master=False, timeout=timeout, wait_for_workers=False)
    store = PrefixStore("default_pg", store) if group_name == "" else PrefixStore(group_name, store)

    comm = _subset_comm(world, store, prank, psize) if subset else world.Dup()
    _state.store = store
    _state.broken = None
    gid = _state.next_gid
    _state.next_gid += 1
    pg = ProcessGroup(comm, range(psize), backend, timeout, gid)
    _state.groups[gid] = pg
    _state.default = pg
    GroupMember.WORLD = group.WORLD = pg
    if not _state._hooks_installed:
        _watchdog.install_exit_hooks(lambda: _state.monitor)
        atexit.register(_exit_hook)
        _state._hooks_installed = True
    if _state.last_monitor is not None:   # a re-initialised group: the old heartbeat must not overwrite the new
        _state.last_monitor.stop()
        _state.last_monitor = None
    if psize > 1:
        _state.monitor = _watchdog.Monitor(store, prank, psize)
        if _state.exit_comm is None:
            _state.exit_comm = comm.Dup()
        comm.Barrier()   # everyone's heartbeat is published before any wait reads them


def _subset_comm(world, store, rank, size):
    """A communicator over the job's processes that called init_process_group
    with this world_size, ordered by the ranks they chose. Each publishes its
    MPI rank under its chosen rank in the rendezvous store; MPI_Comm_create_group
    then involves only the members (MPI_Comm_split would need every process of
    the job, and the others may never call init_process_group)."""
    if size == 1:   # no peers to find (and no keys shared with another 1-process group)
        return _mpi.mpi().COMM_SELF.Dup()
    me = "%d/%d" % (world.Get_rank(), world.Get_size())
    store.set("cth/mpi_rank/%d" % rank, me)
    got = [store.get("cth/mpi_rank/%d" % r).decode() for r in range(size)]
    jobs = {g.split("/")[1] for g in got}
    members = [int(g.split("/")[0]) for g in got]
    if jobs != {me.split("/")[1]} or len(set(members)) != size:
        raise RuntimeError("cthtorch.distributed: the %d ranks that met at the rendezvous are not distinct processes "
                           "of one MPI job (MPI rank/job size by group rank: %s); start them with one launcher"
                           % (size, got))
    return world.Create_group(world.Get_group().Incl(members), tag=_SUBSET_TAG)


_SUBSET_TAG = 0x5C7   # MPI_Comm_create_group's tag on COMM_WORLD for these groups


def destroy_process_group(group=None):
    if _state.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    if group is None or group is GroupMember.WORLD:
        for pg in list(_state.groups.values()):
            pg._shutdown()
        if _state.monitor is not None and _state.broken is None:
            _state.monitor.finish("exited")
        _state.groups.clear()
        _state.default = None
        _state.last_monitor = _state.monitor or _state.last_monitor
        _state.monitor = None
        GroupMember.WORLD = _group_ns.WORLD = None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    group._shutdown()
    _state.groups.pop(group._gid, None)


def get_rank(group=None):
    pg = _group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg._rank


def get_world_size(group=None):
    pg = _group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg._size


def get_backend(group=None):
    pg = _group(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_process_group_ranks(group):
    pg = _group(group)
    return list(pg._ranks)


def get_global_rank(group, group_rank):
    pg = _group(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError("Group rank %d is not part of group %s" % (group_rank, pg))
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _group(group)
    if global_rank not in pg._ranks:
        raise ValueError("Global rank %d is not part of group %s" % (global_rank, pg))
    return pg._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    world = _default()
    n = world._size
    ranks = sorted(range(n) if ranks is None else ranks)
    for r in ranks:
        if r < 0 or r >= n:
            raise ValueError("Rank %d is out of range. Valid ranks are 0 to %d (world_size=%d)" % (r, n - 1, n))
    if len(set(ranks)) != len(ranks):
        raise ValueError("new_group: ranks must be unique, got %s" % ranks)
    gid = _state.next_gid
    _state.next_gid += 1
    if world._rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    comm = world._comm.Create_group(world._comm.Get_group().Incl(ranks), tag=gid)
    pg = ProcessGroup(comm, ranks, Backend(backend) if backend else world._backend,
                      timeout if timeout is not None else world._timeout, gid)
    _state.groups[gid] = pg
    return pg


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available."
                         "If your subgroup using a backend that does not depend on CUDA,"
                         "please pass in 'group_size' correctly.")
    world_size = get_world_size(group)
    if group_size <= 0:
        raise ValueError("The arg 'group_size' (%d) must be positive" % group_size)
    if group_size > world_size:
        raise ValueError("The arg 'group_size' (%d) must not exceed the world size (%d)" % (group_size, world_size))
    if world_size % group_size != 0:
        raise ValueError("The world size (%d) must be divisible by 'group_size=%d'" % (world_size, group_size))
    parent = get_process_group_ranks(group)
    subgroups, cur = [], None
    for i in range(world_size // group_size):
        ranks = parent[i * group_size:(i + 1) * group_size]
        sg = new_group(ranks, timeout=timeout, backend=backend)
        subgroups.append(sg)
        if _world_rank() in ranks:
            cur = sg
    return cur, subgroups


# ---------------------------------------------------------------- argument checks

_INT_NAMES = {"torch.bool": "Bool", "torch.uint8": "Byte", "torch.int8": "Char", "torch.int16": "Short",
              "torch.int32": "Int", "torch.int64": "Long"}


def _check_tensor(t, name="tensor"):
    if not isinstance(t, cthtorch.Tensor):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type torch.Tensor\n"
                        "             but got %s instead." % (name, type(t)))
    if t.device.type != "cpu":
        raise RuntimeError("cthtorch.distributed runs on CPU tensors; got a tensor on %s" % t.device)


def _check_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, cthtorch.Tensor) for t in ts):
        raise TypeError("Invalid function argument. Expected parameter `%s` of type List[torch.Tensor]\n"
                        "             but got %s instead." % (name, type(ts)))
    for t in ts:
        _check_tensor(t, name)


def _check_same_dtype(*tensors):
    dts = [t.dtype for t in tensors]
    if any(d != dts[0] for d in dts):
        other = next(d for d in dts if d != dts[0])
        raise ValueError("Invalid usage of tensors with different dtypesFound %s and  %s" % (dts[0], other))


def _is_float(dt):
    return dt.is_floating_point


def _check_op(op, dtype):
    """The MPI op for op on dtype, or an error as torch's."""
    MPI = _mpi.mpi()
    name = op.name
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and _is_float(dtype):
        raise RuntimeError("Cannot use ReduceOp.%s with non-integral dtype" % name)
    if op == ReduceOp.AVG and not _is_float(dtype):
        raise RuntimeError("result type Float can't be cast to the desired output type %s" % _INT_NAMES[str(dtype)])
    if op in (ReduceOp.PREMUL_SUM, ReduceOp.UNUSED):
        raise RuntimeError("Cannot use ReduceOp.%s with Gloo" % name)
    if dtype is cthtorch.bool:   # C bools reduce with the logical ops, as gloo's results show
        return {"SUM": MPI.LOR, "MAX": MPI.LOR, "BOR": MPI.LOR, "PRODUCT": MPI.LAND, "MIN": MPI.LAND,
                "BAND": MPI.LAND, "BXOR": MPI.LXOR}[name]
    return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX, "BAND": MPI.BAND,
            "BOR": MPI.BOR, "BXOR": MPI.BXOR}[name]


def _half(dtype):
    return dtype in (cthtorch.float16, cthtorch.bfloat16)


class _Reducible:
    """t's values where MPI can reduce them: t itself (contiguous), a packed
    copy, or a float32 copy for float16/bfloat16. finish() writes back (after
    dividing for AVG)."""

    def __init__(self, t, op, divisor=1, load=True):
        self.t, self.op, self.divisor = t, op, divisor
        if _half(t.dtype):
            self.buf = t.detach().float() if load else cthtorch.empty(t.shape, dtype=cthtorch.float32)
            self.direct = False
        else:
            self.direct = t.is_contiguous()
            self.buf = t if self.direct else (t.detach().contiguous() if load else cthtorch.empty(t.shape, dtype=t.dtype))

    def array(self):
        return _mpi.as_array(self.buf)

    def finish(self):
        with cthtorch.no_grad():
            if self.op == ReduceOp.AVG:
                self.buf.detach().div_(self.divisor)
            if not self.direct:
                self.t.copy_(self.buf)


# ---------------------------------------------------------------- collectives

def _run(pg, name, fn, outputs, async_op):
    w = pg._submit(name, fn, outputs)
    if async_op:
        return w
    w.wait()
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    return _all_reduce(tensor, op, group, async_op)


def _all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False, after=None, outs=None, before=None,
                here=False, split=None):
    """all_reduce; before() and after() (if given) run on the thread that
    does it (the communication thread, or the caller's with here) as it
    starts, and once the result is in place, before the Work completes.
    outs: (element offset, tensor) pairs of a contiguous 1-d tensor and a SUM
    that receive the result instead (DDP's .grad for a bucket); tensor may
    then keep this rank's values (a node buffer: see NodeReducer.allreduce,
    and _node_wait_released). here (with outs, async_op): the node
    all-reduce runs on the calling thread (ProcessGroup._run_here); should
    the ranks take MPI's path instead, that goes to the communication thread
    as usual. split (with here, a node buffer, a SUM over 2 ranks): (own,
    scale) of NodeReducer.allreduce_split; this rank has copied in only the
    peer's part of its values."""
    _check_tensor(tensor)
    pg = _member(group, "all_reduce")
    if pg is None:
        return None
    op = _op_type(op)
    mop = _check_op(op, tensor.dtype)
    MPI = _mpi.mpi()
    if outs is not None and (op != ReduceOp.SUM or not tensor.is_contiguous() or tensor.dim() != 1
                             or _half(tensor.dtype)):
        raise ValueError("_all_reduce(outs=) takes a contiguous 1-d tensor and ReduceOp.SUM")
    node_path = True
    if split is not None and (not here or op != ReduceOp.SUM or not async_op or pg._size != 2):
        raise ValueError("_all_reduce(split=) takes here=True, async_op=True and ReduceOp.SUM over 2 ranks")
    if here and (outs is not None or split is not None) and async_op:
        def node(check):
            if before is not None:
                before()
            done = pg._node_allreduce(tensor.detach(), op.name, outs, check, split)
            if done and after is not None:
                after()
            return done
        w, done = pg._run_here("all_reduce", node, [tensor])
        if done or w._exc is not None:
            return w
        node_path = False   # every rank found the same (NodeReducer._agree): MPI's path on all

    def fn():
        if before is not None:
            before()
        r = _Reducible(tensor, op, pg._size)
        if not (node_path and pg._node_allreduce(r.buf.detach().view(-1), op.name, outs)):
            pg._comm.Allreduce(MPI.IN_PLACE, r.array(), op=mop)
            for o, t in outs or ():
                t.copy_(tensor.narrow(0, o, t.numel()).view(t.shape))
        r.finish()
        if after is not None:
            after()
    return _run(pg, "all_reduce", fn, [tensor], async_op)


def _group_root(pg, rank, group_rank, what, kind):
    """The group rank of a root given as a global rank (or as group_rank)."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can not specify both %s and group_%s" % (what, what))
    if group_rank is not None:
        if not 0 <= group_rank < pg._size:
            raise ValueError("Group rank %d is not part of group %s" % (group_rank, pg))
        return group_rank
    rank = 0 if rank is None else rank
    if rank not in pg._ranks:
        if pg is _state.default:
            raise RuntimeError("ProcessGroupGloo::%s: invalid root rank: %d" % (kind, rank))
        raise ValueError("Global rank %d is not part of group %s" % (rank, pg))
    return pg._ranks.index(rank)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor)
    pg = _member(group, "broadcast")
    if pg is None:
        return None
    root = _group_root(pg, src, group_src, "src", "broadcast")

    def fn():
        p = _mpi.Packed(tensor, load=pg._rank == root)
        pg._comm.Bcast(_mpi.as_bytes(p.buf), root=root)
        p.unpack()
    return _run(pg, "broadcast", fn, [tensor], async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor)
    pg = _member(group, "reduce")
    if pg is None:
        return None
    root = _group_root(pg, dst, group_dst, "dst", "reduce")
    op = _op_type(op)
    mop = _check_op(op, tensor.dtype)
    MPI = _mpi.mpi()

    def fn():
        if pg._rank == root:
            r = _Reducible(tensor, op, pg._size)
            pg._comm.Reduce(MPI.IN_PLACE, r.array(), op=mop, root=root)
            r.finish()
        else:
            r = _Reducible(tensor, op)
            pg._comm.Reduce(r.array(), None, op=mop, root=root)
    return _run(pg, "reduce", fn, [tensor], async_op)


def _shape_str(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _check_outputs_like(kind, outs, t):
    for i, o in enumerate(outs):
        if o.dtype != t.dtype:
            raise RuntimeError("ProcessGroupGloo::%s: invalid tensor type at index %d (expected %s, got %s)"
                               % (kind, i, t.dtype, o.dtype))
        if tuple(o.shape) != tuple(t.shape):
            raise RuntimeError("ProcessGroupGloo::%s: invalid tensor size at index %d (expected %s, got %s)"
                               % (kind, i, _shape_str(t.shape), _shape_str(o.shape)))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    _check_same_dtype(*tensor_list, tensor)
    pg = _member(group, "all_gather")
    if pg is None:
        return None
    if len(tensor_list) != pg._size:
        raise RuntimeError("ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length %d, "
                           "got %d)" % (pg._size, len(tensor_list)))
    _check_outputs_like("allgather", tensor_list, tensor)

    def fn():
        src = tensor.detach().contiguous()
        out = cthtorch.empty((pg._size,) + tuple(tensor.shape), dtype=tensor.dtype)
        pg._comm.Allgather(_mpi.as_bytes(src), _mpi.as_bytes(out))
        with cthtorch.no_grad():
            for i, o in enumerate(tensor_list):
                o.copy_(out[i])
    return _run(pg, "all_gather", fn, [tensor_list], async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _member(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected %s, got %s)"
                           % (input_tensor.dtype, output_tensor.dtype))
    if output_tensor.numel() != pg._size * input_tensor.numel():
        got = -(-output_tensor.numel() // pg._size)
        raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected %s, got %s)"
                           % (_shape_str(input_tensor.shape), _shape_str((got,) + tuple(input_tensor.shape[1:]))))

    def fn():
        src = input_tensor.detach().contiguous()
        p = _mpi.Packed(output_tensor, load=False)
        pg._comm.Allgather(_mpi.as_bytes(src), _mpi.as_bytes(p.buf))
        p.unpack()
    return _run(pg, "all_gather_into_tensor", fn, [output_tensor], async_op)


def _rooted_list(kind, tensor, tensors, root_rank, root_group_rank, group, role):
    """Checks shared by gather and scatter: the list (of the root's outputs or
    inputs) is given on the root only, one tensor per rank, each like
    `tensor`. Returns (group, root's group rank, list), or None for a rank
    outside the group."""
    listname, where, rootname = (("gather_list", "destination", "dst") if kind == "gather" else
                                 ("scatter_list", "source", "src"))
    _check_tensor(tensor)
    if tensors:
        _check_list(tensors, listname)
        _check_same_dtype(tensor, *tensors)
    else:
        tensors = []
    pg = _member(group, kind)
    if pg is None:
        return None
    root = _group_root(pg, root_rank, root_group_rank, rootname, kind)
    if pg._rank == root:
        if not tensors:
            raise ValueError("Argument ``%s`` must be specified on %s rank." % (listname, where))
        if len(tensors) != pg._size:
            raise RuntimeError("ProcessGroupGloo::%s: Incorrect %s list size %d. %s list size should be %d, same as "
                               "size of the process group." % (kind, role, len(tensors), role.capitalize(), pg._size))
        _check_outputs_like(kind, tensors, tensor)
    elif tensors:
        raise ValueError("Argument ``%s`` must NOT be specified on non-%s ranks." % (listname, where))
    return pg, root, tensors


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    checked = _rooted_list("gather", tensor, gather_list, dst, group_dst, group, "output")
    if checked is None:
        return None
    pg, root, gather_list = checked

    def fn():
        src = tensor.detach().contiguous()
        if pg._rank == root:
            out = cthtorch.empty((pg._size,) + tuple(tensor.shape), dtype=tensor.dtype)
            pg._comm.Gather(_mpi.as_bytes(src), _mpi.as_bytes(out), root=root)
            with cthtorch.no_grad():
                for i, o in enumerate(gather_list):
                    o.copy_(out[i])
        else:
            pg._comm.Gather(_mpi.as_bytes(src), None, root=root)
    return _run(pg, "gather", fn, [gather_list], async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    checked = _rooted_list("scatter", tensor, scatter_list, src, group_src, group, "input")
    if checked is None:
        return None
    pg, root, scatter_list = checked

    def fn():
        p = _mpi.Packed(tensor, load=False)
        if pg._rank == root:
            inp = cthtorch.stack([s.detach() for s in scatter_list])
            pg._comm.Scatter(_mpi.as_bytes(inp), _mpi.as_bytes(p.buf), root=root)
        else:
            pg._comm.Scatter(None, _mpi.as_bytes(p.buf), root=root)
        p.unpack()
    return _run(pg, "scatter", fn, [tensor], async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    _check_same_dtype(output, *input_list)
    pg = _member(group, "reduce_scatter")
    if pg is None:
        return None
    if len(input_list) != pg._size:
        raise RuntimeError("ProcessGroupGloo::reduce_scatter: invalid input tensor list at index 0 (expected length "
                           "%d, got %d)" % (pg._size, len(input_list)))
    _check_outputs_like("reduce_scatter", input_list, output)
    op = _op_type(op)
    mop = _check_op(op, output.dtype)

    def fn():
        inp = _Reducible(cthtorch.stack([t.detach() for t in input_list]), op)
        out = _Reducible(output, op, pg._size, load=False)
        pg._comm.Reduce_scatter_block(inp.array(), out.array(), op=mop)
        out.finish()
    return _run(pg, "reduce_scatter", fn, [output], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _check_same_dtype(output, input)
    pg = _member(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if output.numel() * pg._size != input.numel():
        raise RuntimeError("ProcessGroupGloo::reduce_scatter_tensor: output size times world size (%d) does not "
                           "match the input size (%d)" % (output.numel() * pg._size, input.numel()))
    op = _op_type(op)
    mop = _check_op(op, output.dtype)

    def fn():
        inp = _Reducible(input, op)
        out = _Reducible(output, op, pg._size, load=False)
        pg._comm.Reduce_scatter_block(inp.array(), out.array(), op=mop)
        out.finish()
    return _run(pg, "reduce_scatter_tensor", fn, [output], async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _check_same_dtype(output, input)
    pg = _member(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg._size

    def splits(sizes, t, what):
        rows = t.shape[0] if t.dim() > 0 else 1
        if not sizes:
            if rows % n != 0:
                raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
            return [rows // n] * n
        sizes = [int(s) for s in sizes]
        if len(sizes) != n:
            raise RuntimeError("Number of tensor splits not equal to group size")
        if sum(sizes) != rows:
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        return sizes
    osz, isz = splits(output_split_sizes, output, "output"), splits(input_split_sizes, input, "input")
    row = (input.numel() // input.shape[0] if input.dim() > 0 and input.shape[0] else 1) * input.element_size()
    orow = (output.numel() // output.shape[0] if output.dim() > 0 and output.shape[0] else 1) * output.element_size()

    def fn():
        src = input.detach().contiguous()
        p = _mpi.Packed(output, load=False)
        sc = [s * row for s in isz]
        rc = [s * orow for s in osz]
        sd = [sum(sc[:i]) for i in range(n)]
        rd = [sum(rc[:i]) for i in range(n)]
        MPI = _mpi.mpi()
        pg._comm.Alltoallv([_mpi.as_bytes(src), (sc, sd), MPI.BYTE], [_mpi.as_bytes(p.buf), (rc, rd), MPI.BYTE])
        p.unpack()
    return _run(pg, "all_to_all_single", fn, [output], async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    _check_same_dtype(*output_tensor_list, *input_tensor_list)
    pg = _member(group, "all_to_all")
    if pg is None:
        return None
    n = pg._size
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")

    def fn():
        MPI = _mpi.mpi()
        src = cthtorch.cat([t.detach().reshape(-1) for t in input_tensor_list])
        out = cthtorch.empty(sum(t.numel() for t in output_tensor_list), dtype=src.dtype)
        es = src.element_size()
        sc = [t.numel() * es for t in input_tensor_list]
        rc = [t.numel() * es for t in output_tensor_list]
        sd = [sum(sc[:i]) for i in range(n)]
        rd = [sum(rc[:i]) for i in range(n)]
        pg._comm.Alltoallv([_mpi.as_bytes(src), (sc, sd), MPI.BYTE], [_mpi.as_bytes(out), (rc, rd), MPI.BYTE])
        off = 0
        with cthtorch.no_grad():
            for t in output_tensor_list:
                t.copy_(out[off:off + t.numel()].reshape(t.shape))
                off += t.numel()
    return _run(pg, "all_to_all", fn, [output_tensor_list], async_op)


def barrier(group=None, async_op=False, device_ids=None):
    pg = _member(group, "barrier")
    if pg is None:
        return None
    return _run(pg, "barrier", lambda: pg._comm.Barrier(), [], async_op)


_MONITORED_TAG = 32001


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """Rank 0 of the group waits (up to timeout) for every other rank to
    check in, then releases them; ranks that do not arrive are named."""
    pg = _member(group, "monitored_barrier")
    if pg is None:
        return None
    _state.check_healthy()
    seconds = _seconds(timeout if timeout is not None else pg._timeout)
    deadline = time.monotonic() + seconds
    MPI = _mpi.mpi()
    token = bytearray(1)

    def poll(reqs):
        while True:
            left = [i for i, r in reqs.items() if not r.Test()]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.001)
    if pg._rank == 0:
        reqs = {r: pg._comm.Irecv([bytearray(1), MPI.BYTE], source=r, tag=_MONITORED_TAG) for r in range(1, pg._size)}
        missing = poll(reqs)
        if missing:
            for r in missing:
                reqs[r].Cancel()
            ms = round(seconds * 1000)
            if wait_all_ranks:
                raise DistBackendError("[Rank 0]: Ranks %s failed to pass monitoredBarrier in %d ms"
                                       % (", ".join(str(pg._ranks[r]) for r in missing), ms))
            raise DistBackendError("[Rank 0]: Rank %d failed to pass monitoredBarrier in %d ms"
                                   % (pg._ranks[missing[0]], ms))
        for r in range(1, pg._size):
            pg._comm.Send([token, MPI.BYTE], dest=r, tag=_MONITORED_TAG)
    else:
        pg._comm.Send([token, MPI.BYTE], dest=0, tag=_MONITORED_TAG)
        req = pg._comm.Irecv([bytearray(1), MPI.BYTE], source=0, tag=_MONITORED_TAG)
        if poll({0: req}):
            req.Cancel()
            raise DistBackendError("[Rank %d]: monitoredBarrier timed out after %d ms waiting for rank 0"
                                   % (pg._ranks[pg._rank], round(seconds * 1000)))


# ---------------------------------------------------------------- point to point

def _peer(pg, rank, group_rank, what):
    if rank is not None and group_rank is not None:
        raise ValueError("Can not specify both %s and group_%s" % (what, what))
    if group_rank is not None:
        return group_rank
    if rank is None:
        raise ValueError("Must specify either %s or group_%s" % (what, what))
    if rank not in pg._ranks:
        raise ValueError("Global rank %d is not part of group %s" % (rank, pg))
    return pg._ranks.index(rank)


def _post_send(tensor, dst, group, tag, group_dst, name):
    _check_tensor(tensor)
    pg = _member(group, name)
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    if peer == pg._rank:
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    _state.check_healthy()
    src = tensor.detach().contiguous()
    req = pg._comm.Isend(_mpi.as_bytes(src), dest=peer, tag=tag)
    return pg._post(name, req, None, [tensor, src], peer)


def _post_recv(tensor, src, group, tag, group_src, name):
    _check_tensor(tensor)
    pg = _member(group, name)
    if pg is None:
        return None
    MPI = _mpi.mpi()
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "src")
        if peer == pg._rank:
            raise ValueError("Invalid source rank: source rank should not be the same as the rank of the current "
                             "process.")
    _state.check_healthy()
    p = _mpi.Packed(tensor, load=False)
    req = pg._comm.Irecv(_mpi.as_bytes(p.buf), source=peer, tag=tag)
    w = pg._post(name, req, p.unpack, [tensor], peer)
    w._status = MPI.Status()
    return w


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    return _post_send(tensor, dst, group, tag, group_dst, "isend")


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    return _post_recv(tensor, src, group, tag, group_src, "irecv")


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    w = _post_send(tensor, dst, group, tag, group_dst, "send")
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    w = _post_recv(tensor, src, group, tag, group_src, "recv")
    if w is None:
        return -1
    w.wait()
    return w._source


class P2POp:
    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _check_tensor(tensor)
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer

    def __repr__(self):
        return "P2POp(op=%s, tensor=%s, peer=%s, tag=%d)" % (self.op.__name__, tuple(self.tensor.shape), self.peer,
                                                            self.tag)


def batch_isend_irecv(p2p_op_list):
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            w = isend(p.tensor, p.peer, p.group, p.tag, p.group_peer)
        else:
            w = irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer)
        works.append(w)
    return works


# ---------------------------------------------------------------- objects

def _obj_run(pg, name, fn):
    box = []
    _run(pg, name, lambda: box.append(fn()), [], False)
    return box[0]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    pg = _member(group, "broadcast_object_list")
    if pg is None:
        return
    root = _group_root(pg, src, group_src, "src", "broadcast")
    mine = list(object_list) if pg._rank == root else None
    got = _obj_run(pg, "broadcast_object_list", lambda: pg._comm.bcast(mine, root=root))
    if pg._rank != root:
        for i, o in enumerate(got):
            object_list[i] = o


def all_gather_object(object_list, obj, group=None):
    pg = _member(group, "all_gather_object")
    if pg is None:
        return
    got = _obj_run(pg, "all_gather_object", lambda: pg._comm.allgather(obj))
    for i, o in enumerate(got):
        object_list[i] = o


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    pg = _member(group, "gather_object")
    if pg is None:
        return
    root = _group_root(pg, dst, group_dst, "dst", "gather")
    if pg._rank == root and not object_gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if pg._rank != root and object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    got = _obj_run(pg, "gather_object", lambda: pg._comm.gather(obj, root=root))
    if pg._rank == root:
        for i, o in enumerate(got):
            object_gather_list[i] = o


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    pg = _member(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _group_root(pg, src, group_src, "src", "scatter")
    inp = list(scatter_object_input_list) if pg._rank == root else None
    if pg._rank == root and (inp is None or len(inp) != pg._size):
        raise RuntimeError("ProcessGroupGloo::scatter: Incorrect input list size %d. Input list size should be %d, "
                           "same as size of the process group." % (len(inp or []), pg._size))
    scatter_object_output_list[0] = _obj_run(pg, "scatter_object_list", lambda: pg._comm.scatter(inp, root=root))
