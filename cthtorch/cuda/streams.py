"""torch.cuda.Stream / Event over libTHC's streams and events.

Handles are the raw cudaStream_t / cudaEvent_t values as integers (what
torch's Stream.cuda_stream gives); 0 is the legacy default stream. Objects
that created their handle destroy it when collected; the wrappers returned by
current_stream()/default_stream() only borrow theirs."""
from .. import _C


def _dev_index(device):
    from . import _index   # device argument -> index (None: the current device)
    return _index(device)


class Stream:
    """A CUDA stream: kernels queued on it run in order, and concurrently with other streams'.
    Lower priority numbers run first (torch: -1 high, 0 default)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        from . import _lazy_init, device as _device_ctx
        _lazy_init()
        self = super().__new__(cls)
        self.device_index = _dev_index(device)
        self.priority = int(priority)
        self._owned = False
        if "stream_ptr" in kwargs:     # torch.cuda.ExternalStream / borrowed handles
            self.cuda_stream = int(kwargs["stream_ptr"])
        else:
            with _device_ctx(self.device_index):
                self.cuda_stream = _C._cuda._stream_create(self.priority)
            self._owned = True
        return self

    def __init__(self, device=None, priority=0, **kwargs):
        pass

    @classmethod
    def _borrow(cls, handle, device_index):
        return cls(device_index, stream_ptr=handle)

    @property
    def device(self):
        import cthtorch
        return cthtorch.device("cuda", self.device_index)

    def query(self):
        """True when all work queued on the stream has finished."""
        return _C._cuda._stream_query(self.cuda_stream)

    def synchronize(self):
        _C._cuda._stream_synchronize(self.cuda_stream)

    def wait_event(self, event):
        """Work queued on this stream later waits for `event` (the host does not)."""
        _C._cuda._stream_wait_event(self.cuda_stream, event.cuda_event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return "<torch.cuda.Stream device=cuda:%d cuda_stream=%#x>" % (self.device_index, self.cuda_stream)

    def __del__(self):
        if getattr(self, "_owned", False) and self.cuda_stream:
            try:
                _C._cuda._stream_destroy(self.cuda_stream)
            except Exception:   # interpreter shutdown, or a sticky CUDA error already reported
                pass


class ExternalStream(Stream):
    def __new__(cls, stream_ptr, device=None, **kwargs):
        return super().__new__(cls, device, stream_ptr=stream_ptr)


class Event:
    """A CUDA event: a marker in a stream, for synchronisation and timing
    (elapsed_time needs enable_timing=True on both events)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        from . import _lazy_init
        _lazy_init()
        if interprocess:
            raise NotImplementedError("cthtorch.cuda.Event: interprocess events are not supported")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.cuda_event = _C._cuda._event_create(bool(enable_timing), bool(blocking))
        self._recorded = False

    def record(self, stream=None):
        from . import current_stream
        if stream is None:
            stream = current_stream()
        _C._cuda._event_record(self.cuda_event, stream.cuda_stream)
        self._recorded = True

    def wait(self, stream=None):
        from . import current_stream
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self):
        return _C._cuda._event_query(self.cuda_event)

    def synchronize(self):
        _C._cuda._event_synchronize(self.cuda_event)

    def elapsed_time(self, end_event):
        """Milliseconds between this event and end_event (both recorded and completed)."""
        return _C._cuda._event_elapsed(self.cuda_event, end_event.cuda_event)

    def __repr__(self):
        return "<torch.cuda.Event %#x>" % self.cuda_event

    def __del__(self):
        if getattr(self, "cuda_event", None):
            try:
                _C._cuda._event_destroy(self.cuda_event)
            except Exception:
                pass
