"""DDP's reducer: gradient buckets and their all-reduces, driven by the
autograd engine.

Parameters are packed, in reverse order (the order backward produces their
gradients), into flat buckets of at most bucket_cap bytes, one dtype per
bucket. Each parameter has a post-accumulate-grad hook: when it fires, the
gradient is copied into its bucket slot, and once a bucket's last gradient is
in, its all-reduce is launched (async_op=True) while backward goes on. Buckets
are launched strictly in index order, because every rank must issue the
collectives in the same order. When the last bucket is launched, a callback
queued on the engine (queue_callback) waits for them all at the end of the
backward pass and writes the averaged gradients back into .grad. The last
bucket's all-reduce (by default, in node shared memory) runs in that
callback, on the thread of backward: nothing is left to overlap it, and the
communication thread would cost two thread switches (see _run_here). With 2
ranks it is reduced split (_split_last): each rank copies in only the half of
its gradients the peer sums and sums the other half into both ranks' buckets;
that bucket's gradients then are views of it, as with gradient_as_bucket_view.

With find_unused_parameters the parameters that the forward's output does not
reach are marked ready with zeros at the first hook, and a map of the locally
used parameters is summed over the ranks; a parameter no rank used keeps its
.grad. With static_graph the first iteration counts how often each hook
fires and reduces everything at the end of that backward; later iterations
know the counts and the unused set, and overlap as usual.
"""
import functools
import time
import weakref

import cthtorch
from cthtorch.distributed import _shm_allreduce
from cthtorch.distributed import distributed_c10d as c10d

__all__ = ["GradBucket", "Reducer"]

_live = weakref.WeakSet()   # every Reducer, for distributed autograd's backward (which never touches .grad)

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_NODE_DTYPES = (cthtorch.float32, cthtorch.float64)   # bucket dtypes the same-node all-reduce takes in place

UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs participate "
    "in calculating loss. \nIf you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` function. Please include "
    "the loss function and the structure of the return value of `forward` of your module when reporting this "
    "issue (e.g. list, dict, iterable).\nParameter indices which did not receive grad for rank %d: %s")

READY_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of "
    "a module parameter outside the `forward` function. Please make sure model parameters are not shared across "
    "multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module "
    "graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For "
    "example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in "
    "the same set of parameters been used by different reentrant backward passes multiple times, and hence marking "
    "a variable ready multiple times. DDP does not support such use cases in default. You can try to use "
    "_set_static_graph() as a workaround if your module graph does not change over iterations.\n"
    "Parameter at index %d has been marked as ready twice. This means that multiple autograd engine  hooks have "
    "fired for this particular parameter during this iteration.")


class GradBucket:
    """What a communication hook receives: one bucket's flat gradient buffer
    (averaging is the hook's business) and the parameters packed in it."""

    def __init__(self, index, buffer, offsets, params, is_last):
        self._index, self._buffer, self._offsets, self._params = index, buffer, offsets, params
        self._is_last = is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return [self._buffer.narrow(0, o, p.numel()).view(p.shape) for o, p in zip(self._offsets, self._params)]

    def parameters(self):
        return list(self._params)

    def is_last(self):
        return self._is_last

    def set_buffer(self, buffer):
        self._buffer = buffer


GradBucket.__module__ = "torch.distributed"


class _Bucket:
    def __init__(self, index, param_indices, params, memory=None):
        self.index = index
        self.param_indices = param_indices
        self.offsets, n = [], 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.node = memory is not None
        if self.node:   # node shared memory (zeroed), where the all-reduce works in place
            self.buffer = memory.view(params[0].dtype)   # a uint8 tensor over the window
        else:
            self.buffer = cthtorch.zeros(n, dtype=params[0].dtype, device=params[0].device)
        self.views = [self.buffer.narrow(0, o, p.numel()).view(p.shape) for o, p in zip(self.offsets, params)]
        self.pending = 0
        self.work = None     # the default all-reduce's Work, or a comm hook's Future
        self.deferred = False   # ready, its all-reduce left to the end of backward (Reducer._run_deferred)
        self.copied_out = False   # its averages went to .grad already (Reducer._run_comm_hook)
        # this backward's split all-reduce (Reducer._split_last): (offset, flat source) of the values this rank
        # sums itself, not copied in; None when the bucket is reduced as a whole
        self.own = None


def compute_bucket_assignment(params, cap_bytes, first_cap_bytes, owners=None):
    """Buckets of parameter indices, in the order their gradients arrive.

    Small buckets at both ends, as torch's two assignments have them (its
    first one, in definition order, gives the first-defined parameters a small
    bucket; its rebuilt one, in arrival order, gives the first-arriving ones a
    small bucket):
    - the last bucket holds the first-defined parameters, up to first_cap
      bytes, completed to a whole module when owners (a module key per
      parameter) are given: their gradients exist only at the very end of
      backward (one backward node makes all of a module's), so they must not
      hold back a larger bucket;
    - the rest fill in reverse parameter order (the order backward produces
      them): the first bucket closes once it holds first_cap bytes, later ones
      once they hold cap bytes.
    A bucket holds one dtype and device only."""
    tail = []
    if first_cap_bytes < cap_bytes and len(params) > 1:
        key0, n = (params[0].dtype, str(params[0].device)), 0
        for i, p in enumerate(params):
            same_module = owners is not None and tail and owners[i] == owners[tail[-1]]
            if (n >= first_cap_bytes and not same_module) or (p.dtype, str(p.device)) != key0:
                break
            tail.append(i)
            n += p.numel() * p.element_size()
        if len(tail) == len(params):
            tail = []   # everything in one bucket anyway
    buckets, open_ = [], {}
    limit_of = {}
    for i in reversed(range(len(tail), len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        cur = open_.setdefault(key, [[], 0])
        cur[0].append(i)
        cur[1] += p.numel() * p.element_size()
        limit = limit_of.setdefault(key, first_cap_bytes)
        if cur[1] >= limit:
            buckets.append(cur[0])
            del open_[key]
            limit_of[key] = cap_bytes
    buckets += [c[0] for c in open_.values()]
    # the order the gradients arrive: the bucket holding the last parameter first
    buckets.sort(key=lambda b: -b[0])
    if tail:
        buckets.append(tail[::-1])
    return buckets


def _autograd_hook(reducer_ref, index, param):
    reducer = reducer_ref()
    if reducer is not None:
        reducer._autograd_hook(index)


class Reducer:
    def __init__(self, params, process_group, bucket_cap_bytes, first_bucket_bytes, find_unused_parameters=False,
                 gradient_as_bucket_view=False, owners=None):
        self.params = list(params)
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        assignment = compute_bucket_assignment(self.params, bucket_cap_bytes, first_bucket_bytes, owners)
        memory = self._node_memory(assignment)
        self._node_buckets = any(m is not None for m in memory)
        self._release_pending = False   # node buckets reduced into .grad: wait till the peers have read them
        self.buckets = [_Bucket(k, idx, [self.params[i] for i in idx], memory[k]) for k, idx in enumerate(assignment)]
        self.slot = {}   # parameter index -> (bucket, position in the bucket)
        for b in self.buckets:
            for pos, i in enumerate(b.param_indices):
                self.slot[i] = (b, pos)
        self.comm_hook = None
        self.static_graph = False
        self._static_counts = None   # static graph: hooks per parameter, counted in the first iteration
        self._static_unused = None   # static graph: indices the first iteration found unused locally
        self._static_global_unused = None
        self.local_used = [False] * len(self.params)
        self.expect_hooks = False
        self.require_finalize = False
        self.div_factor = None
        self._forward_work = None    # Join: the all-reduce that counts the ranks still training
        self.timing = None           # set to a dict to record when backward and the all-reduces end
        self._join_enabled = False   # inside an enabled Join context (DDP's forward says)
        self.split_last = True       # False: the last bucket as the others (bench_ddp.py compares)
        self._ctx = None             # a distributed autograd context while its backward is reduced
        _live.add(self)
        ref = weakref.ref(self)
        self._hook_handles = [p.register_post_accumulate_grad_hook(functools.partial(_autograd_hook, ref, i))
                              for i, p in enumerate(self.params) if p.requires_grad]

    def _node_memory(self, assignment):
        """Per bucket, node shared memory for its buffer (or None): CPU float
        buckets large enough for the same-node all-reduce, which then reduces
        them in place instead of copying them in and out."""
        from cthtorch.distributed import _shm_allreduce
        none = [None] * len(assignment)
        want = []
        for k, idx in enumerate(assignment):
            p = self.params[idx[0]]
            nbytes = sum(self.params[i].numel() for i in idx) * p.element_size()
            if p.device.type == "cpu" and p.dtype in _NODE_DTYPES and nbytes >= _shm_allreduce.MIN_BYTES:
                want.append((k, nbytes))
        if not want:
            return none
        pg = c10d._group(self.process_group)
        arrays = pg._node_buffers([nbytes for _, nbytes in want])
        if arrays is None:
            return none
        for (k, _), a in zip(want, arrays):
            none[k] = a
        return none

    def _world(self):
        return c10d.get_world_size(self.process_group)

    def _rank(self):
        return c10d.get_rank(self.process_group)

    def remove_hooks(self):
        for h in self._hook_handles:
            h.remove()
        self._hook_handles = []

    # ---- iteration bookkeeping ----
    def prepare_for_forward(self):
        if self.require_finalize:
            missing = [i for i in range(len(self.params)) if i not in self.ready]
            raise RuntimeError(UNFINISHED_REDUCTION % (self._rank(), " ".join(map(str, missing))))

    def prepare_for_backward(self, outputs):
        """Called after a forward that will be followed by a synced backward;
        outputs are the forward's tensors (for find_unused_parameters)."""
        self._wait_release()
        self.expect_hooks = True
        self.require_finalize = True
        self.ready = set()
        self.hook_counts = [0] * len(self.params)
        self.next_bucket = 0
        self.unused_marked = False
        self.finalize_queued = False
        for b in self.buckets:
            b.pending, b.work, b.copied_out, b.deferred, b.own = len(b.param_indices), None, False, False, None
        if self._split_last():
            self.buckets[-1].own = []
        if self.static_graph and self._static_counts is not None:
            self.unused = list(self._static_unused)
        elif self.find_unused_parameters or self.static_graph:
            self.unused = self._find_unused(outputs)
        else:
            self.unused = []
        if self.timing is not None:
            self.timing.clear()

    def _find_unused(self, outputs):
        """Parameters the autograd graph of outputs does not reach."""
        seen, stack, reached = set(), [], set()
        for t in outputs:
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                reached.add(id(t))
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if var is not None:
                reached.add(id(var))
            stack.extend(nxt for nxt, _ in fn.next_functions)
        return [i for i, p in enumerate(self.params) if id(p) not in reached]

    # ---- the hooks ----
    def _autograd_hook(self, index):
        self.local_used[index] = True
        if not self.expect_hooks:
            return   # no_sync(), or a backward DDP's forward did not prepare
        if self.timing is not None:
            self.timing["last_hook"] = time.perf_counter()
            self.timing["last_hook_cpu"] = time.thread_time()
        self.hook_counts[index] += 1
        engine = cthtorch.autograd.Variable._execution_engine
        if self.static_graph and self._static_counts is None:
            # first static-graph iteration: count the hooks; reduce everything at the end
            if not self.finalize_queued:
                self.finalize_queued = True
                engine.queue_callback(self._delayed_all_reduce)
            return
        if not self.unused_marked:
            self.unused_marked = True
            for i in self.unused:
                self._mark_ready(i)
        if self.static_graph and self.hook_counts[index] < self._static_counts[index]:
            return   # the parameter's gradient is not complete yet
        if index in self.ready:
            raise RuntimeError(READY_TWICE % index)
        self._mark_ready(index)

    def _mark_ready(self, index):
        self.ready.add(index)
        b, pos = self.slot[index]
        p, view = self.params[index], b.views[pos]
        g = p.grad if self._ctx is None else self._ctx_grads.get(index)
        # the default reduction averages: each gradient is divided on its way
        # into the bucket (no pass over the whole bucket after its last one)
        div = self._divisor() if self.comm_hook is None else 1
        with cthtorch.no_grad():
            if b.own is not None:
                self._copy_in_split(b, pos, g, div)
            elif g is None:
                view.zero_()
            elif g.data_ptr() == view.data_ptr() and g.shape == view.shape:
                if div != 1:
                    view.div_(div)
            else:
                if div != 1:
                    cthtorch.div(g, div, out=view)
                else:
                    view.copy_(g)
                if self.gradient_as_bucket_view and self._ctx is None:
                    p.grad = view
        if self.timing is not None:
            self.timing["copied"] = time.perf_counter()
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready_buckets()

    def _split_last(self):
        """Whether this backward's last bucket is all-reduced split
        (NodeReducer.allreduce_split): by default (the averaging all-reduce,
        no hook, no unused-parameter search, no Join), when it lives in node
        shared memory and there are 2 ranks. Its gradients then become views
        of it, as with gradient_as_bucket_view: the sum lands in both ranks'
        buckets, so nothing is copied out, and only the peer's half of each
        rank's gradient is copied in. Only the last bucket: the others'
        all-reduces overlap backward anyway, and their .grad stays as
        torch's default has it (a tensor of its own). Depends on the
        configuration only, so every rank decides alike."""
        b = self.buckets[-1]
        return (self.split_last and b.node and self.comm_hook is None and self._world() == 2 and self._ctx is None
                and not (self.find_unused_parameters or self.static_graph or self._join_enabled))

    def _copy_in_split(self, b, pos, g, div):
        """The last bucket's split all-reduce: copies (divided) the part of
        gradient g that the peer sums into the bucket, and keeps the rest's
        source for this rank's own sum (a missing gradient: zeros)."""
        view, o = b.views[pos], b.offsets[pos]
        if g is None:
            view.zero_()
            b.own.append((o, view.view(-1)))
            return
        src = g.reshape(-1)
        lo, hi = _shm_allreduce.split_part(b.buffer.numel(), 2, 1 - self._rank())
        a, c = max(o, lo), min(o + view.numel(), hi)
        if a < c:
            cthtorch.div(src[a - o:c - o], div, out=b.buffer[a:c])
        b.own.append((o, src))

    def _launch_ready_buckets(self):
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            if self.timing is not None:
                self.timing["launch_%d" % b.index] = time.perf_counter()
            if b.index == len(self.buckets) - 1 and self._run_here(b):
                b.deferred = True
            else:
                b.work = self._run_comm_hook(self._grad_bucket(b))
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets) and not self.finalize_queued:
            self.finalize_queued = True
            self._release_later()
            if self.find_unused_parameters or (self.static_graph and self._static_global_unused is None):
                self._used_map = cthtorch.tensor([1 if u else 0 for u in self.local_used], dtype=cthtorch.int32)
                self._used_work = c10d.all_reduce(self._used_map, group=self.process_group, async_op=True)
            else:
                self._used_work = None
            if self.timing is not None:
                self.timing["last_launch"] = time.perf_counter()
            if self._ctx is None:   # distributed autograd finalizes itself (_dist_autograd_backward)
                cthtorch.autograd.Variable._execution_engine.queue_callback(self._finalize_backward)

    def _grad_bucket(self, b):
        return GradBucket(b.index, b.buffer, b.offsets, [self.params[i] for i in b.param_indices],
                          b.index == len(self.buckets) - 1)

    def _run_here(self, b):
        """Whether bucket b's all-reduce is left to the engine's callback at
        the end of backward, which then runs it itself (c10d._all_reduce's
        here): the last bucket, by default, when it lives in node shared
        memory. Launched on the communication thread it would wait for that
        thread to wake, then wake this one (a time slice each on a busy
        machine), and nothing but the end of backward is left to overlap."""
        return b.node and self.comm_hook is None and (self._early_copy_out() or b.own is not None)

    def _run_deferred(self):
        """The end of backward: the deferred last bucket's all-reduce, on
        this thread."""
        b = self.buckets[-1]
        if b.deferred:
            b.deferred = False
            b.work = self._run_comm_hook(self._grad_bucket(b), here=True)

    def _divisor(self):
        if self.div_factor is None and self._forward_work is not None:
            work, ones = self._forward_work
            work.wait()   # the number of ranks that have not joined yet
            self.div_factor = int(ones.item())
        return self.div_factor or self._world()

    def _run_comm_hook(self, bucket, here=False):
        """The bucket's communication: the registered hook's Future, or the
        default averaging all-reduce's Work. By default the averages go
        straight to the .grad its hooks saw (c10d._all_reduce's outs), as
        each all-reduce ends, so the end of backward copies nothing. here:
        run it on this thread (see _run_here)."""
        if self.comm_hook is not None:
            hook, state = self.comm_hook
            fut = hook(state, bucket)
            if not isinstance(fut, cthtorch.futures.Future):
                raise RuntimeError("Communication hook: the hook must return a torch.futures.Future")
            return fut
        b = self.buckets[bucket.index()]
        if bucket.buffer() is not b.buffer:   # Join's shadow of it (zeros)
            return c10d._all_reduce(bucket.buffer(), group=self.process_group, async_op=True)
        outs = self._grad_outs(b) if self._early_copy_out() and b.own is None else None
        split = (b.own, 1.0 / self._divisor()) if b.own is not None else None
        timing, k = self.timing, bucket.index()
        pg = c10d._group(self.process_group)

        def before():
            timing["start_%d" % k] = time.perf_counter()

        def after():
            b.copied_out = outs is not None
            if timing is not None:
                timing["done_%d" % k] = time.perf_counter()
                timing["done_cpu_%d" % k] = time.thread_time()   # this thread's CPU time (bench_ddp.py)
                node = pg._node_reducer
                if node is not None and node.agreed_at is not None:
                    timing["agreed_%d" % k] = node.agreed_at
        return c10d._all_reduce(b.buffer, group=self.process_group, async_op=True, after=after, outs=outs,
                                before=before if timing is not None else None, here=here, split=split)

    def _grad_outs(self, b):
        """(offset, .grad) per parameter of bucket b, where its averages go;
        None when a .grad is missing or of another shape (then
        _finalize_backward writes them)."""
        outs = []
        for pos, i in enumerate(b.param_indices):
            g = self.params[i].grad
            if g is None or g.shape != b.views[pos].shape or g.dtype != b.buffer.dtype:
                return None
            outs.append((b.offsets[pos], g))
        return outs

    def _release_needed(self):
        # the same on every rank: it depends on the configuration only
        return self._node_buckets and self.comm_hook is None and self._early_copy_out()

    def _release_later(self):
        """After the buckets' all-reduces into .grad: the peers may still read
        this rank's node buckets; the next backward waits until they have
        (NodeReducer.wait_released) before it writes them again."""
        if self._release_needed():
            self._release_pending = True

    def _wait_release(self):
        if self._release_pending:
            self._release_pending = False
            c10d._group(self.process_group)._node_wait_released()

    def _shadow_all_reduces(self):
        """Join: a joined rank's matching all-reduces (zeros) for one backward
        of the ranks still training (their buckets are free to write once the
        peers have read them: _wait_release)."""
        self._wait_release()
        works = [self._run_comm_hook(b) for b in self._get_zeros_like_grad_buckets()]
        self._release_later()
        for w in works:
            w.wait()

    def _early_copy_out(self):
        """Whether a bucket's averages go to .grad by its all-reduce, as it
        ends (so the end of backward copies nothing): not when .grad is the bucket itself, nor when
        which parameters to skip (globally unused) is only known at the
        end, nor inside a distributed autograd context (which never touches .grad)."""
        return not (self.gradient_as_bucket_view or self.find_unused_parameters or self.static_graph
                    or self._ctx is not None)

    def _delayed_all_reduce(self):
        """End of the first static-graph backward: the hook counts are known;
        mark every parameter ready, which launches all buckets."""
        self._static_counts = list(self.hook_counts)
        self._static_unused = [i for i, n in enumerate(self._static_counts) if n == 0]
        self.finalize_queued = False
        self.unused_marked = True
        for i in range(len(self.params)):
            self._mark_ready(i)

    def _finalize_backward(self):
        if self.timing is not None:
            self.timing["finalize"] = time.perf_counter()
        self._run_deferred()
        results = []
        for b in self.buckets:
            if isinstance(b.work, cthtorch.futures.Future):
                value = b.work.wait()
                if isinstance(value, (list, tuple)):
                    value = value[0]
                if not isinstance(value, cthtorch.Tensor) or value.shape != b.buffer.shape:
                    raise RuntimeError("Communication hook: the Future must hold a single tensor of the bucket's "
                                       "shape %s" % (tuple(b.buffer.shape),))
                results.append(value)
            else:
                b.work.wait()
                results.append(b.buffer)
        if self._used_work is not None:
            self._used_work.wait()
            globally_unused = {i for i, n in enumerate(self._used_map.tolist()) if n == 0}
            if self.static_graph:
                self._static_global_unused = globally_unused
        else:
            globally_unused = self._static_global_unused or set()
        if self.timing is not None:
            self.timing["reduced"] = time.perf_counter()
        with cthtorch.no_grad():
            for b, value in zip(self.buckets, results):
                if value.data_ptr() != b.buffer.data_ptr():
                    b.buffer.copy_(value)
                if b.copied_out:
                    continue
                for pos, i in enumerate(b.param_indices):
                    if i in globally_unused:
                        continue
                    p, view = self.params[i], b.views[pos]
                    if self._ctx is not None:   # the context's gradient, never .grad; buckets are reused
                        with self._ctx._lock:
                            self._ctx._grads[id(p)] = (p, view.clone())
                    elif self.gradient_as_bucket_view or b.own is not None:
                        if p.grad is not view:
                            p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad.copy_(view)
        self.local_used = [False] * len(self.params)
        self.expect_hooks = False
        self.require_finalize = False
        self.div_factor = None
        self._forward_work = None

    def _dist_autograd_backward(self, ctx, reached):
        """torch.distributed.autograd.backward ran this worker's graph: the
        gradients are in context ctx, not .grad, and no post-accumulate hook
        fired. As torch's reducer does inside a context, reduce them as
        usual and write the averages back into the context (what
        DistributedOptimizer steps with). reached: ids of the leaves that
        backward produced gradients for. The buckets launch once every
        gradient is known, so nothing overlaps here."""
        if not self.expect_hooks or not any(id(p) in reached for p in self.params):
            return
        with ctx._lock:
            grads = {i: ctx._grads[id(p)][1] for i, p in enumerate(self.params) if id(p) in ctx._grads}
        self._ctx, self._ctx_grads = ctx, grads
        for b in self.buckets:
            b.own = None   # the context's gradients are reduced as a whole
        try:
            self.unused_marked = True
            for i in self.unused:
                if i not in self.ready:
                    self._mark_ready(i)
            for i in sorted(grads, reverse=True):   # the order backward makes them ready in
                self.local_used[i] = True
                if i not in self.ready:
                    self._mark_ready(i)
            if self.finalize_queued:
                self._finalize_backward()
        finally:
            self._ctx, self._ctx_grads = None, None

    # ---- Join: shadowing a joined rank's backward ----
    def _set_forward_pass_work_handle(self, work, divide_by_initial_world_size):
        self.div_factor = None
        self._forward_work = None if divide_by_initial_world_size else (work, work._ones)

    def _get_zeros_like_grad_buckets(self):
        return [GradBucket(b.index, cthtorch.zeros_like(b.buffer), b.offsets,
                           [self.params[i] for i in b.param_indices], b.index == len(self.buckets) - 1)
                for b in self.buckets]

    def _get_local_used_map(self):
        return cthtorch.tensor([1 if u else 0 for u in self.local_used], dtype=cthtorch.int32)


def broadcast_coalesced(tensors, src, group=None):
    """Broadcasts tensors from group rank src in one message per dtype (a flat
    copy of them all), then writes the received values back in place."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault((t.dtype, str(t.device)), []).append(t)
    src_global = c10d.get_global_rank(group, src) if group not in (None, c10d.group.WORLD) else src
    with cthtorch.no_grad():
        for ts in by_dtype.values():
            flat = cthtorch.cat([t.reshape(-1) for t in ts])
            c10d.broadcast(flat, src_global, group=group)
            if c10d.get_rank(group) == src:
                continue
            n = 0
            for t in ts:
                t.copy_(flat.narrow(0, n, t.numel()).view(t.shape))
                n += t.numel()


def verify_params_across_processes(group, tensors):
    """Every rank holds the same number of parameters with the same shapes
    (DDP averages them slot by slot)."""
    sig = 0
    for i, t in enumerate(tensors):
        sig = (sig * 1000003 + hash((i, tuple(t.shape)))) % (1 << 61)
    mine = cthtorch.tensor([len(tensors), sig], dtype=cthtorch.int64)
    world = c10d.get_world_size(group)
    gathered = [cthtorch.zeros(2, dtype=cthtorch.int64) for _ in range(world)]
    c10d.all_gather(gathered, mine, group=group)
    me = c10d.get_rank(group)
    for r, g in enumerate(gathered):
        n, s = g.tolist()
        if n != len(tensors):
            raise RuntimeError("DDP expects same model across all ranks, but Rank %d has %d params, while rank %d "
                               "has inconsistent %d params." % (me, len(tensors), r, n))
        if s != sig:
            raise RuntimeError("DDP expects same model across all ranks, but the parameter shapes of Rank %d do not "
                               "match those of rank %d." % (me, r))
