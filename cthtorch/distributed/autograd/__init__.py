"""torch.distributed.autograd: backward passes that cross RPC calls, in
torch's FAST mode ("Distributed Autograd Design").

Inside `with context() as cid`, every RPC message records its tensors that
require grad: the sender keeps them as a "send" (numbered per context) and
the receiver rebuilds each as a leaf that remembers (sender, send number,
position), its "recv". backward(cid, roots) runs this worker's part of the
graph with the C engine (autograd.grad from the roots to the leaves they
reach): gradients of ordinary leaves are added to the context, never to
.grad; gradients of recv leaves go back to the worker that sent them, which
runs its own part from that send in the same way, for any number of hops.
Each hop waits for the hops it starts, so backward returns when the whole
pass is done. A send may get gradients more than once (one per consumer);
its graph is kept (retain_graph) until the context ends, and linearity makes
the sum right. Leaving the outermost `with` releases the context on every
worker it reached."""
import itertools
import threading

__all__ = ["context", "backward", "get_gradients", "is_available", "DistAutogradContext"]

_NO_INIT = "Need to initialize distributed autograd using torch.distributed.autograd.init()"
_NO_CONTEXT = ("Current thread doesn't have a valid autograd context. Please wrap your code using: "
               "`with torch.distributed.autograd.context() as context_id` to generate a valid context")

_tls = threading.local()          # .context_id: the current thread's context (None outside)
_lock = threading.Lock()
_contexts = {}                    # context id -> DistAutogradContext, on this worker
_next_id = [None]                 # itertools.count of this worker's ids, set by init_rpc


def is_available():
    return True


def _init(worker_id):
    """Ids are (worker id << 48) + n, so contexts made on different workers never collide."""
    _next_id[0] = itertools.count(worker_id << 48)
    _contexts.clear()


def _agent():
    from cthtorch.distributed import rpc
    if rpc._agent is None or _next_id[0] is None:
        raise RuntimeError(_NO_INIT)
    return rpc._agent


class DistAutogradContext:
    """What one worker knows of one distributed backward pass."""

    def __init__(self, context_id):
        self._id = context_id
        self._lock = threading.Lock()
        self._sends = {}      # send number -> list of the tensors sent (their graphs stay alive)
        self._recvs = {}      # id(leaf) -> (leaf, sender id, send number, position)
        self._grads = {}      # id(tensor) -> (tensor, accumulated gradient)
        self._workers = set()
        self._send_ids = itertools.count()

    def _context_id(self):
        return self._id

    def _send_functions(self):
        with self._lock:
            return dict(self._sends)

    def _recv_functions(self):
        with self._lock:
            return {k: v[0] for k, v in self._recvs.items()}

    def _known_worker_ids(self):
        with self._lock:
            return set(self._workers)

    def _record_send(self, tensors, dest):
        with self._lock:
            number = next(self._send_ids)
            self._sends[number] = tensors
            self._workers.add(dest)
            return number

    def _record_recv(self, leaf, sender, number, position):
        with self._lock:
            self._recvs[id(leaf)] = (leaf, sender, number, position)
            self._workers.add(sender)

    def _accumulate(self, tensor, grad):
        with self._lock:
            old = self._grads.get(id(tensor))
            self._grads[id(tensor)] = (tensor, grad if old is None else old[1] + grad)

    def __repr__(self):
        return "DistAutogradContext(%d)" % self._id


def _new_context():
    agent = _agent()
    with _lock:
        ctx = DistAutogradContext(next(_next_id[0]))
        _contexts[ctx._id] = ctx
    ctx._workers.discard(agent.me.id)
    return ctx


def _retrieve_context(context_id):
    if _next_id[0] is None:
        raise RuntimeError(_NO_INIT)
    with _lock:
        ctx = _contexts.get(context_id)
    if ctx is None:
        raise RuntimeError("Could not find autograd context with id: %d" % context_id)
    return ctx


def _is_valid_context(context_id):
    _retrieve_context(context_id)
    return True


def _context_for_message(context_id):
    """The receiver's side of a context it first hears of in a message: made on demand."""
    with _lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            ctx = _contexts[context_id] = DistAutogradContext(context_id)
        return ctx


def _current_context():
    if _next_id[0] is None:
        raise RuntimeError(_NO_INIT)
    cid = getattr(_tls, "context_id", None)
    if cid is None:
        raise RuntimeError(_NO_CONTEXT)
    return _retrieve_context(cid)


def _current_context_id():
    """The current thread's context id, or None (no context, or RPC not started)."""
    return getattr(_tls, "context_id", None)


def _release_context(context_id):
    """Drops this worker's context and asks the workers it reached to drop theirs."""
    with _lock:
        ctx = _contexts.pop(context_id, None)
    if ctx is None:
        return
    from cthtorch.distributed import rpc
    agent = rpc._agent
    if agent is None:
        return
    futs = [rpc.rpc_async(w, _release_context, args=(context_id,)) for w in ctx._known_worker_ids()
            if w != agent.me.id]
    for f in futs:
        f.wait()


class context:
    """`with context() as context_id:` wraps the forward and backward of one distributed pass."""

    def __enter__(self):
        self._ctx = _new_context()
        self._outer = getattr(_tls, "context_id", None)
        _tls.context_id = self._ctx._id
        return self._ctx._id

    def __exit__(self, *exc):
        _tls.context_id = self._outer
        _release_context(self._ctx._id)
        return False


def get_gradients(context_id):
    """{tensor: gradient} for this worker's leaves in that context."""
    ctx = _retrieve_context(context_id)
    with ctx._lock:
        return {t: g for t, g in ctx._grads.values()}


def _graph_leaves(roots):
    """The leaf tensors (requiring grad) that the roots' graphs reach, in a fixed order."""
    leaves, seen, stack = [], set(), []
    for r in roots:
        if r.grad_fn is None:
            if id(r) not in seen:
                seen.add(id(r))
                leaves.append(r)
        else:
            stack.append(r.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            if id(var) not in seen:
                seen.add(id(var))
                leaves.append(var)
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves


def _local_backward(ctx, roots, grads, retain_graph):
    """This worker's part: gradients to the context, recv leaves' gradients to their senders."""
    import cthtorch
    from cthtorch.distributed import rpc
    leaves = _graph_leaves(roots)
    if not leaves:
        return
    got = cthtorch.autograd.grad(roots, leaves, grads, retain_graph=retain_graph, allow_unused=True)
    outgoing, reached = {}, set()
    for leaf, g in zip(leaves, got):
        if g is None:
            continue
        rec = ctx._recvs.get(id(leaf))
        if rec is not None and rec[0] is leaf:
            outgoing.setdefault((rec[1], rec[2]), {})[rec[3]] = g
        else:
            ctx._accumulate(leaf, g)
            reached.add(id(leaf))
    if reached:   # DistributedDataParallel's parameters among them: averaged across its group
        from cthtorch.distributed import _reducer
        for reducer in list(_reducer._live):
            reducer._dist_autograd_backward(ctx, reached)
    futs = [rpc.rpc_async(sender, _backward_from_send, args=(ctx._id, number, gs))
            for (sender, number), gs in outgoing.items()]
    for f in futs:
        f.wait()


def _backward_from_send(context_id, number, grads):
    """Runs on the worker that sent tensors `number`: their gradients have come back."""
    ctx = _retrieve_context(context_id)
    with ctx._lock:
        sent = ctx._sends[number]
    positions = sorted(grads)
    _local_backward(ctx, [sent[i] for i in positions], [grads[i] for i in positions], True)


def backward(context_id, roots, retain_graph=False):
    """Runs the distributed backward pass from scalar roots (gradient 1) in that context."""
    ctx = _retrieve_context(context_id)
    import cthtorch
    roots = list(roots)
    for r in roots:
        if not r.requires_grad:
            raise RuntimeError("requires_grad not set on root")
        if r.numel() != 1:
            raise RuntimeError(" is not a scalar, all roots need to be scalar")
        if r.grad_fn is None and ctx._recvs.get(id(r), (None,))[0] is not r:   # torch's recv has a grad_fn
            raise RuntimeError(" does not have a valid gradient function.")
    _local_backward(ctx, roots, [cthtorch.ones_like(r) for r in roots], retain_graph)
