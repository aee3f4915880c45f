"""torch.distributed.rpc on the MPI engine: init_rpc, rpc_sync, rpc_async,
remote, RRef (to_here, owner, local_value), shutdown.

Every worker is an MPI rank (started by the launcher like any process group)
and talks over its own duplicate of MPI_COMM_WORLD, so RPC traffic never
meets the collectives. Messages are pickled tuples sent with mpi4py (the GIL
is released while MPI waits). One listener thread per worker receives them;
calls run on a thread pool, so a function may itself make RPCs (nested calls
back to the caller do not deadlock). A remote() result stays with its owner
until shutdown; an RRef names it by (owner id, number) and is passed to other
workers by value. shutdown() waits until every worker has called it, so no
worker leaves while another still sends it work.

Inside a torch.distributed.autograd context every message carries the
context id and records its tensors that require grad (see
cthtorch/distributed/autograd): a custom pickler sends them detached and
the receiver rebuilds them as leaves that route their gradients back.

Timeouts are torch's: rpc_sync/rpc_async/remote(timeout=) in seconds, -1
for the agent's rpc_timeout (TensorPipeRpcBackendOptions, 60 s by default),
0 for none; an expired call's Future fails with torch's RuntimeError text
and a late reply is dropped. One reaper thread watches the deadlines."""
import heapq
import io
import itertools
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from cthtorch.futures import Future

__all__ = ["init_rpc", "rpc_sync", "rpc_async", "remote", "shutdown", "get_worker_info", "RRef", "WorkerInfo",
           "is_available", "BackendType", "TensorPipeRpcBackendOptions", "RpcBackendOptions"]

_TAG = 7
_BLOCKING_LISTENER = os.environ.get("CTHTORCH_RPC_BLOCKING_LISTENER") == "1"   # the old listener, for benchmarks
_NOT_INITIALIZED = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."


_recv_state = threading.local()   # .at = (context, sender id, send number) while a message unpickles


def _recv_leaf(tensor, position):
    """A tensor that required grad on its sender: a leaf here whose gradient goes back."""
    ctx, sender, number = _recv_state.at
    tensor.requires_grad_(True)
    ctx._record_recv(tensor, sender, number, position)
    return tensor


class _GradPickler(pickle.Pickler):
    """Pickles a message in an autograd context: tensors requiring grad go detached, remembered in .sent."""

    def __init__(self, buf):
        super().__init__(buf)
        self.sent = []

    def reducer_override(self, obj):
        import cthtorch
        if isinstance(obj, cthtorch.Tensor) and obj.requires_grad:
            self.sent.append(obj)
            return _recv_leaf, (obj.detach(), len(self.sent) - 1)
        return NotImplemented


def is_available():
    from cthtorch.distributed import _mpi
    return _mpi.available()


class BackendType:
    TENSORPIPE = "TENSORPIPE"


class RpcBackendOptions:
    def __init__(self, rpc_timeout=60.0, init_method="env://"):
        self.rpc_timeout, self.init_method = rpc_timeout, init_method


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    """Accepted for compatibility; MPI carries the messages."""

    def __init__(self, *, num_worker_threads=16, rpc_timeout=60.0, init_method="env://", device_maps=None,
                 devices=None, _transports=None, _channels=None):
        super().__init__(rpc_timeout, init_method)
        self.num_worker_threads = num_worker_threads


class WorkerInfo:
    def __init__(self, name, id):
        self.name, self.id = name, id

    def __eq__(self, other):
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self):
        return hash((self.name, self.id))

    def __repr__(self):
        return "WorkerInfo(id=%d, name=%s)" % (self.id, self.name)


def _timeout_error(seconds):
    return RuntimeError("RPC ran for more than set timeout (%d ms) and will now be marked with an error"
                        % round(seconds * 1000))


class _Agent:
    def __init__(self, name, rank, world_size, threads, rpc_timeout=60.0):
        from cthtorch.distributed import _mpi
        MPI = _mpi.mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        if self.comm.Get_size() != world_size or self.comm.Get_rank() != rank:
            raise RuntimeError("init_rpc: rank %d of %d does not match the MPI job (rank %d of %d)"
                               % (rank, world_size, self.comm.Get_rank(), self.comm.Get_size()))
        names = self.comm.allgather(name)
        if len(set(names)) != len(names):
            raise RuntimeError("RPC worker names must be unique, got %s" % names)
        self.workers = [WorkerInfo(n, i) for i, n in enumerate(names)]
        self.me = self.workers[rank]
        self.pending, self.values = {}, {}   # request id -> Future; rref number -> Future of the value
        self.ids = itertools.count()
        self.lock = threading.Lock()
        self.send_lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rpc")
        self.rpc_timeout = float(rpc_timeout)
        self.deadlines = []   # heap of (monotonic deadline, request id, timeout in s)
        self.deadline_cond = threading.Condition(self.lock)
        self.stopping = False
        self.failed = None       # a peer's failure (RuntimeError) once it announced one
        self.announced = False
        self.arrived = set()     # peers that have called shutdown (their "arrived" message came)
        self.late_barrier = None  # shutdown's barrier, when its timeout passed first
        self.reaper = None    # started with the first call that has a deadline
        self.listener = threading.Thread(target=self._listen, name="rpc-listener", daemon=True)
        self.listener.start()

    def worker(self, to):
        if isinstance(to, WorkerInfo):
            return to
        if isinstance(to, int):
            return self.workers[to]
        for w in self.workers:
            if w.name == to:
                return w
        raise RuntimeError("Unknown destination worker %s" % to)

    def encode(self, dest, msg):
        from cthtorch.distributed import autograd as dist_autograd
        cid = dist_autograd._current_context_id()
        if cid is None:
            return pickle.dumps((None, self.me.id, None, msg))
        ctx = dist_autograd._context_for_message(cid)
        buf = io.BytesIO()
        pickler = _GradPickler(buf)
        pickler.dump(msg)
        number = ctx._record_send(pickler.sent, dest) if pickler.sent else None
        ctx._workers.add(dest)
        return pickle.dumps((cid, self.me.id, number, buf.getvalue()))

    def decode(self, data):
        """(message, context id or None); rebuilds the tensors a context recorded as recv leaves."""
        cid, sender, number, payload = pickle.loads(data)
        if cid is None:
            return payload, None
        from cthtorch.distributed import autograd as dist_autograd
        ctx = dist_autograd._context_for_message(cid)
        with ctx._lock:
            ctx._workers.add(sender)
        _recv_state.at = (ctx, sender, number)
        try:
            return pickle.loads(payload), cid
        finally:
            _recv_state.at = None

    def send(self, dest, msg):
        data = self.encode(dest, msg)
        with self.send_lock:   # one message at a time from this worker keeps each send whole
            self.comm.send(data, dest=dest, tag=_TAG)

    def request(self, dest, kind, *payload, timeout=-1.0):
        fut = Future()
        rid = next(self.ids)
        timeout = self.rpc_timeout if timeout is None or timeout < 0 else float(timeout)
        with self.lock:
            self.pending[rid] = fut
            if timeout > 0:
                heapq.heappush(self.deadlines, (time.monotonic() + timeout, rid, timeout))
                if self.reaper is None:
                    self.reaper = threading.Thread(target=self._reap, name="rpc-timeouts", daemon=True)
                    self.reaper.start()
                self.deadline_cond.notify()
        self.send(dest, (kind, rid, self.me.id) + payload)
        return fut

    def _reap(self):
        """Fails the calls whose deadline passed (their replies, if any come, are dropped)."""
        with self.lock:
            while not self.stopping:
                now = time.monotonic()
                expired = []
                while self.deadlines and self.deadlines[0][0] <= now:
                    _, rid, timeout = heapq.heappop(self.deadlines)
                    fut = self.pending.pop(rid, None)
                    if fut is not None:
                        expired.append((fut, timeout))
                if expired:
                    self.lock.release()
                    try:
                        for fut, timeout in expired:
                            fut.set_exception(_timeout_error(timeout))
                    finally:
                        self.lock.acquire()
                    continue
                self.deadline_cond.wait(self.deadlines[0][0] - now if self.deadlines else None)

    def _next_message(self):
        """The next message's bytes. MPICH's blocking receive spins in its
        progress engine (with MPI_THREAD_MULTIPLE it also contends for MPI's
        lock with the sending threads), taking a core from the workers and
        the caller; this thread instead probes without blocking and sleeps,
        briefly at first (a reply usually follows a request within
        microseconds), then up to 1 ms while the worker is idle."""
        if _BLOCKING_LISTENER:
            return self.comm.recv(source=self.MPI.ANY_SOURCE, tag=_TAG)
        pause = 0.0
        while True:
            msg = self.comm.improbe(source=self.MPI.ANY_SOURCE, tag=_TAG)
            if msg is not None:
                return msg.recv()
            if pause < 0.00002:
                pause += 0.000002
                time.sleep(0)
            else:
                time.sleep(pause)
                pause = min(pause * 1.5, 0.001)

    def _listen(self):
        while True:
            data = self._next_message()
            msg, cid = self.decode(data)
            kind = msg[0]
            if kind == "stop":
                return
            if kind == "arrived":
                with self.lock:
                    self.arrived.add(msg[1])
                continue
            if kind == "failed":   # a peer is ending with an error: nothing it owes us will come
                self._peer_failed(msg[1], msg[2])
                continue
            if kind == "reply":
                _, rid, ok, value = msg
                with self.lock:
                    fut = self.pending.pop(rid, None)
                if fut is None:
                    continue   # it timed out
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(value)
            else:
                self.pool.submit(self._serve, msg, cid)

    def _serve(self, msg, cid):
        from cthtorch.distributed import autograd as dist_autograd
        dist_autograd._tls.context_id = cid   # nested calls and the reply belong to the caller's context
        try:
            self._serve_in_context(msg)
        finally:
            dist_autograd._tls.context_id = None

    def _serve_in_context(self, msg):
        kind, rid, src = msg[:3]
        try:
            if kind == "call":
                fn, args, kwargs = msg[3:]
                value = _run(fn, args, kwargs)
            elif kind == "remote":
                number, fn, args, kwargs = msg[3:]
                self.owned(number).set_result(_run(fn, args, kwargs))
                value = None
            elif kind == "fetch":
                value = self.owned(msg[3]).wait()
            else:
                raise RuntimeError("unknown RPC message %r" % kind)
            reply = ("reply", rid, True, value)
        except Exception as e:
            if kind == "remote":
                fut = self.owned(msg[3])
                if not fut.done():
                    fut.set_exception(e)
            reply = ("reply", rid, False, e)
        try:
            self.send(src, reply)
        except Exception as e:   # the value would not pickle: say so to the caller
            self.send(src, ("reply", rid, False, RuntimeError("RPC result could not be sent: %s" % e)))

    def owned(self, number):
        """The Future of this worker's value number (made on first mention)."""
        with self.lock:
            fut = self.values.get(number)
            if fut is None:
                fut = self.values[number] = Future()
            return fut

    def _peer_failed(self, rank, why):
        err = RuntimeError("RPC worker %s (rank %d) failed: %s" % (self.workers[rank].name, rank, why))
        with self.lock:
            if self.failed is None:
                self.failed = err
            pending, self.pending = list(self.pending.values()), {}
        for fut in pending:
            fut.set_exception(err)

    def announce_failure(self, exc):
        """This worker is ending with exc: tell every peer, so none waits for it."""
        with self.lock:
            if self.stopping or self.announced:
                return
            self.announced = True
        data = pickle.dumps((None, self.me.id, None, ("failed", self.me.id, "%s: %s" % (type(exc).__name__, exc))))
        reqs = []
        for w in self.workers:
            if w.id != self.me.id:
                try:
                    reqs.append(self.comm.isend(data, dest=w.id, tag=_TAG))
                except Exception:
                    pass
        deadline = time.monotonic() + 2.0   # small messages leave at once; a stuck peer must not hold the exit
        while reqs and time.monotonic() < deadline:
            reqs = [r for r in reqs if not r.Test()]
            time.sleep(0.001)

    def stop(self, timeout=0):
        """Waits until every worker has called shutdown (stopped sending
        requests), then stops this worker. A peer that failed instead makes
        this an error rather than a wait that never ends; so does timeout
        (seconds, 0 for none) passing first, with torch's text naming the
        workers that had not arrived (each tells the others it has, before
        the barrier)."""
        self.announce_arrival()
        req = self.comm.Ibarrier()
        deadline = time.monotonic() + timeout if timeout and timeout > 0 else None
        pause = 0.0001
        while not req.Test():
            if self.failed is not None:
                raise RuntimeError("rpc.shutdown(): %s" % self.failed)
            if deadline is not None and time.monotonic() > deadline:
                self.late_barrier = req   # completed (or given up) at exit: _finalize_mpi
                with self.lock:
                    missing = sorted(w.name for w in self.workers if w.id != self.me.id and w.id not in self.arrived)
                raise RuntimeError("Followers %s timed out in _all_gather after %.2f seconds. The first exception "
                                   "is %s" % (missing, timeout, _timeout_error(timeout)))
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        self._stop_threads()
        self.comm.Free()

    def announce_arrival(self):
        for w in self.workers:
            if w.id != self.me.id:
                self.send(w.id, ("arrived", self.me.id))

    def _stop_threads(self):
        # every peer sent "arrived" before entering the barrier: receive them all
        # before the listener stops, so none is left unmatched in MPI
        while True:
            with self.lock:
                if len(self.arrived) == len(self.workers) - 1:
                    break
            time.sleep(0.0005)
        self.send(self.me.id, ("stop",))
        self.listener.join()
        with self.lock:
            self.stopping = True
            self.deadline_cond.notify()
        self.pool.shutdown(wait=True)

    def finish_late_barrier(self, limit):
        """After a shutdown that timed out: whether the peers reached it within
        limit seconds (then this worker stops cleanly and may finalize MPI)."""
        end = time.monotonic() + limit
        while not self.late_barrier.Test():
            if self.failed is not None or time.monotonic() > end:
                return False
            time.sleep(0.005)
        self._stop_threads()
        return True


_agent = None
_hook_installed = False


def _mark_failed(exc):
    """This process is ending with exc (an uncaught exception, a spawn child's error)."""
    agent = _agent
    if agent is not None:
        agent.announce_failure(exc)


def _install_excepthook():
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    import sys
    prev = sys.excepthook

    def hook(tp, value, tb):
        if not issubclass(tp, KeyboardInterrupt):
            _mark_failed(value)
        prev(tp, value, tb)
    sys.excepthook = hook


def _current():
    if _agent is None:
        raise RuntimeError(_NOT_INITIALIZED)
    return _agent


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None):
    global _agent
    if _agent is not None:
        raise RuntimeError("RPC is already initialized")
    rank = int(os.environ["RANK"]) if rank == -1 else rank
    world_size = int(os.environ["WORLD_SIZE"]) if world_size is None else world_size
    threads = getattr(rpc_backend_options, "num_worker_threads", 16)
    _agent = _Agent(name, rank, world_size, threads, getattr(rpc_backend_options, "rpc_timeout", 60.0))
    _install_excepthook()
    from cthtorch.distributed import autograd as dist_autograd
    dist_autograd._init(rank)


def shutdown(graceful=True, timeout=0):
    """graceful: wait (up to timeout seconds; 0 waits for ever) until every
    worker has called shutdown, as torch's does; on expiry torch's
    RuntimeError, and RPC is shut down here all the same. Not graceful:
    this worker's RPC API is shut down at once (torch's local shutdown); it
    still answers its peers' calls until exit, where it waits (a while) for
    their shutdown."""
    global _agent, _late_agent
    agent = _current()
    if not graceful:   # this worker goes on serving its peers until exit, where it waits for them
        _agent = None
        _late_agent = agent
        agent.announce_arrival()
        agent.late_barrier = agent.comm.Ibarrier()   # the peers' own shutdown completes it
        _register_finalize()
        return
    try:
        agent.stop(timeout)   # RPC stays up meanwhile: serving a peer's call may need it
    except RuntimeError:
        if agent.late_barrier is None:
            raise   # a peer failed: no MPI_Finalize at exit (it would wait for that peer)
        _agent = None   # timed out: shut down here all the same, as torch's does
        _late_agent = agent
        _register_finalize()
        raise
    _agent = None
    _register_finalize()


def _register_finalize():
    global _finalize_registered
    if not _finalize_registered:
        _finalize_registered = True
        import atexit
        atexit.register(_finalize_mpi)


_finalize_registered = False
_late_agent = None     # an agent whose shutdown did not see every worker arrive
_LATE_LIMIT = 30.0     # seconds at exit for the peers to reach it before MPI is left unfinalized


def _finalize_mpi():
    """After a clean shutdown, MPI_Finalize at exit, as every process of the
    job must when any does: in ddp_rpc the trainers' process group finalizes
    at exit (distributed_c10d._exit_hook, which then does it), and would wait
    for the others forever. A process that failed leaves without it, and so
    does one whose shutdown timed out if the peers never arrive (MPI_Finalize
    would wait for them)."""
    import sys
    if _late_agent is not None and not _late_agent.finish_late_barrier(_LATE_LIMIT):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    c10d = sys.modules.get("cthtorch.distributed.distributed_c10d")
    if c10d is not None and c10d._state._hooks_installed:
        return   # its exit hook finalizes after the group's exit barrier
    from cthtorch.distributed import _mpi
    MPI = _mpi._MPI
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.Finalize()


def get_worker_info(worker_name=None):
    agent = _current()
    return agent.me if worker_name is None else agent.worker(worker_name)


def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0):
    agent = _current()
    return agent.request(agent.worker(to).id, "call", func, tuple(args or ()), dict(kwargs or {}), timeout=timeout)


def rpc_sync(to, func, args=None, kwargs=None, timeout=-1.0):
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(to, func, args=None, kwargs=None, timeout=-1.0):
    """Runs func on `to` and leaves the result there: an RRef to it."""
    agent = _current()
    owner = agent.worker(to)
    with agent.lock:
        number = ("%d:%d" % (agent.me.id, next(agent.ids)))
    rref = RRef._of(owner, number)
    if owner.id == agent.me.id:
        fut = agent.owned(number)
        try:
            fut.set_result(func(*(args or ()), **(kwargs or {})))
        except Exception as e:
            fut.set_exception(e)
    else:
        rref._created = agent.request(owner.id, "remote", number, func, tuple(args or ()), dict(kwargs or {}),
                                      timeout=timeout)
    return rref


class RRef:
    """A reference to a value that lives on its owner worker."""

    def __init__(self, value, type_hint=None):
        agent = _current()
        with agent.lock:
            number = "%d:%d" % (agent.me.id, next(agent.ids))
        self._owner, self._number, self._created = agent.me, number, None
        agent.owned(number).set_result(value)

    @classmethod
    def _of(cls, owner, number):
        r = cls.__new__(cls)
        r._owner, r._number, r._created = owner, number, None
        return r

    def owner(self):
        return self._owner

    def owner_name(self):
        return self._owner.name

    def is_owner(self):
        return self._owner.id == _current().me.id

    def confirmed_by_owner(self):
        return self._created is None or self._created.done()

    def local_value(self):
        if not self.is_owner():
            raise RuntimeError("Call it on owner %s: RRef.local_value() only works on the owner" % self._owner)
        return _current().owned(self._number).wait()

    def to_here(self, timeout=-1.0):
        agent = _current()
        if self.is_owner():
            return agent.owned(self._number).wait()
        return agent.request(self._owner.id, "fetch", self._number, timeout=timeout).wait()

    def rpc_sync(self, timeout=-1.0):
        return _RRefProxy(self, rpc_sync)

    def rpc_async(self, timeout=-1.0):
        return _RRefProxy(self, rpc_async)

    def remote(self, timeout=-1.0):
        return _RRefProxy(self, remote)

    def backward(self, dist_autograd_ctx_id=-1, retain_graph=False):
        """Backward from the owner's value: local autograd (id -1) or that distributed context's pass."""
        if self.is_owner():
            _rref_backward(self, dist_autograd_ctx_id, retain_graph)
        else:
            rpc_sync(self._owner, _rref_backward, args=(self, dist_autograd_ctx_id, retain_graph))

    def __reduce__(self):
        return (RRef._of, (self._owner, self._number))

    def __repr__(self):
        return "RRef(owner=%s, id=%s)" % (self._owner, self._number)


def _rref_backward(rref, context_id, retain_graph):
    value = rref.local_value()
    if context_id == -1:
        value.backward(retain_graph=retain_graph)
    else:
        from cthtorch.distributed import autograd as dist_autograd
        dist_autograd.backward(context_id, [value], retain_graph)


def _run(fn, args, kwargs):
    """Calls fn; an @rpc.functions.async_execution function's Future is waited for here."""
    value = fn(*args, **kwargs)
    if getattr(fn, "_wrapped_async_rpc_function", False) and isinstance(value, Future):
        value = value.wait()
    return value


def _call_method(method_name, rref, *args, **kwargs):
    return getattr(rref.local_value(), method_name)(*args, **kwargs)


class _RRefProxy:
    """rref.rpc_sync().method(*args): the method runs on the owner."""

    def __init__(self, rref, how):
        self._rref, self._how = rref, how

    def __getattr__(self, name):
        def call(*args, **kwargs):
            return self._how(self._rref.owner(), _call_method, args=(name, self._rref) + args, kwargs=kwargs)
        return call


from cthtorch.distributed.rpc import functions  # noqa: E402,F401 -- rpc.functions.async_execution, as in torch
