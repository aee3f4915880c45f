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

Not implemented: rpc timeouts other than blocking."""
import io
import itertools
import os
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

from cthtorch.futures import Future

__all__ = ["init_rpc", "rpc_sync", "rpc_async", "remote", "shutdown", "get_worker_info", "RRef", "WorkerInfo",
           "is_available", "BackendType", "TensorPipeRpcBackendOptions", "RpcBackendOptions"]

_TAG = 7
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


class _Agent:
    def __init__(self, name, rank, world_size, threads):
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

    def request(self, dest, kind, *payload):
        fut = Future()
        rid = next(self.ids)
        with self.lock:
            self.pending[rid] = fut
        self.send(dest, (kind, rid, self.me.id) + payload)
        return fut

    def _listen(self):
        while True:
            data = self.comm.recv(source=self.MPI.ANY_SOURCE, tag=_TAG)
            msg, cid = self.decode(data)
            kind = msg[0]
            if kind == "stop":
                return
            if kind == "reply":
                _, rid, ok, value = msg
                with self.lock:
                    fut = self.pending.pop(rid)
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

    def stop(self):
        self.comm.Barrier()   # every worker has stopped sending requests
        self.send(self.me.id, ("stop",))
        self.listener.join()
        self.pool.shutdown(wait=True)
        self.comm.Free()


_agent = None


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
    _agent = _Agent(name, rank, world_size, threads)
    from cthtorch.distributed import autograd as dist_autograd
    dist_autograd._init(rank)


def shutdown(graceful=True, timeout=0):
    global _agent
    agent = _current()
    agent.stop()
    _agent = None


def get_worker_info(worker_name=None):
    agent = _current()
    return agent.me if worker_name is None else agent.worker(worker_name)


def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0):
    agent = _current()
    return agent.request(agent.worker(to).id, "call", func, tuple(args or ()), dict(kwargs or {}))


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
        rref._created = agent.request(owner.id, "remote", number, func, tuple(args or ()), dict(kwargs or {}))
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
        return agent.request(self._owner.id, "fetch", self._number).wait()

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
